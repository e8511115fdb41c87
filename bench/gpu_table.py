"""Makes bench/RESULTS-gpu-w4a16.md's tables from the JSON lines that
bench/gpu-w4a16.sh wrote: python3 bench/gpu_table.py moecast.jsonl torch.jsonl[,older-torch.jsonl] [more moecast.jsonl ...]
(a later torch file only fills the rows the first lacks). An extra argument
+FILE:VARIANT marks FILE's rows of kernel VARIANT as the default plan's
launches (they replace the first file's default rows of the same shape and M).

The main table shows the rows timed with the plan's default options
("default": true; runs before that field: the kernel "moecast_w4a16"),
the fastest of the other real variants timed on the same shape (diagnostic
variants _nodq and _ldonly left out), and torch's rows."""

import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def part(r):
    if "units_per_block" in r:
        return f"{r['units_per_block']}/{r['max_parts']}"
    return f"split {r['splits']}"  # run 1: split-K over whole splits


def is_default(r):
    if "default" in r:
        return r["default"]
    return r["kernel"] in ("moecast_w4a16", "moecast_w4a16_moe")  # rows before the field: the first, default, kernel


def real(r):
    k = r["kernel"]
    return k.startswith("moecast_w4a16") and not k.endswith(("_nodq", "_ldonly"))


def main():
    refs = [load(p) for p in sys.argv[2].split(",")]
    ref = refs[0]
    ours = load(sys.argv[1])
    first = list(ours)
    override = {}
    for extra in sys.argv[3:]:
        if extra.startswith("+"):
            path, variant = extra[1:].rsplit(":", 1)
            for r in load(path):
                r = dict(r, default=r.get("variant") == variant)
                ours.append(r)
                if r["default"]:
                    override[(r["name"], r["m"])] = r
            continue
        ours += load(extra)
    copy = next((r for r in ref if r["kernel"] == "copy"), None)
    read = next((r for r in ref if r["kernel"] == "read"), None)
    dev = next((r for r in ref if r["kernel"] == "device"), None)
    if dev:
        print(f"Device: {dev['name']}, {dev['sms']} SMs, torch {dev['torch']}.")
    if copy:
        print(f"This run's device-to-device copy (torch copy_): {copy['bytes_per_s'] / 1e12:.2f} TB/s (read + write).")
    if read:
        print(f"This run's read of 2 GiB (torch row sums): {read['bytes_per_s'] / 1e12:.2f} TB/s.")
    best16 = max((r["bytes_per_s"] for r in ref if r["kernel"] == "torch_mm_bf16"), default=0)
    if best16:
        print(f"Fastest torch.mm bf16 weight read in this run: {best16 / 1e12:.2f} TB/s.")
    ceil = 4.2e12
    print(f"'% of 4.2' is of the device-to-device copy ceiling measured on an H200, 2026-11-29 (4.23 TB/s), the issue's reference.")
    print()
    key = {}
    for rs in refs:
        for r in rs:
            if "m" in r:
                key.setdefault((r["kernel"], r["name"], r["m"]), r)
    gemm = [r for r in ours if "m" in r and not r["kernel"].startswith("sweep") and "_moe" not in r["kernel"]]
    best = {}
    for r in gemm:
        if real(r):
            k = (r["name"], r["m"])
            if k not in best or r["graph_s"] < best[k]["graph_s"]:
                best[k] = r
    print("| shape (N x K, group) | M | moecast us | GB/s | % of 4.2 | kernel (units/parts) | fastest variant us | torch int4 us | torch bf16 us | x vs int4 | x vs bf16 |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    seen = set()
    for r in gemm:
        if not is_default(r) or (r["name"], r["m"]) in seen:
            continue
        seen.add((r["name"], r["m"]))
        r = override.get((r["name"], r["m"]), r)
        i4 = key.get(("torch_int4pack_mm", r["name"], r["m"]))
        b16 = key.get(("torch_mm_bf16", r["name"], r["m"]))
        b = best.get((r["name"], r["m"]))
        t = r["graph_s"] * 1e6
        f = lambda x: f"{x['graph_s'] * 1e6:.1f}" if x else "-"
        sp = lambda x: f"{x['graph_s'] / r['graph_s']:.2f}" if x else "-"
        bv = f"{f(b)} ({b.get('variant', b['kernel'])})" if b and b is not r else "-"
        print(f"| {r['name']} ({r['n']} x {r['k']}, g{r['group']}) | {r['m']} | {t:.1f} | {r['bytes_per_s'] / 1e9:.0f} | "
              f"{100 * r['bytes_per_s'] / ceil:.0f}% | {r.get('variant', r['kernel'])} ({part(r)}) | {bv} | {f(i4)} | {f(b16)} | {sp(i4)} | {sp(b16)} |")
    moe = [r for r in first if "_moe" in r["kernel"] and is_default(r)]
    if moe:
        print()
        print("| MoE case (N x K, group) | tokens | experts touched | moecast us | GB/s | % of 4.2 | TFLOP/s | kernel (units/parts) |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for r in moe:
            print(f"| {r['name']} ({r['n']} x {r['k']}, g{r['group']}) | {r['m']} | {r['touched_experts']:.1f} | "
                  f"{r['graph_s'] * 1e6:.1f} | {r['bytes_per_s'] / 1e9:.0f} | {100 * r['bytes_per_s'] / ceil:.0f}% | "
                  f"{r['flops_per_s'] / 1e12:.1f} | {r.get('variant', r['kernel'])} ({part(r)}) |")


if __name__ == "__main__":
    main()
