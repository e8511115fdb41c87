"""Tables of bench/RESULTS-w4small16.md from the JSON lines of
bench/gpu-w4small16.sh (TestBenchOnDevice, MOECAST_GPU_BENCH_VARIANTS=direct):
for each shape and M, the default plan's time and share of the copy ceiling
(4.23 TB/s, the issue's reference, and moecast_copy in the same process),
and each other kernel's time.
Usage: python3 bench/w4small16_table.py RUN/direct.jsonl [SHAPE_SUBSTRING]"""

import json
import sys

REF = 4.23e12


def main():
    rows = [json.loads(l) for l in open(sys.argv[1])]
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    copy = next(r for r in rows if r["kernel"] == "moecast_copy")
    print("moecast_copy in the same process: %.2f TB/s (read + write)" % (copy["bytes_per_s"] / 1e12))
    print()
    keys = []
    by = {}
    for r in rows:
        if r["kernel"] == "moecast_copy" or only not in r["name"]:
            continue
        k = (r["name"], r["m"])
        if k not in by:
            keys.append(k)
            by[k] = {"default": None, "other": {}}
        if r.get("default") and by[k]["default"] is None:
            by[k]["default"] = r
        else:
            v = r["variant"] + ("(%d)" % r["units_per_block"] if "swd" in r["variant"] else "")
            by[k]["other"].setdefault(v, r)
    variants = []
    for k in keys:
        for v in by[k]["other"]:
            if v not in variants:
                variants.append(v)
    print("| shape | M | MB | default | us | % of 4.23 TB/s | % of copy | " + " | ".join(variants) + " |")
    print("|---|---:|---:|---|---:|---:|---:|" + "---:|" * len(variants))
    for k in keys:
        d = by[k]["default"]
        cells = []
        for v in variants:
            o = by[k]["other"].get(v)
            cells.append("%.2f" % (o["graph_s"] * 1e6) if o else "")
        print("| %s | %d | %.1f | %s | %.2f | %.0f%% | %.0f%% | %s |" % (
            k[0], k[1], d["bytes"] / 1e6, d["variant"], d["graph_s"] * 1e6,
            100 * d["bytes_per_s"] / REF, 100 * d["bytes_per_s"] / copy["bytes_per_s"], " | ".join(cells)))


if __name__ == "__main__":
    main()
