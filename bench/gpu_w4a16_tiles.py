"""Compares the W4A16 tiles at large M (issue 24): the 64-row x 256-column
mma.sync tile, the 128 x 256 mma.sync tile and the 128 x 256 wgmma tile
(the best of each kernel's rows in a moecast.jsonl of bench/gpu-w4a16-big.sh)
beside torch.mm bf16 (cuBLAS) from a torch.jsonl, as a markdown table.
Usage: python3 bench/gpu_w4a16_tiles.py moecast.jsonl torch.jsonl"""

import json
import sys

KERNELS = [("w4a16_mt4_n256", "64 x 256 mma.sync us"), ("w4a16_mt8_n256", "128 x 256 mma.sync us"),
           ("w4a16_mt8_wg_n256", "128 x 256 wgmma us")]


def main():
    ours, torch = {}, {}
    for line in open(sys.argv[1]):
        r = json.loads(line)
        if "_moe" in r["kernel"]:
            continue
        k = (r["name"], r["n"], r["k"], r["group"], r["m"], r["variant"])
        ours[k] = min(ours.get(k, 1e9), r["graph_s"])
    for line in open(sys.argv[2]):
        r = json.loads(line)
        if r.get("kernel") == "torch_mm_bf16":
            torch[(r["name"], r["m"])] = r["graph_s"]
    shapes = sorted({k[:5] for k in ours}, key=lambda s: (list(dict.fromkeys(x[0] for x in ours)).index(s[0]), s[4]))
    print("| shape (N x K, group) | M | " + " | ".join(h for _, h in KERNELS) + " | cuBLAS bf16 us | wgmma TFLOP/s | wgmma x cuBLAS |")
    print("|---|---:|" + "---:|" * (len(KERNELS) + 3))
    for name, n, k, g, m in shapes:
        cells = []
        for v, _ in KERNELS:
            t = ours.get((name, n, k, g, m, v))
            cells.append(f"{t * 1e6:.1f}" if t else "-")
        tb = torch.get((name, m))
        tw = ours.get((name, n, k, g, m, "w4a16_mt8_wg_n256"))
        tf = f"{2 * m * n * k / tw / 1e12:.0f}" if tw else "-"
        x = f"{tb / tw:.2f}" if tb and tw else "-"
        print(f"| {name} ({n} x {k}, g{g}) | {m} | " + " | ".join(cells) + f" | {tb * 1e6:.1f} | {tf} | {x} |" if tb else
              f"| {name} ({n} x {k}, g{g}) | {m} | " + " | ".join(cells) + f" | - | {tf} | {x} |")


if __name__ == "__main__":
    main()
