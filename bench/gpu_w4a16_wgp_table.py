"""Tables of bench/RESULTS-gpu-w4a16-wgp.md from the runs' JSON lines: the
TP8 shards at M = 512-2048 (the default plans of main and of this branch
beside torch.mm bf16, cuBLAS, of the same run) and the dense up 18432 x 7168
at M <= 16 (the default plans' share of the 4.23 TB/s copy ceiling and of
moecast_copy timed in the same process).
Usage: python3 bench/gpu_w4a16_wgp_table.py [RUNS_DIR [RUN]]"""

import json
import statistics
import sys

runs = sys.argv[1] if len(sys.argv) > 1 else "bench/gpu-w4a16-runs"
run = sys.argv[2] if len(sys.argv) > 2 else "run24"
CEIL = 4.23e12


def rows(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def us(rs):
    return statistics.median(r["graph_s"] for r in rs) * 1e6


def pick(rs, name, m, variant, units):
    return [r for r in rs if r.get("name") == name and r.get("m") == m and r.get("variant") == variant
            and r.get("units_per_block") == units]


tp8 = rows(f"{runs}/{run}/tp8.jsonl")
torch = {(r["name"], r["m"]): r["graph_s"] * 1e6 for r in rows(f"{runs}/{run}/torch.jsonl") if r.get("kernel") == "torch_mm_bf16"}
# (shape, M): main's default plan and this branch's.
plans = {
    ("tp8 gate_up", 512): (("w4a16_mt4_w4_wg", 7), ("w4a16_mt4_w4_wg", 7)),
    ("tp8 gate_up", 1024): (("w4a16_mt8_w4_wg", 14), ("w4a16_mt8_w4_wg", 14)),
    ("tp8 gate_up", 2048): (("w4a16_mt8_w4_wg", 28), ("w4a16_mt8_w4_wg", 28)),
    ("tp8 down", 512): (("w4a16_mt8_wg_n256", 2), ("w4a16_mt8_wgp_n256", 2)),
    ("tp8 down", 1024): (("w4a16_mt8_wg_n256", 2), ("w4a16_mt8_wgp_n256", 2)),
    ("tp8 down", 2048): (("w4a16_mt8_w4_wgp", 2), ("w4a16_mt8_wgp_n256", 2)),
}
print("| shape (N x K, g32) | M | cuBLAS bf16 us | main: plan (units/parts) | us | x cuBLAS | now: plan (units/parts) | us | x cuBLAS |")
print("|---|---:|---:|---|---:|---:|---|---:|---:|")
for (name, m), (b, a) in plans.items():
    cb = torch[(name, m)]
    rb, ra = pick(tp8, name, m, *b), pick(tp8, name, m, *a)
    tb, ta = us(rb), us(ra)
    shape = "%s (%d x %d)" % (name, rb[0]["n"], rb[0]["k"])
    print("| %s | %d | %.1f | %s (%d/%d) | %.1f | %.2f | %s (%d/%d) | %.1f | %.2f |" % (
        shape, m, cb, b[0], rb[0]["units_per_block"], rb[0]["max_parts"], tb, cb / tb,
        a[0], ra[0]["units_per_block"], ra[0]["max_parts"], ta, cb / ta))

try:
    small = rows(f"{runs}/{run}/small.jsonl")
except FileNotFoundError:
    sys.exit(0)
print()
copy = [r for r in small if r.get("kernel") == "moecast_copy"][0]["bytes_per_s"]
print("moecast_copy in the same process: %.2f TB/s (read + write)" % (copy / 1e12))
print()
print("| shape | M | default plan (units/parts) | us | GB/s | %% of 4.23 TB/s | %% of moecast_copy (%.2f TB/s) |" % (copy / 1e12))
print("|---|---:|---|---:|---:|---:|---:|")
for name in ("dense up 18432", "dense up 18432 g128"):
    for m in (1, 2, 4, 8, 16):
        d = [r for r in small if r.get("name") == name and r.get("m") == m and r.get("default")]
        if not d:
            continue
        t = us(d)
        bw = d[0]["bytes"] / (t * 1e-6)
        print("| %s (18432 x 7168) | %d | %s (%d/%d) | %.1f | %.0f | %.0f%% | %.0f%% |" % (
            name, m, d[0]["variant"], d[0]["units_per_block"], d[0]["max_parts"], t, bw / 1e9, 100 * bw / CEIL, 100 * bw / copy))
