#!/usr/bin/env python3
"""Prefill, mixed and decode step traces of a small Qwen3-MoE-shaped model in
plain PyTorch (issue 25): the fixtures of `moecast validate trace` and
`moecast calib from-trace` on prefill and mixed steps.

The model is the config.json given (tiny-moe_config.json beside this file:
Qwen3MoeForCausalLM, 8 layers, hidden 2048, 16 q / 4 kv heads of 128, 32
experts top-4, expert width 768), random bf16 weights. Each layer is what vLLM
runs for Qwen3-MoE, written with torch ops:

  rms_norm, qkv_proj (one GEMM), q/k rms_norm, rotary, KV-cache write (copy),
  attention (F.scaled_dot_product_attention: causal per prefill chunk, GQA
  decode as kv_heads x group queries against the cache), o_proj, residual,
  rms_norm, router gate GEMM, then inside record_function("moe_forward") (the
  scope vLLM's FusedMoE custom op vllm::moe_forward has): softmax, top-k,
  sort by expert, and a loop over the experts with one gate_up GEMM, SiLU-and-
  mul and one down GEMM each, weighting and index_add back.

Routing (ROUTING below). "uniform" (the default): each token's K experts are
drawn uniformly at random without replacement (seeded, made before the
profiled steps, no kernel in them), as a load-balanced trained router spreads
tokens; the router's softmax and top-k still run (their kernels are in the
trace) and give the weights, but the expert choice is the drawn one. "router":
the top-k of the random-weight router decides, as in the first run of
2026-12-02: its hidden states grow alike across a prefill's tokens in deeper
layers (causal attention averages the values), so a prefill's tokens reach
fewer experts the deeper the layer (32 down to 13 of 32) while a mixed or
decode step's reach all 32: a skew no trained router has and the cost
model's uniform routing does not assume.
  Last: final norm, lm_head on each sequence's last token, argmax.

Each step runs inside record_function with vLLM's detailed step annotation
(vllm/v1/worker/gpu_model_runner.py, detailed_trace_annotation):
  execute_{tokens}_context_{P}(sq..sk..sqsq..sqsk..)_generation_{D}(sq..sk..sqsq..sqsk..)
sq: query tokens summed, sk: keys (prefix + query) summed, sqsq: sum of sq^2,
sqsk: sum of sq*sk, over the requests of each kind.

Usage: python3 moe_trace.py CONFIG OUTDIR
Writes OUTDIR/<case>.json.gz (chrome trace, torch.profiler) and
OUTDIR/moe_trace_summary.json (per-step wall time by CUDA events, versions).
"""
import gzip
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

# case: name, prefill chunk lengths (prefix 0), decodes, decode context (keys
# each decode attends, its new token included)
CASES = [
    ("tinymoe_prefill_1024", [1024], 0, 0),
    ("tinymoe_prefill_2048", [2048], 0, 0),
    ("tinymoe_prefill_3072", [3072], 0, 0),
    ("tinymoe_prefill_4096", [4096], 0, 0),
    ("tinymoe_mixed_1536_d64", [1536], 64, 1024),
    ("tinymoe_mixed_2x768_d32", [768, 768], 32, 2048),
    ("tinymoe_mixed_1024_d128", [1024], 128, 2048),
    ("tinymoe_mixed_2560_d64", [2560], 64, 1024),
    ("tinymoe_decode_64", [], 64, 1024),
]
WARMUP = 3
PROFILED = 2
TRIM_OVER = 1_500_000  # gzip bytes above which cpu_op events are dropped
ROUTING = os.environ.get("MOE_TRACE_ROUTING", "uniform")  # uniform | router


