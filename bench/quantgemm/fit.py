#!/usr/bin/env python3
"""Fit t = fixed + bytes/(BW*eff) to aiconfigurator's perf-database GEMM rows.

Usage: fit.py CSVDIR
CSVDIR holds the gemm_perf tables of ai-dynamo/aiconfigurator @ 095f58a
(aic-core/src/aiconfigurator_core/systems/data/<gpu>/gemm/<engine>/<version>/
gemm_perf.parquet) converted to CSV, named <gpu>_gemm_<engine>_<version>.csv
(columns framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency;
latency in ms), e.g. with pandas: pd.read_parquet(p).to_csv(out, index=False).
Rows: decode sizes M <= 64, N and K >= 1024, 4 MB to 1.2 GB
moved (weights + activations + bf16 output). Fit: least relative absolute
deviation (iteratively reweighted least squares), bytes normalised by the
GPU's DRAM bandwidth so GPUs of one architecture pool.
Prints, per group, the rows, the fixed cost (us), the efficiency and the
median and p90 |residual|, and the median error of moecast's default
(4.5 us + bytes/(BW*0.80); bf16 3 us) on the same rows.
"""
import csv, os, sys

BW = {'b200': 7.7e12, 'b300': 7.75e12, 'h100': 3.35e12, 'h200': 4.8e12}
# dense tensor-core peaks, FLOP/s (kernels/gpu.go's presets)
PEAK = {
    'b200': {'bfloat16': 2250e12, 'fp8': 4500e12, 'fp8_block': 4500e12, 'nvfp4': 9000e12},
    'b300': {'bfloat16': 2250e12, 'fp8': 4500e12, 'fp8_block': 4500e12, 'nvfp4': 14000e12},
    'h100': {'bfloat16': 989e12, 'fp8': 1979e12, 'fp8_block': 1979e12},
    'h200': {'bfloat16': 989e12, 'fp8': 1979e12, 'fp8_block': 1979e12},
}


def bpp(dt):
    return {'bfloat16': 2, 'fp8': 1, 'fp8_block': 1 + 4 / (128 * 128), 'nvfp4': 0.5 + 1 / 16}[dt]


def abytes(dt):
    return 2 if dt == 'bfloat16' else bpp(dt)


def rows_of(path, dt):
    out = []
    for r in csv.DictReader(open(path)):
        if r['gemm_dtype'] != dt:
            continue
        m, n, k = int(r['m']), int(r['n']), int(r['k'])
        if m > 64 or n < 1024 or k < 1024:
            continue
        by = n * k * bpp(dt) + m * k * abytes(dt) + m * n * 2
        if by < 4e6 or by > 1.2e9:
            continue
        out.append((by, float(r['latency']) * 1e-3))
    return out


def compute_fractions(path, dt):
    """Fraction of the dense peak reached at M, N, K >= 4096 (compute-bound)."""
    peak = PEAK[os.path.basename(path)[:4]][dt]
    out = []
    for r in csv.DictReader(open(path)):
        if r['gemm_dtype'] != dt:
            continue
        m, n, k = int(r['m']), int(r['n']), int(r['k'])
        if m < 4096 or n < 4096 or k < 4096:
            continue
        out.append(2 * m * n * k / (float(r['latency']) * 1e-3) / peak)
    return out


def wfit(pts, ws):
    sw = sum(ws)
    mx = sum(w * x for (x, _), w in zip(pts, ws)) / sw
    my = sum(w * y for (_, y), w in zip(pts, ws)) / sw
    b = sum(w * (x - mx) * (y - my) for (x, y), w in zip(pts, ws)) / sum(w * (x - mx) ** 2 for (x, _), w in zip(pts, ws))
    return my - b * mx, b


def irls(pts):
    ws = [1 / y ** 2 for _, y in pts]
    for _ in range(30):
        a, b = wfit(pts, ws)
        ws = [1 / (y * max(abs(y - (a + b * x)), 1e-3 * y)) for x, y in pts]
    return a, b


