# torch's baselines for moecast's block-fp8 MoE grouped GEMMs (the moe_fp8
# op of calib gpu, kernels/gpu fp8moe.cu): the same expert shapes and
# splits, uniform top-8 routing, one GEMM per touched expert, all of a
# layer's experts captured in one CUDA graph, median of 15 replays.
#   bf16: torch.mm on bf16 weights (the block-fp8 weights dequantised: what
#         a bf16 path reads, 2x the bytes);
#   fp8:  torch._scaled_mm on e4m3 operands with 1x128 activation and
#         128x128 weight block scales, where this torch build has that
#         path on this GPU (checked against bf16 once; "fp8_error" if not).
# Prints one JSON line per case: name, stage, tokens, bf16_us, fp8_us.
import json, torch

torch.manual_seed(0)
dev = "cuda"

def timed(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(3):
        g.replay()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(15):
        e0.record(); g.replay(); e1.record(); e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3)
    return sorted(ts)[7]

def scaled(xq, sa, wq, sb):
    # xq [m, K] e4m3, sa [m, K/128] fp32 (1x128 blocks), wq [N, K] e4m3, sb [N/128, K/128]
    return torch._scaled_mm(xq, wq.t(), scale_a=sa.t().contiguous().t(), scale_b=sb.t(), out_dtype=torch.bfloat16)

fp8_ok, fp8_err = None, ""
def probe():
    global fp8_ok, fp8_err
    try:
        x = torch.randn(64, 512, device=dev)
        w = torch.randn(256, 512, device=dev)
        sa = x.abs().view(64, 4, 128).amax(-1) / 448
        xq = (x.view(64, 4, 128) / sa[..., None]).view(64, 512).to(torch.float8_e4m3fn)
        sb = w.abs().view(2, 128, 4, 128).amax(dim=(1, 3)) / 448
        wq = (w.view(2, 128, 4, 128) / sb[:, None, :, None]).view(256, 512).to(torch.float8_e4m3fn)
        y = scaled(xq, sa, wq, sb).float()
        ref = (xq.float().view(64, 4, 128) * sa[..., None]).view(64, 512) @ (wq.float().view(2, 128, 4, 128) * sb[:, None, :, None]).view(256, 512).t()
        err = ((y - ref).norm() / ref.norm()).item()
        fp8_ok = err < 1e-2
        fp8_err = f"probe rel error {err:.3g}"
    except Exception as e:
        fp8_ok, fp8_err = False, str(e).splitlines()[0][:200]
probe()
print(json.dumps({"fp8_path": bool(fp8_ok), "fp8_note": fp8_err, "torch": torch.__version__}), flush=True)
# Which row counts the blockwise path takes (run 1: every per-expert call
# failed with CUBLAS_STATUS_NOT_SUPPORTED while the 64-row probe passed).
ms = {}
for m in [1, 8, 16, 17, 32, 64, 100, 128]:
    try:
        xq = torch.randn(m, 512, device=dev).to(torch.float8_e4m3fn)
        sa = torch.rand(m, 4, device=dev) + 0.5
        wq = torch.randn(256, 512, device=dev).to(torch.float8_e4m3fn)
        sb = torch.rand(2, 4, device=dev) + 0.5
        scaled(xq, sa, wq, sb); torch.cuda.synchronize(); ms[m] = "ok"
    except Exception as e:
        ms[m] = str(e).splitlines()[0][:80]
print(json.dumps({"fp8_rows": ms}), flush=True)
PAD = 16 if ms.get(16) == "ok" else 128

models = [("deepseek-v3", 256, 7168, 2048, [(8, 1), (1, 8)]), ("qwen3-235b-a22b", 128, 4096, 1536, [(4, 1), (1, 8)]),
          ("glm-5", 256, 6144, 2048, [(8, 1), (1, 8)])]
for name, experts, H, I, splits in models:
    for tp, ep in splits:
        local = experts // ep
        inter = I // tp
        for stage, N, K in [("gate_up", 2 * inter, H), ("down", H, inter)]:
            W = torch.randn(local, N, K, device=dev, dtype=torch.bfloat16) * 0.02
            Wq = Ws = None
            if fp8_ok:
                Ws = torch.rand(local, N // 128, K // 128, device=dev) * 1e-3 + 1e-4
                Wq = torch.randn(local, N, K, device=dev).clamp(-400, 400).to(torch.float8_e4m3fn)
            for tokens in [1, 64, 1024, 4096, 16384]:
                ids = torch.rand(tokens, experts, device=dev).topk(8, dim=1).indices.flatten()
                counts = torch.bincount(ids, minlength=experts)[:local].tolist()
                rows = sum(counts)
                if rows == 0:
                    continue
                x = torch.randn(rows, K, device=dev, dtype=torch.bfloat16)
                y = torch.empty(rows, N, device=dev, dtype=torch.bfloat16)
                segs, r0 = [], 0
                for e, c in enumerate(counts):
                    if c:
                        segs.append((e, r0, r0 + c)); r0 += c
                def fn():
                    for e, a, b in segs:
                        torch.mm(x[a:b], W[e].t(), out=y[a:b])
                rec = {"name": f"{name} tp{tp} ep{ep}", "stage": stage, "tokens": tokens, "experts_touched": len(segs),
                       "bf16_us": round(timed(fn), 2)}
                if fp8_ok:
                    # each expert's rows padded to PAD (as moe_align pads them)
                    psegs, p0 = [], 0
                    for e, a, b in segs:
                        n = -(-(b - a) // PAD) * PAD
                        psegs.append((e, p0, p0 + n)); p0 += n
                    xq = torch.randn(p0, K, device=dev).to(torch.float8_e4m3fn)
                    sa = torch.rand(p0, K // 128, device=dev) + 0.5
                    yp = torch.empty(p0, N, device=dev, dtype=torch.bfloat16)
                    rec["fp8_rows_padded"] = p0
                    def fq():
                        for e, a, b in psegs:
                            yp[a:b] = scaled(xq[a:b], sa[a:b], Wq[e], Ws[e])
                    try:
                        rec["fp8_us"] = round(timed(fq), 2)
                    except Exception as ex:
                        rec["fp8_error"] = str(ex).splitlines()[0][:160]
                print(json.dumps(rec), flush=True)
            del W, Wq, Ws
            torch.cuda.empty_cache()
