# torch's bf16 baseline for moecast's MXFP4 MoE GEMMs (kernels/gpu
# mxfp4_device_test.go TestMXFP4TimingOnDevice): the same gpt-oss shapes
# (2880 padded to 2944), one torch.mm per touched expert on bf16 weights
# (dequantised MXFP4 as bf16: what a bf16 path would read), uniform top-4
# routing, the experts' mm's captured in one CUDA graph; median of 15 replays.
# Prints one JSON line per case: name, tokens, us.
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

for name, experts, local in [("gpt-oss-120b tp1", 128, 128), ("gpt-oss-120b ep4", 128, 32), ("gpt-oss-20b tp1", 32, 32)]:
    for stage, N, K in [("gate_up", 5760, 2944), ("down", 2944, 2944)]:
        W = torch.randn(local, K, N, device=dev, dtype=torch.bfloat16) * 0.02
        for tokens in [1, 32, 512, 4096, 16384]:
            ids = torch.rand(tokens, experts, device=dev).topk(4, dim=1).indices.flatten()
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
                    torch.mm(x[a:b], W[e], out=y[a:b])
            us = timed(fn)
            print(json.dumps({"name": f"{name} {stage}", "tokens": tokens, "us": round(us, 2), "experts_touched": len(segs)}), flush=True)
        del W
        torch.cuda.empty_cache()
