"""The TP8 shards' table of bench/RESULTS-gpu-w4a16-split.md: each plan that run 15
timed on the TP8 gate_up 512 x 7168 (bench/gpu-w4a16-runs/run15/split.jsonl: the
64-row tile and the wgmma tiles of 256 and 128 columns, stream-K with the parallel
or the serial fixup, splits of K) beside torch.mm bf16 of the same run, then the
default plans of run 16 (the new defaults, embedded images) beside run 16's torch.
Usage: python3 bench/gpu_w4a16_split_table.py"""
import json

R = "bench/gpu-w4a16-runs/"


def rows(path):
    return [json.loads(l) for l in open(R + path)]


def torch(path):
    return {(r["name"], r["m"]): r["graph_s"] for r in rows(path) if r.get("kernel") == "torch_mm_bf16"}


t15, t16 = torch("run15/torch.jsonl"), torch("run16/torch.jsonl")
print("| M | plan | units/parts | fixup | us | x cuBLAS bf16 (run 15) |")
print("|---:|---|---|---|---:|---:|")
for r in rows("run15/split.jsonl"):
    if r["name"] != "tp8 gate_up":
        continue
    fix = "parallel" if r.get("coresident") else "serial"
    if r["max_parts"] == 1:
        fix = "-"
    tag = " (default then)" if r.get("default") else ""
    us = r["graph_s"] * 1e6
    print("| %d | %s%s | %d/%d | %s | %.1f | %.2f |" % (r["m"], r["variant"], tag, r["units_per_block"], r["max_parts"], fix, us,
                                                      t15[(r["name"], r["m"])] / r["graph_s"]))
print()
print("| shape | M | default plan (run 16) | units/parts | fixup | us | cuBLAS bf16 us | x cuBLAS |")
print("|---|---:|---|---|---|---:|---:|---:|")
for r in rows("run16/default.jsonl"):
    fix = "-" if r["max_parts"] == 1 else ("parallel" if r.get("coresident") else "serial")
    t = t16[(r["name"], r["m"])]
    print("| %s (%d x %d) | %d | %s | %d/%d | %s | %.1f | %.1f | %.2f |" % (r["name"], r["n"], r["k"], r["m"], r["variant"],
                                                                          r["units_per_block"], r["max_parts"], fix,
                                                                          r["graph_s"] * 1e6, t * 1e6, t / r["graph_s"]))
