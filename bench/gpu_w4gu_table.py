"""Tables of bench/RESULTS-w4gu.md from the runs' JSON lines (branch wt-w4gu).

Usage: python3 bench/gpu_w4gu_table.py RUNDIR BENCH.jsonl [DIAG.jsonl ...]
Prints, per TP8 shape and M, torch.mm bf16 (RUNDIR/torch.jsonl, the same
call), the default plan and every other plan timed (us and x cuBLAS); with
diagnostic files, the same plans' times in each (a column per file)."""

import json
import os
import sys


def rows(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def key(r):
    parts = r["max_parts"]
    how = "par" if r.get("coresident") else ("serial" if parts > 1 else "whole")
    if "_wgc" in r["variant"]:
        how = "cluster"
    return "%s %d/%d %s" % (r["variant"], r["units_per_block"], parts, how)


run = sys.argv[1]
torch = {(r["name"], r["m"]): r["graph_s"] for r in rows(os.path.join(run, "torch.jsonl")) if r.get("kernel") == "torch_mm_bf16"}
bench = rows(sys.argv[2])
diags = [(os.path.basename(p).split(".")[0], {(r["name"], r["m"], key(r)): r["graph_s"] for r in rows(p)}) for p in sys.argv[3:]]
head = "| shape | M | cuBLAS bf16 us | plan (units/parts fixup) | us | x cuBLAS |" + "".join(" %s us |" % n for n, _ in diags)
print(head)
print("|" + "---|" * (head.count("|") - 1))
seen = set()
for r in bench:
    k = (r["name"], r["m"], key(r))
    if k in seen:
        continue
    seen.add(k)
    cu = torch.get((r["name"], r["m"]))
    plan = ("**default** " if r.get("default") else "") + key(r)
    ratio = "%.2f" % (cu / r["graph_s"]) if cu else "-"
    extra = "".join(" %s |" % ("%.1f" % (d[k] * 1e6) if k in d else "-") for _, d in diags)
    print("| %s | %d | %s | %s | %.1f | %s |%s" % (r["name"], r["m"], "%.1f" % (cu * 1e6) if cu else "-", plan, r["graph_s"] * 1e6, ratio, extra))
