"""Makes bench/RESULTS-gpu-w4a16.md's tables from the JSON lines that
bench/gpu-w4a16.sh wrote: python3 bench/gpu_table.py moecast.jsonl torch.jsonl"""

import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def part(r):
    if "units_per_block" in r:
        return f"{r['units_per_block']}/{r['max_parts']}"
    return f"split {r['splits']}"  # run 1: split-K over whole splits


def main():
    ours = load(sys.argv[1])
    ref = load(sys.argv[2])
    copy = next((r for r in ref if r["kernel"] == "copy"), None)
    read = next((r for r in ref if r["kernel"] == "read"), None)
    dev = next((r for r in ref if r["kernel"] == "device"), None)
    if dev:
        print(f"Device: {dev['name']}, {dev['sms']} SMs, torch {dev['torch']}.")
    if copy:
        print(f"This run's device-to-device copy: {copy['bytes_per_s'] / 1e12:.2f} TB/s (read + write).")
    if read:
        print(f"This run's read of 2 GiB (torch sum): {read['bytes_per_s'] / 1e12:.2f} TB/s.")
    best16 = max((r["bytes_per_s"] for r in ref if r["kernel"] == "torch_mm_bf16"), default=0)
    if best16:
        print(f"Fastest torch.mm bf16 weight read in this run: {best16 / 1e12:.2f} TB/s.")
    ceil = 4.2e12
    print(f"'% of 4.2' is of the device-to-device copy ceiling measured on an H200, 2026-11-29 (4.23 TB/s), the issue's reference.")
    print()
    key = {(r["kernel"], r["name"], r["m"]): r for r in ref + ours if "m" in r}
    print("| shape (N x K, group) | M | moecast us | GB/s | % of 4.2 | 6-stage us | torch int4 us | torch bf16 us | x vs int4 | x vs bf16 | mt/units/parts |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in ours:
        if r["kernel"] != "moecast_w4a16":
            continue
        i4 = key.get(("torch_int4pack_mm", r["name"], r["m"]))
        b16 = key.get(("torch_mm_bf16", r["name"], r["m"]))
        s6 = key.get(("moecast_w4a16_s6", r["name"], r["m"]))
        t = r["graph_s"] * 1e6
        f = lambda x: f"{x['graph_s'] * 1e6:.1f}" if x else "-"
        sp = lambda x: f"{x['graph_s'] / r['graph_s']:.2f}" if x else "-"
        print(f"| {r['name']} ({r['n']} x {r['k']}, g{r['group']}) | {r['m']} | {t:.1f} | {r['bytes_per_s'] / 1e9:.0f} | "
              f"{100 * r['bytes_per_s'] / ceil:.0f}% | {f(s6)} | {f(i4)} | {f(b16)} | {sp(i4)} | {sp(b16)} | {r['mt']}/{part(r)} |")
    moe = [r for r in ours if r["kernel"] == "moecast_w4a16_moe"]
    if moe:
        print()
        print("| MoE case (N x K, group) | tokens | experts touched | moecast us | GB/s | % of 4.2 | TFLOP/s | mt/units/parts |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for r in moe:
            print(f"| {r['name']} ({r['n']} x {r['k']}, g{r['group']}) | {r['m']} | {r['touched_experts']:.1f} | "
                  f"{r['graph_s'] * 1e6:.1f} | {r['bytes_per_s'] / 1e9:.0f} | {100 * r['bytes_per_s'] / ceil:.0f}% | "
                  f"{r['flops_per_s'] / 1e12:.1f} | {r['mt']}/{part(r)} |")


if __name__ == "__main__":
    main()
