#!/bin/bash
# Issue 24 item 3, M <= 16 at 70% of the copy ceiling (branch wt-w4small16): on
# a GPU machine, in one call, builds w4a16.cu's images from PAY/kgpu
# (build.sh 80 90 120), prints ptxas's registers and spills of the new
# direct-load kernels (w4a16_mt1_*_dr*) and every spill line, checks the new
# sm_90 cubin against the float64 reference (TestGEMMOnDevice: every GEMM
# plan, the direct-load ones included; the compute_80 PTX through the JIT:
# GEMM), then times, in one process and beside moecast_copy (the copy
# ceiling, 2 x 1 GiB), the default plans and the direct-load kernels on every
# dense bench shape at M = MS (default 1,2,4,8,16; MOECAST_GPU_BENCH_VARIANTS
# =direct), and (NCU=1) profiles the default and the direct-load kernel on
# the dense up 18432 x 7168 at M = 1 with Nsight Compute (--clock-control
# none). PAY holds gpu.test.xz (CGO_ENABLED=0 go test -c ./kernels/gpu) and
# kgpu/ (w4a16.cu, build.sh, build/MANIFEST).
# Usage (repository root): bench/gpu-w4small16.sh PAY OUTDIR
set -uo pipefail
pay=$(cd "${1:?usage: bench/gpu-w4small16.sh PAY OUTDIR}" && pwd)
out=${2:?usage}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ms=${MS:-1,2,4,8,16}
export NCCL_NVLS_ENABLE=0
t0=$(date +%s)
stamp() { echo "[$(($(date +%s) - t0)) s] $*"; }
cd "$pay" || exit 1
[ -e gpu.test.xz ] && xz -df gpu.test.xz
chmod +x gpu.test kgpu/build.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
build=$out/build
mkdir -p "$build"
cp kgpu/build/MANIFEST "$build/"
{ nvcc --version | tail -2; STEMS=w4a16 kgpu/build.sh "$build" 80 90 120; } >"$out/build.log" 2>&1 || { grep -v "^ptxas info" "$out/build.log" | tail -40; exit 1; }
stamp built
for sm in 90 80 120; do
	grep -A2 -E "entry function 'w4a16_mt1_((s[0-9]_)?dr(16)?|swd)' for 'sm_${sm}a?'" "$out/build.log" | grep -E "entry|Used|spill" |
		sed "s/ptxas info    : //; s/^/sm_$sm /" | paste - - - | cut -c1-230
done
echo "spilling kernels (all): $(grep -B1 -E "[1-9][0-9]* bytes spill stores" "$out/build.log" | grep -c 'spill stores')"
new=$build/w4a16.sm_90.cubin
MOECAST_W4A16_MODULE=$new timeout 150 ./gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct.log" 2>&1
echo "tests rc $?"
MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 90 ./gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
echo "ptx tests rc $?"
stamp checked
grep -hE "^(--- FAIL|--- PASS|FAIL|panic)|cases, worst" "$out"/correct*.log | cut -c1-200 | head -20
grep -hE "Mode:[789] .*rel error [0-9.e-]+$" "$out/correct.log" | awk '{n++; if ($NF > w) w = $NF} END {printf "direct-load plans (sm_90): %d cases, worst rel error %s\n", n, w}'
grep -hE "Mode:[789] .*rel error [0-9.e-]+$" "$out/correct-ptx.log" | awk '{n++; if ($NF > w) w = $NF} END {printf "direct-load plans (PTX): %d cases, worst rel error %s\n", n, w}'
grep -hE "Mode:9 .*rel error [0-9.e-]+$" "$out"/correct*.log | awk '{n++; if ($NF > w) w = $NF} END {printf "dynamic swapped plans (sm_90 + PTX): %d cases, worst rel error %s\n", n, w}'
grep -h "rel error" "$out"/correct*.log | grep -vE "rel error [0-9.e-]+$" | head -5
MOECAST_W4A16_MODULE=$new MOECAST_GPU_BENCH_COPY=1 MOECAST_GPU_BENCH=$out/direct.jsonl MOECAST_GPU_BENCH_M=$ms \
	MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=direct timeout 240 ./gpu.test -test.v -test.run 'BenchOnDevice' >"$out/direct.log" 2>&1
echo "bench rc $?"
grep -E "us graph|copy|FAIL|panic" "$out/direct.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-118
stamp timed
if [ "${NCU:-1}" = 1 ]; then
	sec="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
	for k in w4a16_mt1_sw w4a16_mt1_swd w4a16_mt1_dr; do
		MOECAST_W4A16_MODULE=$new MOECAST_GPU_BENCH=/tmp/ncu.jsonl MOECAST_GPU_BENCH_M=1 MOECAST_GPU_BENCH_SHAPES="dense up 18432" \
			MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=direct timeout 60 ncu --clock-control none -k "regex:^$k\$" --launch-skip 5 --launch-count 1 $sec \
			./gpu.test -test.run BenchOnDevice >"$out/ncu-$k.txt" 2>&1
		stamp "ncu $k rc $?"
		grep -E "Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Stall|Warp Cycles Per Issued|Issue Slot" "$out/ncu-$k.txt" | head -14
	done
fi
stamp done
