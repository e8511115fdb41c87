"""Tables of bench/RESULTS-w4tma.md from the JSON lines of bench/gpu-w4tma.sh
(TestBenchOnDevice, MOECAST_GPU_BENCH_VARIANTS=tma): for each shape and M,
the default plan's time and share of the copy ceiling (4.23 TB/s, the issue's
reference), the fastest producer-warp kernel (w4a16_mt1_*tma*, not the
load-only and compute-only diagnostics) with its time, share and speed against the default,
the 6-stage swapped kernel, and the two load paths alone (the default's
cp.async pipeline, w4a16_mt1_ldonly, and the producer warp's,
w4a16_mt1_*tma_ldonly, fastest of its depths), and the compute warps alone
(w4a16_mt1_*tma_noload, no memory traffic; run 37 only).
Usage: python3 bench/w4tma_table.py RUN/tma.jsonl [SHAPE_SUBSTRING]"""

import json
import sys

REF = 4.23e12


def main():
    rows = [json.loads(l) for l in open(sys.argv[1])]
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    copy = next(r for r in rows if r["kernel"] == "moecast_copy")
    print("moecast_copy in the same process: %.2f TB/s (read + write)" % (copy["bytes_per_s"] / 1e12))
    print()
    keys, by = [], {}
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
            by[k]["other"].setdefault(r["variant"], r)
    print("| shape | M | MB | default | us | % of 4.23 | best producer-warp kernel | us | % of 4.23 | vs default "
          "| _s6_sw us | ldonly: cp.async us | ldonly: producer warp us (% of 4.23) | noload: compute warps alone us (% of 4.23) |")
    print("|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for k in keys:
        d, o = by[k]["default"], by[k]["other"]
        tma = [r for v, r in o.items() if "tma" in v and "ldonly" not in v and "noload" not in v]
        best = min(tma, key=lambda r: r["graph_s"]) if tma else None
        s6 = o.get("w4a16_mt1_s6_sw")
        ld = o.get("w4a16_mt1_ldonly")
        tl = [r for v, r in o.items() if v.endswith("tma_ldonly")]
        tlb = min(tl, key=lambda r: r["graph_s"]) if tl else None
        nl = [r for v, r in o.items() if v.endswith("tma_noload")]
        nlb = min(nl, key=lambda r: r["graph_s"]) if nl else None
        us = lambda r: "%.2f" % (r["graph_s"] * 1e6) if r else ""
        pct = lambda r: "%.0f%%" % (100 * r["bytes_per_s"] / REF) if r else ""
        print("| %s | %d | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            k[0], k[1], d["bytes"] / 1e6, d["variant"], us(d), pct(d), best["variant"] if best else "", us(best),
            pct(best), "%+.0f%%" % (100 * (d["graph_s"] / best["graph_s"] - 1)) if best else "", us(s6), us(ld),
            "%s (%s)" % (us(tlb), pct(tlb)) if tlb else "", "%s (%s)" % (us(nlb), pct(nlb)) if nlb else ""))


if __name__ == "__main__":
    main()
