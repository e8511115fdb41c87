"""Op-level measurements behind kernels' fixed costs and efficiencies.

Run on a GPU machine with PyTorch (graph-captured timing, as engines run
decode kernels):  python3 kernels/testdata/measure_h200.py OUT.json
Writes one JSON object; kernels/testdata/measure_h200.json is its output on
an H200 (2026-11-29).
"""
import json, sys, time
import torch
import torch.nn.functional as F

dev = "cuda"
out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
       "l2_bytes": torch.cuda.get_device_properties(0).L2_cache_size}


def kernels_per_call(fn):
    fn(); torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
        fn(); torch.cuda.synchronize()
    return sum(1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def graph_us(fn, inner=50, reps=15):
    """Median time per call of fn, replaying `inner` captured calls."""
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(inner): fn()
    for _ in range(3): g.replay()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(reps):
        a.record(); g.replay(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / inner)
    ts.sort()
    return ts[len(ts) // 2]


rows = []
tiny = torch.zeros(1, device=dev)
rows.append({"op": "add_ 1 element", "bytes": 8, "us": graph_us(lambda: tiny.add_(1)), "kernels": kernels_per_call(lambda: tiny.add_(1))})
for B in (1, 8, 64, 256, 1024):
    x = torch.randn(B, 7168, device=dev, dtype=torch.bfloat16)
    r = torch.randn_like(x); w = torch.ones(7168, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    f = lambda: torch.add(x, r, out=y)
    rows.append({"op": f"add [{B},7168] bf16", "bytes": 3 * B * 7168 * 2, "us": graph_us(f), "kernels": kernels_per_call(f)})
    f = lambda: F.rms_norm(x, (7168,), w, 1e-6)
    rows.append({"op": f"rms_norm [{B},7168] bf16", "bytes": 2 * B * 7168 * 2 + 7168 * 2, "us": graph_us(f), "kernels": kernels_per_call(f)})
    g2 = torch.randn(B, 2 * 2048, device=dev, dtype=torch.bfloat16)
    f = lambda: F.silu(g2[:, :2048]) * g2[:, 2048:]
    rows.append({"op": f"silu*mul [{B},2x2048] bf16", "bytes": 3 * B * 2048 * 2, "us": graph_us(f), "kernels": kernels_per_call(f)})
out["small"] = rows

# DRAM streaming: a 1 GiB device copy.
src = torch.empty(1 << 30, dtype=torch.uint8, device=dev); dst = torch.empty_like(src)
t = graph_us(lambda: dst.copy_(src), inner=5, reps=10)
out["copy_1GiB"] = {"us": t, "tbps_read_plus_write": 2 * (1 << 30) / t / 1e6}

# bf16 GEMV/GEMM streaming weights from DRAM: rotate copies totalling >= 4x L2.
gemm = []
for (K, N) in ((7168, 4096), (2048, 7168), (7168, 18432)):
    wbytes = K * N * 2
    copies = max(2, int(4 * out["l2_bytes"] // wbytes) + 1)
    Ws = [torch.randn(K, N, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
    for M in (1, 8, 64):
        X = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
        Y = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        i = [0]
        def f():
            for Wc in Ws: torch.mm(X, Wc, out=Y)
        t = graph_us(f, inner=4, reps=10) / copies
        gemm.append({"M": M, "K": K, "N": N, "weight_bytes": wbytes, "us": t, "tbps": wbytes / t / 1e6})
    del Ws
out["bf16_gemm_dram"] = gemm

# Compute-bound GEMM: bf16 and fp8 (torch._scaled_mm) at M=4096, N=K=7168.
M, N, K = 4096, 7168, 7168
A = torch.randn(M, K, device=dev, dtype=torch.bfloat16); Bm = torch.randn(K, N, device=dev, dtype=torch.bfloat16)
t = graph_us(lambda: A @ Bm, inner=10, reps=10)
out["bf16_gemm_4096x7168x7168"] = {"us": t, "tflops": 2 * M * N * K / t / 1e6}
try:
    A8 = A.to(torch.float8_e4m3fn); B8 = Bm.t().contiguous().to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device=dev)
    f = lambda: torch._scaled_mm(A8, B8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    t = graph_us(f, inner=10, reps=10)
    out["fp8_gemm_4096x7168x7168"] = {"us": t, "tflops": 2 * M * N * K / t / 1e6}
except Exception as e:  # report, do not fail
    out["fp8_gemm_4096x7168x7168"] = {"error": repr(e)}

# Eager launch cost: back-to-back tiny ops from Python, host-timed.
for _ in range(100): tiny.add_(1)
torch.cuda.synchronize()
n = 5000
t0 = time.perf_counter()
for _ in range(n): tiny.add_(1)
torch.cuda.synchronize()
out["eager_tiny_op_us"] = (time.perf_counter() - t0) * 1e6 / n

json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out, indent=1))
