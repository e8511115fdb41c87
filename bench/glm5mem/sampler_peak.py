"""Torch peak of a profile-run dummy sampler over rows x vocab logits.

Replays, with plain torch ops, the tensor sequence moecast's sim.profileSampler
counts for vLLM's PyTorch-native top-k/top-p path (top_p 0.9, top_k vocab-1)
and the rejection-sampler pass that follows with speculative decoding, and
prints the allocator's peak above the starting point in units of
L = rows x vocab x 4 B. Written for moecast (not vLLM's code): it measures what
the accounting assumes, including torch.sort's own temporary storage.
"""
import json
import sys

import torch

dev = "cuda"


def topk_topp(x, k, p):
    # x: fp32 [R, V], modified/returned as a new tensor like the native path
    s, idx = x.sort(dim=-1, descending=False)
    thr = s.gather(1, (s.size(1) - k.long()).unsqueeze(1))
    km = s < thr
    s.masked_fill_(km, -float("inf"))
    ps = s.softmax(dim=-1)
    torch.cumsum(ps, dim=-1, out=ps)
    pm = ps <= 1 - p.unsqueeze(1)
    pm[:, -1] = False
    s.masked_fill_(pm, -float("inf"))
    return s.scatter(dim=-1, index=idx, src=s)


def sample(x, temp, k, p):
    g = x.argmax(dim=-1)
    x.div_(temp.unsqueeze(1))
    y = topk_topp(x, k, p)
    pr = y.softmax(dim=-1, dtype=torch.float32)
    q = torch.empty_like(pr).exponential_()
    r = pr.div_(q).argmax(dim=-1)
    return torch.where(temp < 1e-5, g, r)


def main(rows, vocab, spec):
    full = lambda v: torch.full((rows,), v, device=dev)
    temp, p = full(0.5), full(0.9)
    k = torch.full((rows,), vocab - 1, device=dev, dtype=torch.long)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    L = rows * vocab * 4
    logits = torch.randn(rows, vocab, device=dev, dtype=torch.bfloat16)  # gathered logits
    x = logits.to(torch.float32)
    out = sample(x, temp, k, p)
    del x
    main_peak = torch.cuda.max_memory_allocated() - base
    spec_peak = 0
    if spec:
        torch.cuda.reset_peak_memory_stats()
        logits = torch.randn(2 * rows, vocab, device=dev, dtype=torch.bfloat16)
        bonus = logits[1::2]  # one bonus row per request
        bonus = bonus.contiguous()
        raw = bonus.to(torch.float32)  # raw logits kept as logprobs
        bx = bonus.to(torch.float32)
        bt = sample(bx, temp, k, p)
        del bx
        tgt = logits[0::2].contiguous().to(torch.float32)
        t2 = tgt.clone()
        t2.div_(temp.unsqueeze(1))
        t3 = topk_topp(t2, k, p)
        del t2
        tp = t3.softmax(dim=-1, dtype=torch.float32)
        q = torch.empty_like(tp).exponential_()
        torch.cuda.synchronize()
        spec_peak = torch.cuda.max_memory_allocated() - base
        del raw, tgt, t3, tp, q, bt
    torch.cuda.synchronize()
    return {"rows": rows, "vocab": vocab, "L_bytes": L,
            "main_peak_L": main_peak / L, "spec_peak_L": spec_peak / L if spec else None}


if __name__ == "__main__":
    res = []
    for rows, vocab in [(1024, 154880), (1024, 151936), (512, 129280), (256, 32000)]:
        res.append(main(rows, vocab, True))
        print(json.dumps(res[-1]), flush=True)
    print(torch.__version__, torch.cuda.get_device_name())
    if len(sys.argv) > 1:
        json.dump(res, open(sys.argv[1], "w"), indent=1)
