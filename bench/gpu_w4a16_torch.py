"""Reference rows for bench/gpu-w4a16.sh: torch.mm (bf16) and
torch._weight_int4pack_mm (int4, group g) on the shapes of kernels/gpu's
benchShapes, timed as moecast's kernel is: weights rotated over copies that
total at least 512 MiB (several times the 60 MiB L2), calls captured in a CUDA
graph, median of 15 replays. Also the device-to-device copy ceiling.
Writes JSON lines to stdout. Arguments: M values (comma-separated); INT4=0 in
the environment leaves out the int4 rows (bf16 torch.mm, i.e. cuBLAS, only).
SHAPES=substring times only the shapes whose name contains it."""

import json
import math
import os
import sys

import torch

# Keep in step with kernels/gpu/bench.go benchShapes.
SHAPES = [
    ("expert gate_up", 4096, 7168, 32),
    ("expert down", 7168, 2048, 32),
    ("o_proj", 7168, 8192, 32),
    ("dense up 18432", 18432, 7168, 32),
    ("dense up 18432 g128", 18432, 7168, 128),
    ("tp8 gate_up", 512, 7168, 32),
    ("tp8 down", 7168, 256, 32),
]
MS = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
ROTATE = 512 << 20
CALLS = 200


def time_graph(fns):
    calls = len(fns) * max(1, math.ceil(CALLS / len(fns)))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for f in fns:
            f()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            fns[i % len(fns)]()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    times = []
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(15):
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3 / calls)
    times.sort()
    del g
    return times[len(times) // 2], calls


def copies_for(nbytes):
    return int(min(2048, max(2, math.ceil(ROTATE / nbytes))))


def emit(**kw):
    print(json.dumps(kw), flush=True)


def main():
    dev = torch.cuda.get_device_properties(0)
    emit(kernel="device", name=dev.name, sms=dev.multi_processor_count, torch=torch.__version__,
         l2_bytes=getattr(dev, "L2_cache_size", 0))
    n = 2 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    t, _ = time_graph([lambda: b.copy_(a)])
    emit(kernel="copy", name="device-to-device copy 2 GiB", bytes=2 * n, graph_s=t, bytes_per_s=2 * n / t)
    # A read: the sum of each of 4096 rows of 256 KiB (fp16), into 4096 floats.
    h = a.view(torch.float16).view(4096, -1)
    acc = torch.empty(4096, dtype=torch.float32, device="cuda")
    try:
        t, _ = time_graph([lambda: torch.sum(h, dim=1, dtype=torch.float32, out=acc)])
        emit(kernel="read", name="read 2 GiB (torch.sum fp16 rows)", bytes=n, graph_s=t, bytes_per_s=n / t)
    except Exception as e:  # keep the GEMM rows whatever happens here
        print(f"read probe failed: {e}", file=sys.stderr)
    del a, b, h
    torch.manual_seed(0)
    int4 = os.environ.get("INT4", "1") != "0"
    only = os.environ.get("SHAPES", "")
    for name, N, K, g in SHAPES:
        if only and only not in name:
            continue
        wb16 = N * K * 2
        c16 = copies_for(wb16)
        ws16 = [torch.randn(K, N, device="cuda", dtype=torch.bfloat16) for _ in range(c16)]
        wb4 = N * K // 2 + (K // g) * N * 4
        c4 = copies_for(wb4)
        w4 = []
        for _ in range(c4 if int4 else 0):
            u8 = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, device="cuda")
            w4.append(torch._convert_weight_to_int4pack(u8, 8))
        sz = torch.randn(K // g, N, 2, device="cuda", dtype=torch.bfloat16) * 0.01
        for M in MS:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            act = M * K * 2 + M * N * 2
            t, calls = time_graph([lambda w=w: torch.mm(x, w, out=out) for w in ws16])
            emit(kernel="torch_mm_bf16", name=name, m=M, n=N, k=K, group=g, copies=c16, calls_per_graph=calls,
                 graph_s=t, bytes=wb16 + act, bytes_per_s=(wb16 + act) / t, flops_per_s=2 * M * N * K / t)
            if not int4:
                continue
            t, calls = time_graph([lambda w=w: torch._weight_int4pack_mm(x, w, g, sz) for w in w4])
            emit(kernel="torch_int4pack_mm", name=name, m=M, n=N, k=K, group=g, copies=c4, calls_per_graph=calls,
                 graph_s=t, bytes=wb4 + act, bytes_per_s=(wb4 + act) / t, flops_per_s=2 * M * N * K / t)
        del ws16, w4
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