GROUPS = [
    ('sm_90', 'fp8', ['h100_sxm_gemm_vllm_0.24.0', 'h100_sxm_gemm_sglang_0.5.14', 'h200_sxm_gemm_vllm_0.24.0', 'h200_sxm_gemm_sglang_0.5.14']),
    ('sm_90', 'fp8_block', ['h100_sxm_gemm_sglang_0.5.14', 'h200_sxm_gemm_sglang_0.5.14']),
    ('sm_90', 'bfloat16', ['h100_sxm_gemm_vllm_0.24.0', 'h100_sxm_gemm_sglang_0.5.14', 'h200_sxm_gemm_vllm_0.24.0', 'h200_sxm_gemm_sglang_0.5.14']),
    ('sm_100+103', 'fp8', ['b200_sxm_gemm_vllm_0.24.0', 'b200_sxm_gemm_vllm_0.19.0', 'b200_sxm_gemm_sglang_0.5.14', 'b300_sxm_gemm_vllm_0.24.0', 'b300_sxm_gemm_sglang_0.5.14']),
    ('sm_100+103', 'nvfp4', ['b200_sxm_gemm_vllm_0.24.0', 'b200_sxm_gemm_vllm_0.19.0', 'b200_sxm_gemm_sglang_0.5.14', 'b300_sxm_gemm_vllm_0.24.0', 'b300_sxm_gemm_sglang_0.5.14']),
    ('sm_100+103', 'fp8_block', ['b200_sxm_gemm_vllm_0.19.0', 'b200_sxm_gemm_sglang_0.5.14', 'b300_sxm_gemm_sglang_0.5.14']),
    ('sm_100+103', 'bfloat16', ['b200_sxm_gemm_vllm_0.24.0', 'b200_sxm_gemm_vllm_0.19.0', 'b200_sxm_gemm_sglang_0.5.14', 'b300_sxm_gemm_vllm_0.24.0', 'b300_sxm_gemm_sglang_0.5.14']),
    # each GPU alone (the compute side of QuantGEMMSM100 and QuantGEMMSM103)
    ('b200', 'fp8', ['b200_sxm_gemm_vllm_0.24.0', 'b200_sxm_gemm_vllm_0.19.0', 'b200_sxm_gemm_sglang_0.5.14']),
    ('b200', 'nvfp4', ['b200_sxm_gemm_vllm_0.24.0', 'b200_sxm_gemm_vllm_0.19.0', 'b200_sxm_gemm_sglang_0.5.14']),
    ('b200', 'fp8_block', ['b200_sxm_gemm_vllm_0.19.0', 'b200_sxm_gemm_sglang_0.5.14']),
    ('b300', 'fp8', ['b300_sxm_gemm_vllm_0.24.0', 'b300_sxm_gemm_sglang_0.5.14']),
    ('b300', 'nvfp4', ['b300_sxm_gemm_vllm_0.24.0', 'b300_sxm_gemm_sglang_0.5.14']),
    ('b300', 'fp8_block', ['b300_sxm_gemm_sglang_0.5.14']),
    # each file alone, and the block-fp8 rows left out of the pooled fits
    ('b200 vllm 0.24.0', 'fp8_block', ['b200_sxm_gemm_vllm_0.24.0']),
    ('h100 vllm 0.24.0', 'fp8_block', ['h100_sxm_gemm_vllm_0.24.0']),
]


def main():
    d = sys.argv[1]
    for name, dt, files in GROUPS:
        pts = []  # (seconds at full bandwidth, seconds measured)
        for f in files:
            p = os.path.join(d, f + '.csv')
            bw = BW[f[:4]]
            pts += [(x / bw, y) for x, y in rows_of(p, dt)]
        a, b = irls(pts)
        res = sorted(abs(y - (a + b * x)) / y for x, y in pts)
        fx = 3e-6 if dt == 'bfloat16' else 4.5e-6
        cur = sorted((fx + x / 0.8 - y) / y for x, y in pts)
        fr = sorted(x for f in files for x in compute_fractions(os.path.join(d, f + '.csv'), dt))
        print('%-18s %-9s rows=%5d fixed %6.2f us eff %.3f |res| median %3.0f%% p90 %3.0f%%  default model median %+4.0f%%  |  M,N,K>=4096: %d rows, median %.2f of dense peak' % (
            name, dt, len(pts), a * 1e6, 1 / b, 100 * res[len(res) // 2], 100 * res[int(.9 * len(res))], 100 * cur[len(cur) // 2],
            len(fr), fr[len(fr) // 2]))


if __name__ == '__main__':
    main()
