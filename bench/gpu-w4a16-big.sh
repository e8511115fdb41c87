#!/bin/bash
# The large-batch W4A16 tile (issue 24, docs/decisions/0011) on a GPU
# machine: builds w4a16.cu's images, checks every kernel against the float64
# reference (GEMM and MoE, the sm_90 cubin; the compute_80 PTX through the
# JIT for the GEMMs), times the 64-row and the 128-row large-batch tiles on
# kernels/gpu's bench shapes at M = MS and the MoE layers from 512 tokens
# (MOECAST_GPU_BENCH_VARIANTS=big), and torch.mm bf16 (cuBLAS) on the same
# dense shapes. Needs nvcc and python3 with torch there, and a static Go test
# binary built beforehand with
#   CGO_ENABLED=0 go test -c -o bench/bin/gpu.test ./kernels/gpu
# Usage: bench/gpu-w4a16-big.sh OUTDIR. Writes OUTDIR/build/ (the images and
# MANIFEST, to copy into kernels/gpu/build), check.log, moecast.jsonl and
# torch.jsonl. Environment: MS (default 64,128,256,512,1024,2048), SMS
# (targets, default "80 90 120"), TORCH_MS (default 256,512,1024,2048),
# TORCH=0 (no torch rows), PTX=0 (no JIT check), MOE=0 (no MoE rows),
# VARIANTS (the benchmark's MOECAST_GPU_BENCH_VARIANTS, default big; wg: the
# wgmma tiles of 256 and 128 columns, stream-K and whole tiles). With
# bench/bin/calibop there (CGO_ENABLED=0 go build ./bench/calibop), also
# reruns `calib gpu --ops moe` on the new sm_90 cubin (OUTDIR/moe.toml, op.txt).
set -uo pipefail
out=${1:?usage: bench/gpu-w4a16-big.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
ms=${MS:-64,128,256,512,1024,2048}
build=$out/build
mkdir -p "$build"
cp "$here/kernels/gpu/build/MANIFEST" "$build/" # keeps the other sources' lines
export NCCL_NVLS_ENABLE=0
{
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
	nvcc --version | tail -2
	echo "== build (STEMS=w4a16 kernels/gpu/build.sh ${SMS:-80 90 120})"
	# shellcheck disable=SC2086
	STEMS=w4a16 "$here/kernels/gpu/build.sh" "$build" ${SMS:-80 90 120} || exit 1
} >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
grep -iE "nvcc|w4a16_mt8|w4a16_mt4_n256|spill|wgmma|warning|error" "$out/build.log" | grep -vE " 0 bytes spill" | head -40
cubin=$build/w4a16.sm_90.cubin
{
	echo "== correctness, cubin sm_90"
	MOECAST_W4A16_MODULE=$cubin timeout ${CHECK_TIMEOUT:-240} "$here/bench/bin/gpu.test" -test.v -test.run 'GEMMOnDevice|MoEOnDevice' 2>&1
	if [ "${PTX:-1}" != 0 ]; then
		echo "== correctness, compute_80 PTX through the driver's JIT (GEMM only)"
		MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 120 "$here/bench/bin/gpu.test" -test.run 'GEMMOnDevice' -test.v 2>&1
	fi
} >"$out/correct.log" 2>&1
grep -E "FAIL|^(ok|---|PASS)|cases, worst|panic|rror:" "$out/correct.log" | head -40
grep -E "mt8.*rel error [0-9.e-]+$" "$out/correct.log" | awk '{n++; if ($NF > w) w = $NF} END {printf "large-batch tile (mt8) cases: %d, worst rel error %s\n", n, w}'
grep -E "(Mode:5|_wg).*rel error [0-9.e-]+$" "$out/correct.log" | awk '{n++; if ($NF > w) w = $NF} END {printf "wgmma tiles (mode 5) cases: %d, worst rel error %s\n", n, w}'
grep -E "(Mode:5 [^}]*BN:128|_w4_wg).*rel error [0-9.e-]+$" "$out/correct.log" | awk '{n++; if ($NF > w) w = $NF} END {printf "128-column wgmma tile cases: %d, worst rel error %s\n", n, w}'
MOECAST_GPU_BENCH=$out/moecast.jsonl MOECAST_W4A16_MODULE=$cubin MOECAST_GPU_BENCH_M=$ms \
	MOECAST_GPU_BENCH_MOE=${MOE:-1} MOECAST_GPU_BENCH_VARIANTS=${VARIANTS:-big} \
	timeout ${BENCH_TIMEOUT:-300} "$here/bench/bin/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/bench.log" 2>&1
grep -E "us graph|FAIL|panic" "$out/bench.log" | sed 's/^ *device_test.go:[0-9]*: //' | head -150
if [ "${TORCH:-1}" != 0 ]; then
	INT4=0 PYTHONUNBUFFERED=1 timeout ${TORCH_TIMEOUT:-200} python3 "$here/bench/gpu_w4a16_torch.py" "${TORCH_MS:-256,512,1024,2048}" >"$out/torch.jsonl" 2>>"$out/check.log"
	python3 -c '
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("kernel")=="torch_mm_bf16": print("torch bf16 %-22s M=%-5d %8.1f us %6.1f TFLOP/s"%(r["name"],r["m"],r["graph_s"]*1e6,r["flops_per_s"]/1e12))
' "$out/torch.jsonl"
fi
if [ -x "$here/bench/bin/calibop" ]; then
	s=$(date +%s)
	MOECAST_W4A16_MODULE=$cubin timeout 200 "$here/bench/bin/calibop" -ops moe -out "$out/moe.toml" >"$out/op.txt" 2>&1
	echo "calibop -ops moe rc $?: $(( $(date +%s) - s )) s"
	tail -3 "$out/op.txt" | cut -c1-200
fi