def main():
    cfg = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    dev, dt = "cuda", torch.bfloat16
    H = cfg["hidden_size"]
    L = cfg["num_hidden_layers"]
    nh, nkv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    E, K, I = cfg["num_experts"], cfg["num_experts_per_tok"], cfg["moe_intermediate_size"]
    V, eps, theta = cfg["vocab_size"], cfg["rms_norm_eps"], cfg["rope_theta"]
    g = nh // nkv
    torch.manual_seed(0)

    def w(*s):
        return torch.randn(*s, device=dev, dtype=dt) * 0.02

    def ones(n):
        return torch.ones(n, device=dev, dtype=dt)

    layers = [dict(ln1=ones(H), qkv=w((nh + 2 * nkv) * hd, H), qn=ones(hd), kn=ones(hd),
                   o=w(H, nh * hd), ln2=ones(H), gate=w(E, H), gu=w(E, 2 * I, H), dn=w(E, H, I))
              for _ in range(L)]
    emb, lnf, head = w(V, H), ones(H), w(V, H)
    maxpos = 8192
    inv = 1.0 / (theta ** (torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd))
    ang = torch.outer(torch.arange(maxpos, device=dev, dtype=torch.float32), inv)
    cos_t, sin_t = ang.cos().to(dt), ang.sin().to(dt)

    def rope(x, pos):  # x [N, heads, hd]
        c, s = cos_t[pos].unsqueeze(1), sin_t[pos].unsqueeze(1)
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)

    def make_state(chunks, nd, ctx):
        st = dict(chunks=chunks, nd=nd, ctx=ctx)
        n = sum(chunks) + nd
        pos = [p for T in chunks for p in range(T)] + [ctx - 1] * nd
        st["ids"] = torch.randint(0, V, (n,), device=dev)
        st["pos"] = torch.tensor(pos, device=dev)
        last, off = [], 0
        for T in chunks:
            off += T
            last.append(off - 1)
        last += list(range(off, off + nd))
        st["last"] = torch.tensor(last, device=dev)
        st["kc"] = [torch.randn(nd, nkv, ctx, hd, device=dev, dtype=dt) for _ in range(L)] if nd else None
        st["vc"] = [torch.randn(nd, nkv, ctx, hd, device=dev, dtype=dt) for _ in range(L)] if nd else None
        st["pk"] = [torch.empty(sum(chunks), nkv, hd, device=dev, dtype=dt) for _ in range(L)]
        st["pv"] = [torch.empty(sum(chunks), nkv, hd, device=dev, dtype=dt) for _ in range(L)]
        # uniform routing: K distinct experts per token, uniformly drawn
        st["route"] = [torch.rand(n, E, device=dev).argsort(dim=-1)[:, :K].contiguous() for _ in range(L)]
        return st

    def moe(h, lw, logits, route):
        n = h.shape[0]
        with record_function("moe_forward"):
            probs = torch.softmax(logits.float(), dim=-1)
            topw, topi = probs.topk(K, dim=-1)
            if ROUTING == "uniform":
                topi = route
            topw = (topw / topw.sum(dim=-1, keepdim=True)).to(dt)
            flat = topi.flatten()
            order = torch.argsort(flat)
            counts = torch.bincount(flat, minlength=E).tolist()
            tok = order // K
            xs = h[tok]
            ys = torch.empty(n * K, H, device=dev, dtype=dt)
            start = 0
            for e in range(E):
                c = counts[e]
                if c == 0:
                    continue
                gu = F.linear(xs[start:start + c], lw["gu"][e])
                a = F.silu(gu[:, :I]) * gu[:, I:]
                torch.mm(a, lw["dn"][e].t(), out=ys[start:start + c])
                start += c
            ys.mul_(topw.flatten()[order].unsqueeze(1))
            return torch.zeros(n, H, device=dev, dtype=dt).index_add_(0, tok, ys)

    def forward(st):
        chunks, nd, ctx = st["chunks"], st["nd"], st["ctx"]
        pos = st["pos"]
        x = F.embedding(st["ids"], emb)
        n = x.shape[0]
        npre = sum(chunks)
        for li, lw in enumerate(layers):
            h = F.rms_norm(x, (H,), lw["ln1"], eps)
            qkv = F.linear(h, lw["qkv"])
            q, k, v = qkv.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
            q = F.rms_norm(q.view(n, nh, hd), (hd,), lw["qn"], eps)
            k = F.rms_norm(k.reshape(n, nkv, hd), (hd,), lw["kn"], eps)
            v = v.reshape(n, nkv, hd)
            q, k = rope(q, pos), rope(k, pos)
            att = torch.empty(n, nh, hd, device=dev, dtype=dt)
            if npre:
                st["pk"][li].copy_(k[:npre])
                st["pv"][li].copy_(v[:npre])
            off = 0
            for T in chunks:
                qi = q[off:off + T].transpose(0, 1).unsqueeze(0)
                ki = k[off:off + T].repeat_interleave(g, dim=1).transpose(0, 1).unsqueeze(0)
                vi = v[off:off + T].repeat_interleave(g, dim=1).transpose(0, 1).unsqueeze(0)
                o = F.scaled_dot_product_attention(qi, ki, vi, is_causal=True)
                att[off:off + T] = o[0].transpose(0, 1)
                off += T
            if nd:
                kc, vc = st["kc"][li], st["vc"][li]
                kc[:, :, ctx - 1] = k[npre:]
                vc[:, :, ctx - 1] = v[npre:]
                qd = q[npre:].view(nd, nkv, g, hd)
                o = F.scaled_dot_product_attention(qd, kc, vc)
                att[npre:] = o.reshape(nd, nh, hd)
            x = x + F.linear(att.view(n, nh * hd), lw["o"])
            h = F.rms_norm(x, (H,), lw["ln2"], eps)
            logits = F.linear(h, lw["gate"])
            x = x + moe(h, lw, logits, st["route"][li])
        x = F.rms_norm(x, (H,), lnf, eps)
        return torch.argmax(F.linear(x[st["last"]], head), dim=-1)

    def label(chunks, nd, ctx):
        sq = sum(chunks)
        sk = sum(chunks)  # prefix 0: keys = query tokens
        sqsq = sum(T * T for T in chunks)
        sqsk = sqsq
        dsk = nd * ctx
        return (f"execute_{sq + nd}_context_{len(chunks)}(sq{sq}sk{sk}sqsq{sqsq}sqsk{sqsk})"
                f"_generation_{nd}(sq{nd}sk{dsk}sqsq{nd}sqsk{dsk})")

    summary = dict(routing=ROUTING, torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                   gpu=torch.cuda.get_device_name(0), config=cfg, cases=[])
    print(summary["torch"], summary["gpu"], flush=True)
    # physical limits the floors are held against: device-to-device copy
    # bandwidth (bytes read + written) and a large bf16 GEMM
    src = torch.empty(2 * 1024 ** 3, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(10):
        dst.copy_(src)
    b.record()
    torch.cuda.synchronize()
    summary["copy_TBps"] = 2 * src.numel() * 10 / (a.elapsed_time(b) * 1e-3) / 1e12
    del src, dst
    m = torch.randn(8192, 8192, device=dev, dtype=dt)
    for _ in range(3):
        m @ m
    a.record()
    for _ in range(10):
        m @ m
    b.record()
    torch.cuda.synchronize()
    summary["gemm_bf16_TFLOPs"] = 2 * 8192 ** 3 * 10 / (a.elapsed_time(b) * 1e-3) / 1e12
    del m
    print("copy %.2f TB/s, bf16 GEMM %.0f TFLOP/s" % (summary["copy_TBps"], summary["gemm_bf16_TFLOPs"]), flush=True)
    for name, chunks, nd, ctx in CASES:
        t0 = time.time()
        st = make_state(chunks, nd, ctx)
        lab = label(chunks, nd, ctx)
        with torch.no_grad():
            for _ in range(WARMUP):
                forward(st)
            torch.cuda.synchronize()
            times = []
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(PROFILED):
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    with record_function(lab):
                        a.record()
                        forward(st)
                        b.record()
                    torch.cuda.synchronize()
                    times.append(a.elapsed_time(b))
        raw = os.path.join(out, name + ".json")
        prof.export_chrome_trace(raw)
        with open(raw) as f:
            doc = json.load(f)
        os.remove(raw)
        data = json.dumps(doc).encode()
        gz = gzip.compress(data, 9)
        trimmed = False
        if len(gz) > TRIM_OVER:
            doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in ("cpu_op", "python_function")]
            gz = gzip.compress(json.dumps(doc).encode(), 9)
            trimmed = True
        with open(os.path.join(out, name + ".json.gz"), "wb") as f:
            f.write(gz)
        kn = {}
        for e in doc["traceEvents"]:
            if e.get("cat") == "kernel":
                kn[e["name"]] = kn.get(e["name"], 0) + e.get("dur", 0)
        top = sorted(kn.items(), key=lambda x: -x[1])[:25]
        summary["cases"].append(dict(name=name, label=lab, chunks=chunks, decodes=nd, decode_keys=ctx,
                                     event_ms=times, gz_bytes=len(gz), trimmed=trimmed,
                                     top_kernels_us=top))
        print(f"{name}: {lab} event_ms={['%.3f' % t for t in times]} gz={len(gz)} trimmed={trimmed} "
              f"({time.time() - t0:.1f}s)", flush=True)
        for kname, us in top[:12]:
            print(f"   {us:10.1f} us  {kname[:150]}", flush=True)
        del st
        torch.cuda.empty_cache()
    with open(os.path.join(out, "moe_trace_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
