#!/bin/bash
# Issue 24 item 3, W4A16 at M <= 16 (branch wt-w4small, run 50): the
# swapped-operand kernels on 256-column tiles (each warp 64 columns and two
# 32-k scale groups a stage: two independent chains between block barriers)
# beside today's defaults and run 38's post-scaled kernels. On a GPU machine,
# in one call: builds w4a16.cu's images from PAY/kgpu (build.sh 80 90 120),
# prints ptxas's registers and spills of the swapped kernels, dumps their
# SASS (OUTDIR/sass.txt.gz), checks the new sm_90 cubin and the compute_80
# PTX against the float64 reference (TestGEMMOnDevice), times the default
# plans and the "n256" list (kernels/gpu/device_test.go n256Options) on every
# dense bench shape at M = MS beside moecast_copy, and (NCU=1) profiles KS
# on the dense up 18432 x 7168 at M = 1 (--clock-control none), plus the
# warp stall reasons of the first two of KS.
# PAY holds gpu.test.xz (CGO_ENABLED=0 go test -c -ldflags='-s -w'
# ./kernels/gpu from a copy whose build/ images were emptied; the kernels
# come from the images built here, through MOECAST_W4A16_MODULE) and kgpu/
# (the *.cu sources, build.sh, build/MANIFEST). The kernels and tests are in
# bench/gpu-w4a16-runs/run50/experiment.patch (git apply it first).
# Usage (repository root): bench/gpu-w4small.sh PAY OUTDIR
set -uo pipefail
pay=$(cd "${1:?usage: bench/gpu-w4small.sh PAY OUTDIR}" && pwd)
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
new=$build/w4a16.sm_90.cubin
for k in w4a16_mt1_sw w4a16_mt1_sw_ps w4a16_mt1_sw_ps1 w4a16_mt1_s6_sw_ps w4a16_mt1_sw_n256 w4a16_mt1_sw_ps_n256 w4a16_mt1_sw_ps1_n256 \
	w4a16_mt1_s3_sw_ps_n256 w4a16_mt1_s3_sw_ps1_n256 w4a16_mt1_sw16_ps1 w4a16_mt1_sw16_ps1_n256 w4a16_mt1_w4 \
	w4a16_mt1_sw_ps1_noload w4a16_mt1_sw_ps1_noload_n256 w4a16_mt1_sw_ps_noload_n256; do
	echo "### $k"; cuobjdump -sass -fun "$k" "$new"
done >"$out/sass.txt" 2>&1; gzip -f "$out/sass.txt"
grep -A2 -E "entry function 'w4a16_mt1_(s[0-9]_)?(sw|w4|sw_ps|sw_ps1|sw16_ps1|sw_ps_noload|sw_ps1_noload)(_n256)?' for 'sm_90a?'" "$out/build.log" | grep -E "entry|Used|spill" |
	sed "s/ptxas info    : //; s/^w4a16 //; s/Compiling entry function //; s/ bytes / B /g" | paste - - - | cut -c1-200
echo "spilling kernels (all): $(grep -B1 -E "[1-9][0-9]* bytes spill stores" "$out/build.log" | grep -c 'spill stores')"
MOECAST_W4A16_MODULE=$new timeout 240 ./gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct.log" 2>&1
echo "tests rc $?"
MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 100 ./gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
echo "ptx tests rc $?"
stamp checked
grep -hE "^(--- FAIL|--- PASS|FAIL|panic)|cases, worst" "$out"/correct*.log | grep -oE "^.{0,160}" | head -20
for md in 3 7 8 21; do
	for bn in 0 256; do
		grep -hE "Mode:$md WP:false BN:$bn .*rel error [0-9.e-]+$" "$out/correct.log" | awk -v md=$md -v bn=$bn '{n++; if ($NF > w) w = $NF} END {printf "mode %d BN %d (sm_90): %d cases, worst rel error %s\n", md, bn, n, w}'
	done
done
grep -h "rel error" "$out"/correct*.log | grep -vE "rel error [0-9.e-]+$" | head -5
MOECAST_W4A16_MODULE=$new MOECAST_GPU_BENCH_COPY=1 MOECAST_GPU_BENCH=$out/n256.jsonl MOECAST_GPU_BENCH_M=$ms \
	MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=n256 timeout 240 ./gpu.test -test.v -test.run 'BenchOnDevice' >"$out/bench.log" 2>&1
echo "bench rc $?"
grep -E "copy|FAIL|panic" "$out/bench.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-100
stamp timed
if [ "${NCU:-1}" = 1 ]; then
	sec="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
	i=0
	for k in ${KS:-w4a16_mt1_sw_ps1_n256 w4a16_mt1_sw w4a16_mt1_sw_ps1_noload_n256}; do
		MOECAST_W4A16_MODULE=$new MOECAST_GPU_BENCH=/tmp/ncu.jsonl MOECAST_GPU_BENCH_M=1 MOECAST_GPU_BENCH_SHAPES="dense up 18432" \
			MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=n256 timeout 60 ncu --clock-control none -k "regex:^$k\$" --launch-skip 5 --launch-count 1 $sec \
			./gpu.test -test.run BenchOnDevice >"$out/ncu-$k.txt" 2>&1
		stamp "ncu $k rc $?"
		grep -E "Duration|DRAM Throughput|Registers Per|Achieved Active Warps|Warp Cycles Per Issued|SM Active Cycles|Elapsed Cycles|Compute \(SM\) Throughput" "$out/ncu-$k.txt" | sed 's/  */ /g' | head -10
		if [ $i -lt 2 ]; then
			MOECAST_W4A16_MODULE=$new MOECAST_GPU_BENCH=/tmp/ncu.jsonl MOECAST_GPU_BENCH_M=1 MOECAST_GPU_BENCH_SHAPES="dense up 18432" \
				MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=n256 timeout 60 ncu --clock-control none -k "regex:^$k\$" --launch-skip 5 --launch-count 1 \
				--metrics "regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$" ./gpu.test -test.run BenchOnDevice >"$out/stall-$k.txt" 2>&1
			stamp "stalls $k rc $?"
			grep -E "stalled" "$out/stall-$k.txt" | awk '$NF+0 >= 0.3' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//; s/  */ /g' | head -12
		fi
		i=$((i + 1))
	done
fi
stamp done
