"""Tables of bench/RESULTS-gpu-w4a16-tp8.md from the runs' JSON lines:
the TP8 shards at M = 512-2048 (run 21: the plans before and after beside
torch.mm bf16, cuBLAS, of the same run) and the dense up 18432 x 7168 at
M <= 16 (run 20: each plan's share of the 4.23 TB/s copy ceiling).
Usage: python3 bench/gpu_w4a16_tp8_table.py [RUNS_DIR]"""

import json
import statistics
import sys

runs = sys.argv[1] if len(sys.argv) > 1 else "bench/gpu-w4a16-runs"
CEIL = 4.23e12


def rows(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def us(rs):
    return statistics.median(r["graph_s"] for r in rs) * 1e6


def pick(rs, name, m, variant, units):
    got = [r for r in rs if r.get("name") == name and r.get("m") == m and r.get("variant") == variant
           and r.get("units_per_block") == units]
    return got


tp8 = rows(f"{runs}/run21/tp8.jsonl")
torch = {(r["name"], r["m"]): r["graph_s"] * 1e6 for r in rows(f"{runs}/run21/torch.jsonl") if r.get("kernel") == "torch_mm_bf16"}
# (shape, M): before (the defaults of main), after (this branch's defaults), and the 256-column
# persistent tile (wrong results on rows 64-127: not a plan).
plans = {
    ("tp8 gate_up", 512): (("w4a16_mt8_w4_wg", 7), ("w4a16_mt4_w4_wg", 7), None),
    ("tp8 gate_up", 1024): (("w4a16_mt8_w4_wg", 14), ("w4a16_mt8_w4_wg", 14), None),
    ("tp8 gate_up", 2048): (("w4a16_mt8_w4_wg", 28), ("w4a16_mt8_w4_wg", 28), None),
    ("tp8 down", 512): (("w4a16_mt8_wg_n256", 2), ("w4a16_mt8_wg_n256", 2), ("w4a16_mt8_wgp_n256", 2)),
    ("tp8 down", 1024): (("w4a16_mt8_wg_n256", 2), ("w4a16_mt8_wg_n256", 2), ("w4a16_mt8_wgp_n256", 2)),
    ("tp8 down", 2048): (("w4a16_mt8_wg_n256", 2), ("w4a16_mt8_w4_wgp", 2), ("w4a16_mt8_wgp_n256", 2)),
}
print("| shape (N x K, g32) | M | cuBLAS bf16 us | before: plan (units/parts) | us | x cuBLAS | after: plan (units/parts) | us | x cuBLAS | 256-col persistent us (wrong rows) |")
print("|---|---:|---:|---|---:|---:|---|---:|---:|---:|")
for (name, m), (b, a, w) in plans.items():
    cb = torch[(name, m)]
    rb, ra = pick(tp8, name, m, *b), pick(tp8, name, m, *a)
    tb, ta = us(rb), us(ra)
    tw = "%.1f" % us(pick(tp8, name, m, *w)) if w else "-"
    r0 = rb[0]
    shape = "%s (%d x %d)" % (name, r0["n"], r0["k"])
    print("| %s | %d | %.1f | %s (%d/%d) | %.1f | %.2f | %s (%d/%d) | %.1f | %.2f | %s |" % (
        shape, m, cb, b[0], rb[0]["units_per_block"], rb[0]["max_parts"], tb, cb / tb,
        a[0], ra[0]["units_per_block"], ra[0]["max_parts"], ta, cb / ta, tw))

print()
small = rows(f"{runs}/run20/small.jsonl")
print("| shape | M | default plan (units/parts) | us | GB/s | % of 4.23 TB/s | fastest other plan | us |")
print("|---|---:|---|---:|---:|---:|---|---:|")
for name in ("dense up 18432", "dense up 18432 g128"):
    for m in (1, 2, 4, 8, 16):
        rs = [r for r in small if r["name"] == name and r["m"] == m]
        d = [r for r in rs if r.get("default")]
        if not d:
            continue
        t = us(d)
        key = (d[0]["variant"], d[0]["units_per_block"])
        others = [r for r in rs if (r["variant"], r["units_per_block"]) != key]
        o = min(others, key=lambda r: r["graph_s"]) if others else None
        bw = d[0]["bytes"] / (t * 1e-6)
        print("| %s (18432 x 7168) | %d | %s (%d/%d) | %.1f | %.0f | %.0f%% | %s | %s |" % (
            name, m, d[0]["variant"], d[0]["units_per_block"], d[0]["max_parts"], t, bw / 1e9, 100 * bw / CEIL,
            "%s (%d/%d)" % (o["variant"], o["units_per_block"], o["max_parts"]) if o else "-",
            "%.1f" % (o["graph_s"] * 1e6) if o else "-"))
