"""GQA decode attention on one GPU (PyTorch SDPA, graph replay): achieved
KV-read bandwidth, for EffMem of attention. Not vLLM's FlashAttention-3
kernel: a peer for the order of magnitude.

python3 kernels/testdata/measure_h200_attention.py OUT.json
"""
import json, sys
import torch
import torch.nn.functional as F

dev = "cuda"


def graph_us(fn, inner=20, reps=10):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(inner): fn()
    g.replay(); torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(reps):
        a.record(); g.replay(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / inner)
    ts.sort()
    return ts[len(ts) // 2]


rows = []
for (H, KVH, D) in ((16, 1, 128), (64, 8, 64)):
    for B in (1, 8, 64):
        for ctx in (1024, 8192):
            # Rotate KV copies so each call reads HBM (>= 4x the 60 MiB L2).
            kvb = 2 * B * KVH * ctx * D * 2
            copies = max(1, int(4 * 62914560 // kvb) + 1)
            q = torch.randn(B, H, 1, D, device=dev, dtype=torch.bfloat16)
            ks = [torch.randn(B, KVH, ctx, D, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
            vs = [torch.randn(B, KVH, ctx, D, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
            def f():
                for k, v in zip(ks, vs):
                    F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            t = graph_us(f) / copies
            rows.append({"heads": H, "kv_heads": KVH, "head_dim": D, "batch": B, "context": ctx,
                         "kv_bytes": kvb, "us": t, "tbps": kvb / t / 1e6})
            del ks, vs
json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "gqa_sdpa": rows}, open(sys.argv[1], "w"), indent=1)
for r in rows: print(r)
