"""Tables of bench/gpu-w4a16-runs/run25: the moe and moe_mxfp4 ops of calibop
on main's W4A16 images (main1, main2) and the branch's (new1, new2), run
alternately on one H200; per layer point the four times (us, without the
router), the change of the new images' mean over main's, and the gate_up and
down GEMMs where the progress line breaks them down.
Usage: python3 bench/w4small_table.py bench/gpu-w4a16-runs/run25"""

import re
import sys

d = sys.argv[1]


def parse(f):
    out = {}
    for line in open(f):
        m = re.search(r"\] (moe|moe_mxfp4) (\S+) tp(\d+) ep(\d+) tokens (\d+): ([\d.]+) us(.*)", line)
        if not m:
            continue
        op, model, tp, ep, tok, us, rest = m.groups()
        g = re.search(r"gate_up ([\d.]+).*down ([\d.]+)", rest)
        out[(op, model, int(tp), int(ep), int(tok))] = (float(us),) + (tuple(map(float, g.groups())) if g else (None, None))
    return out


runs = ["main1", "main2", "new1", "new2"]
r = {v: parse("%s/%s-progress.txt" % (d, v)) for v in runs}
print("| layer | tokens | main (2 runs) | new (2 runs) | change | gate_up main -> new | down main -> new |")
print("|---|---:|---:|---:|---:|---:|---:|")
for k in sorted(r["main1"], key=lambda k: (k[0], k[1], -k[2], k[3], k[4])):
    a = [r[v][k] for v in runs]
    mo, ne = (a[0][0] + a[1][0]) / 2, (a[2][0] + a[3][0]) / 2
    gu = dn = ""
    if all(x[1] is not None for x in a):
        gu = "%.1f -> %.1f" % ((a[0][1] + a[1][1]) / 2, (a[2][1] + a[3][1]) / 2)
        dn = "%.1f -> %.1f" % ((a[0][2] + a[1][2]) / 2, (a[2][2] + a[3][2]) / 2)
    name = "%s %s TP%d EP%d" % ("W4A16" if k[0] == "moe" else "MXFP4", k[1], k[2], k[3])
    print("| %s | %d | %.1f / %.1f | %.1f / %.1f | %+.1f%% | %s | %s |" % (name, k[4], a[0][0], a[1][0], a[2][0], a[3][0], 100 * (ne / mo - 1), gu, dn))
