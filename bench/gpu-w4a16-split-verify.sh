#!/bin/bash
# After bench/gpu-w4a16-split.sh's images are embedded and the default plans
# changed (the TP8 gate_up's 128-column stream-K, Plan.Coresident): with the
# embedded images (no module override) checks the GEMM, wgmma default-plan,
# split-plan, MoE and MoE-layer device tests, times the default plans on the
# bench shapes at M = MS (VARIANTS=default, no MoE) and torch.mm bf16 on the
# same shapes. Usage: bench/gpu-w4a16-split-verify.sh DIR OUTDIR, DIR holding
# gpu.test (CGO_ENABLED=0 go test -c ./kernels/gpu), xz'd or not.
set -uo pipefail
dir=${1:?usage: bench/gpu-w4a16-split-verify.sh DIR OUTDIR}
out=${2:?usage: bench/gpu-w4a16-split-verify.sh DIR OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
ms=${MS:-512,1024,2048}
for f in "$dir"/*.xz; do [ -e "$f" ] && xz -df "$f"; done
chmod +x "$dir"/gpu.test
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/check.log"
timeout 150 "$dir/gpu.test" -test.v -test.run 'GEMMOnDevice|WGDefaultOnDevice|SplitOnDevice|^TestMoEOnDevice|MoELayerOnDevice' >>"$out/check.log" 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s)"
grep -hE "^(--- |FAIL|ok|panic)|cases, worst|worst rel|counter|M1000_N512" "$out/check.log" | cut -c1-200 | head -20
grep -E "coresident true.*rel error [0-9.e-]+$" "$out/check.log" | awk '{n++; if ($NF > w) w = $NF} END {printf "parallel-fixup cases: %d, worst rel error %s\n", n, w}'
MOECAST_GPU_BENCH=$out/default.jsonl MOECAST_GPU_BENCH_M=$ms MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=default \
	timeout 120 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/bench.log" 2>&1
echo "bench rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "us graph|FAIL|panic" "$out/bench.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-100
INT4=0 PYTHONUNBUFFERED=1 timeout 100 python3 "$here/bench/gpu_w4a16_torch.py" "$ms" >"$out/torch.jsonl" 2>"$out/torch.err"
echo "torch rc $? ($(( $(date +%s) - t0 )) s)"
python3 -c '
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("kernel")=="torch_mm_bf16": print("torch bf16 %-20s M=%-5d %7.1f us"%(r["name"],r["m"],r["graph_s"]*1e6))
' "$out/torch.jsonl"
