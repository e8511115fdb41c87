"""Reference rows for bench/gpu-prefill.sh: torch's
F.scaled_dot_product_attention on the prefill shapes of kernels/gpu's
prefillTimingCases (causal, bottom-right aligned: a chunk's queries come after
its prefix; GQA through enable_gqa), timed as moecast's kernel is: K and V
rotated over copies that total at least 256 MiB, calls captured in a CUDA
graph, median of 15 replays. Each SDPA backend (flash, cuDNN, efficient) is
timed where it takes the shape; the row keeps every backend's time. Sliding
window shapes are left out (SDPA has no window but a dense mask). Writes JSON
lines to stdout."""

import json
import math

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

# Keep in step with kernels/gpu/prefill_device_test.go prefillTimingCases.
HEADS = [("gqa d128 64/8", 64, 8, 128, 128), ("gqa d128 8/1", 8, 1, 128, 128), ("gqa d64 64/8", 64, 8, 64, 64),
         ("mla 16", 16, 16, 192, 128), ("mla 128", 128, 128, 192, 128)]
SHAPES = [(256, 0), (1024, 0), (4096, 0), (16384, 0), (1024, 8192), (4096, 32768), (2048, 131072)]
ROTATE = 256 << 20
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]


def time_graph(fns, budget_s=0.005):
    for f in fns:
        f()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for f in fns:
        f()
    e1.record()
    torch.cuda.synchronize()
    one = e0.elapsed_time(e1) / 1e3 / len(fns)
    calls = max(len(fns), min(20, int(budget_s / max(one, 1e-7))))
    calls = len(fns) * max(1, math.ceil(calls / len(fns)))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for i in range(calls):
            fns[i % len(fns)]()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(15):
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) / 1e3 / calls)
    ts.sort()
    return ts[len(ts) // 2], calls


def pairs(chunk, prefix):
    return chunk * prefix + chunk * (chunk + 1) / 2


def main():
    torch.manual_seed(0)
    dev = "cuda"
    print(json.dumps({"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "cudnn": torch.backends.cudnn.version()}), flush=True)
    for name, h, kv, dqk, dv in HEADS:
        for chunk, prefix in SHAPES:
            n = chunk + prefix
            q = torch.randn(1, h, chunk, dqk, device=dev, dtype=torch.bfloat16)
            one = n * kv * (dqk + dv) * 2
            copies = max(1, math.ceil(ROTATE / one))
            if copies * one > 40 << 30:
                copies = 1
            ks = [torch.randn(1, kv, n, dqk, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
            vs = [torch.randn(1, kv, n, dv, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
            mask = causal_lower_right(chunk, n)
            row = {"name": name, "chunk": chunk, "prefix": prefix, "heads": h, "kv_heads": kv, "qk_dim": dqk, "v_dim": dv,
                   "copies": copies, "flops": 2 * pairs(chunk, prefix) * h * (dqk + dv)}
            for bname, be in BACKENDS:
                try:
                    with sdpa_kernel([be]):
                        fns = [lambda k=k, v=v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=kv != h)
                               for k, v in zip(ks, vs)]
                        t, calls = time_graph(fns)
                    row[bname + "_s"] = t
                except Exception as e:  # the backend does not take this shape
                    row[bname + "_error"] = str(e).splitlines()[0][:160] if str(e) else type(e).__name__
            ok = [row[b + "_s"] for b, _ in BACKENDS if b + "_s" in row]
            if ok:
                row["best_s"] = min(ok)
                row["best_tflops"] = row["flops"] / row["best_s"] / 1e12
            print(json.dumps(row), flush=True)
            del ks, vs, q
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
