#!/bin/bash
# Builds, checks and times moecast's W4A16 kernels on a GPU machine, with
# torch's int4 and bf16 GEMMs side by side. Needs nvcc and python3 with torch
# there, and two static Go test binaries built beforehand with
#   CGO_ENABLED=0 go test -c -o bench/bin/gpu.test ./kernels/gpu
#   CGO_ENABLED=0 go test -c -o bench/bin/cuda.test ./internal/cuda
# and, if present, bench/bin/moecast (CGO_ENABLED=0 go build -o bench/bin/moecast ./cmd/moecast).
# Usage: bench/gpu-w4a16.sh OUTDIR. Writes OUTDIR/build.tgz (the images and
# MANIFEST for kernels/gpu/build), check.log, moecast.jsonl, torch.jsonl and,
# with NCU=1 where Nsight Compute is installed, ncu.txt.
# Environment: MS (M values, default 1,2,4,8,16,32,64,128,256,512), SWEEP=1
# (runs of several lengths at M=1), MOE=0 (no MoE rows), TORCH=0 (no torch rows), TORCH_MS
# (M values of the torch rows, default MS), TORCH_TIMEOUT (s, default 100), NCU_KERNELS,
# VARIANTS=default (only the plans' default kernels), KEEP_BUILD=DIR (keep the images there),
# NOBUILD=1 (time the committed images instead of building).
set -uo pipefail
out=${1:?usage: bench/gpu-w4a16.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
ms=${MS:-1,2,4,8,16,32,64,128,256,512}
build=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$out/check.log"
nvcc --version | tail -2 | tee -a "$out/check.log"
if [ "${NOBUILD:-0}" = 1 ]; then # the committed images (kernels/gpu/build), as embedded in the binaries
	cp "$here"/kernels/gpu/build/* "$build"/
	echo "== no build: the committed images, $(head -1 "$build/MANIFEST")" | tee -a "$out/check.log"
else
	"$here/kernels/gpu/build.sh" "$build" 2>&1 | tee -a "$out/check.log" || exit 1
	tar -C "$build" -czf "$out/build.tgz" .
fi
cubin=$build/w4a16.sm_90.cubin
export NCCL_NVLS_ENABLE=0
# Each step has its own time limit, so that a hang leaves the others' results.
{
	if [ -x "$here/bench/bin/moecast" ]; then
		echo "== moecast gpu info"
		timeout 30 "$here/bench/bin/moecast" gpu info 2>&1
	fi
	echo "== internal/cuda on the device"
	timeout 60 "$here/bench/bin/cuda.test" -test.v -test.run 'Device|NCCL|Launch' 2>&1
	echo "== correctness, cubin sm_90"
	MOECAST_W4A16_MODULE=$cubin timeout 100 "$here/bench/bin/gpu.test" -test.v -test.run 'OnDevice' 2>&1 | grep -vE '^ +device_test.go:[0-9]+: .*: rel error [0-9.e-]+$'
	echo "== correctness, compute_80 PTX through the driver's JIT (GEMM only)"
	MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 60 "$here/bench/bin/gpu.test" -test.run 'GEMMOnDevice' -test.v 2>&1 | grep -vE '^ +device_test.go:[0-9]+: .*: rel error [0-9.e-]+$'
} 2>&1 | tee -a "$out/check.log"
MOECAST_GPU_BENCH=$out/moecast.jsonl MOECAST_W4A16_MODULE=$cubin MOECAST_GPU_BENCH_M=$ms \
	MOECAST_GPU_BENCH_MOE=${MOE:-1} MOECAST_GPU_BENCH_SWEEP=${SWEEP:-} MOECAST_GPU_BENCH_VARIANTS=${VARIANTS:-all} \
	timeout 150 "$here/bench/bin/gpu.test" -test.v -test.run 'BenchOnDevice' 2>&1 | tee -a "$out/check.log"
if [ "${TORCH:-1}" != 0 ]; then
	PYTHONUNBUFFERED=1 timeout ${TORCH_TIMEOUT:-100} python3 "$here/bench/gpu_w4a16_torch.py" "${TORCH_MS:-$ms}" >"$out/torch.jsonl" 2>>"$out/check.log"
	tail -3 "$out/torch.jsonl"
fi
if [ "${NCU:-0}" = 1 ]; then
	ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
	echo "== ncu: ${ncu:-not found}" | tee -a "$out/check.log"
	for k in ${NCU_KERNELS:-w4a16_mt1 w4a16_mt1_ldonly}; do
		[ -n "$ncu" ] || break
		MOECAST_GPU_BENCH=/dev/null MOECAST_W4A16_MODULE=$cubin MOECAST_GPU_BENCH_M=1 MOECAST_GPU_BENCH_MOE=0 \
			MOECAST_GPU_BENCH_SHAPES="dense up 18432" timeout 45 "$ncu" -k "regex:^$k\$" --launch-skip 4 --launch-count 1 \
			--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
			--section Occupancy --section LaunchStats "$here/bench/bin/gpu.test" -test.run BenchOnDevice >>"$out/ncu.txt" 2>&1
	done
fi
[ -n "${KEEP_BUILD:-}" ] && mkdir -p "$KEEP_BUILD" && cp "$build"/* "$KEEP_BUILD"/
rm -rf "$build"
