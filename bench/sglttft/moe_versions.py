#!/usr/bin/env python3
"""SGLang MoE perf-database rows of two versions at prefill sizes, side by side.

Usage: moe_versions.py NEW.toml OLD.toml [SHAPE]
NEW/OLD: calibration files written by `moecast calib import perfdb` from aiconfigurator's b200_sxm
tree, one with moe/sglang/0.5.14 and one with only moe/sglang/0.5.9 (see bench/RESULTS-sglttft.md).
SHAPE: a substring of the table names (default e256.k8.h7168.i2048, DeepSeek-R1's routed experts).
Prints latency_us at moe_tp 4 and 8 (ep 1) and at ep 8 (moe_tp 1), 1k-8k tokens.
"""
import re, sys

def load(f):
    out = {}
    for blk in open(f).read().split("[[table]]")[1:]:
        name = re.search(r'name = "([^"]+)"', blk).group(1)
        rows = re.search(r'rows = """\n(.*?)"""', blk, re.S)
        if rows:
            out[name] = [r.split(",") for r in rows.group(1).strip().split("\n")]
    return out

new, old = load(sys.argv[1]), load(sys.argv[2])
shape = sys.argv[3] if len(sys.argv) > 3 else "e256.k8.h7168.i2048"
sizes = ("1024", "2048", "4096", "8192")
for name in sorted(new):
    if shape not in name:
        continue
    oname = re.sub(r"sglang-\d+\.\d+\.\d+", "sglang-0.5.9", name)
    if oname not in old:
        continue
    for tp, ep in (("4", "1"), ("8", "1"), ("1", "8")):
        a = {r[2]: float(r[3]) for r in new[name] if r[0] == tp and r[1] == ep}
        b = {r[2]: float(r[3]) for r in old[oname] if r[0] == tp and r[1] == ep}
        cells = ["%s: %.0f / %.0f" % (s, a[s], b[s]) for s in sizes if s in a and s in b]
        print("%-58s moe_tp %s ep %s  new / 0.5.9 us: %s" % (name, tp, ep, ", ".join(cells)))
