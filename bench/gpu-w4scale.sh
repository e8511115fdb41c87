#!/bin/bash
# Issue 24 item 3, W4A16 at M <= 16: the post-scaled compute path (branch
# wt-w4scale; bench/gpu-w4tma.sh of branch wt-w4tma plus the _ps kernels
# in the ptxas report and test greps, and the SASS of the main kernels,
# cuobjdump -sass, to OUTDIR/sass.txt.gz): on a GPU machine, in one call, builds w4a16.cu's images
# from PAY/kgpu (build.sh 80 90 120), prints ptxas's registers and spills of
# the bulk-copy kernels (w4a16_mt1_*tma*) and the count of spilling kernels,
# checks the new sm_90 cubin against the float64 reference
# (TestGEMMOnDevice: every GEMM plan, the bulk-copy ones included; the
# compute_80 PTX through the JIT: the other plans), then times, in one
# process and beside moecast_copy (the copy ceiling, 2 x 1 GiB), the default
# plans, the 6-stage swapped kernel and the bulk-copy kernels on every dense
# bench shape at M = MS (default 1,2,4,8,16; MOECAST_GPU_BENCH_VARIANTS=tma),
# and (NCU=1) profiles the default and the bulk-copy kernels (KS) on the
# dense up 18432 x 7168 at M = 1 with Nsight Compute (--clock-control none).
# The new images go to OUTDIR/build (build/MANIFEST rewritten by build.sh).
# The kernels and tests it needs are in bench/gpu-w4a16-runs/run38/experiment.patch
# (git apply it first). PAY holds gpu.test.xz (CGO_ENABLED=0 go test -c
# -ldflags='-s -w' ./kernels/gpu, built from a copy whose build/ images were
# emptied, to fit the 64 MB transfer: the kernels come from the images built
# here, through MOECAST_W4A16_MODULE) and kgpu/ (the *.cu sources, build.sh,
# build/MANIFEST). Runs 34-37: bench/RESULTS-w4tma.md; run 38: bench/RESULTS-w4scale.md.
# Usage (repository root): bench/gpu-w4scale.sh PAY OUTDIR (run 38: bench/RESULTS-w4scale.md)
set -uo pipefail
pay=$(cd "${1:?usage: bench/gpu-w4scale.sh PAY OUTDIR}" && pwd)
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
for k in w4a16_mt1_sw w4a16_mt1_sw_ps w4a16_mt1_sw_ps1 w4a16_mt1_s5_tma w4a16_mt1_s5_tma_ps w4a16_mt1_s5_tma_ps1 w4a16_mt1_tma_noload w4a16_mt1_tma_noload_ps w4a16_mt1_tma_noload_ps1 w4a16_mt1_s6_tma16 w4a16_mt1_s6_tma16_ps; do
	echo "### $k"; cuobjdump -sass -fun "$k" "$build/w4a16.sm_90.cubin"
done >"$out/sass.txt" 2>&1; gzip -f "$out/sass.txt"
for sm in 90; do
	grep -A2 -E "entry function 'w4a16_mt1_(s[0-9]_)?(tma16|tma|sw|tma16_ps|tma_ps|sw_ps|sw_ps1|tma_ps1|tma_noload|tma_noload_ps|tma_noload_ps1)' for 'sm_${sm}a?'" "$out/build.log" | grep -E "entry|Used|spill" |
		sed "s/ptxas info    : //; s/^w4a16 //; s/Compiling entry function //; s/ bytes / B /g" | paste - - - | cut -c1-200
done
echo "spilling kernels (all): $(grep -B1 -E "[1-9][0-9]* bytes spill stores" "$out/build.log" | grep -c 'spill stores')"
new=$build/w4a16.sm_90.cubin
MOECAST_W4A16_MODULE=$new timeout 220 ./gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct.log" 2>&1
echo "tests rc $?"
MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 90 ./gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
echo "ptx tests rc $?"
stamp checked
grep -hE "^(--- FAIL|--- PASS|FAIL|panic)|cases, worst|registers/local" "$out"/correct*.log | grep -oE "^.{0,160}" | head -20
grep -oE "w4a16_mt1_(s[0-9]_)?(tma|tma16|sw)(_ps1?)?:\[[0-9 ]+\]" "$out/correct.log" | sort -u | tr '\n' ' '; echo
for md in 3 7 8 10 11 14 15 17; do
	grep -hE "Mode:$md .*rel error [0-9.e-]+$" "$out/correct.log" | awk -v md=$md '{n++; if ($NF > w) w = $NF} END {printf "mode %d (sm_90): %d cases, worst rel error %s\n", md, n, w}'
done
grep -h "rel error" "$out"/correct*.log | grep -vE "rel error [0-9.e-]+$" | head -5
MOECAST_W4A16_MODULE=$new MOECAST_GPU_BENCH_COPY=1 MOECAST_GPU_BENCH=$out/tma.jsonl MOECAST_GPU_BENCH_M=$ms \
	MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=tma timeout 240 ./gpu.test -test.v -test.run 'BenchOnDevice' >"$out/bench.log" 2>&1
echo "bench rc $?"
grep -E "us graph|copy|FAIL|panic" "$out/bench.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-100
stamp timed
if [ "${NCU:-1}" = 1 ]; then
	sec="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
	for k in ${KS:-w4a16_mt1_sw w4a16_mt1_sw_ps}; do
		MOECAST_W4A16_MODULE=$new MOECAST_GPU_BENCH=/tmp/ncu.jsonl MOECAST_GPU_BENCH_M=1 MOECAST_GPU_BENCH_SHAPES="dense up 18432" \
			MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=tma timeout 60 ncu --clock-control none -k "regex:^$k\$" --launch-skip 5 --launch-count 1 $sec \
			./gpu.test -test.run BenchOnDevice >"$out/ncu-$k.txt" 2>&1
		stamp "ncu $k rc $?"
		grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|SM Active Cycles|Elapsed Cycles|Compute \(SM\) Throughput" "$out/ncu-$k.txt" | sed 's/  */ /g' | head -10
	done
fi
stamp done
