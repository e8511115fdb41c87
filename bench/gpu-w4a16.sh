#!/bin/bash
# Builds, checks and times moecast's W4A16 kernels on a GPU machine, with
# torch's int4 and bf16 GEMMs side by side. Needs nvcc and python3 with torch
# there, and two static Go test binaries built beforehand with
#   CGO_ENABLED=0 go test -c -o bench/bin/gpu.test ./kernels/gpu
#   CGO_ENABLED=0 go test -c -o bench/bin/cuda.test ./internal/cuda
# and, if present, bench/bin/moecast (CGO_ENABLED=0 go build -o bench/bin/moecast ./cmd/moecast).
# Usage: bench/gpu-w4a16.sh OUTDIR. Writes OUTDIR/build.tgz (the images and
# MANIFEST for kernels/gpu/build), check.log, moecast.jsonl, torch.jsonl.
set -uo pipefail
out=${1:?usage: bench/gpu-w4a16.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/build"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$out/check.log"
nvcc --version | tail -2 | tee -a "$out/check.log"
"$here/kernels/gpu/build.sh" "$out/build" 2>&1 | tee -a "$out/check.log" || exit 1
tar -C "$out/build" -czf "$out/build.tgz" .
cubin=$out/build/w4a16.sm_90.cubin
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
	MOECAST_W4A16_MODULE=$out/build/w4a16.compute_80.ptx timeout 60 "$here/bench/bin/gpu.test" -test.run 'GEMMOnDevice' -test.v 2>&1 | grep -vE '^ +device_test.go:[0-9]+: .*: rel error [0-9.e-]+$'
} 2>&1 | tee -a "$out/check.log"
MOECAST_GPU_BENCH=$out/moecast.jsonl MOECAST_W4A16_MODULE=$cubin \
	timeout 180 "$here/bench/bin/gpu.test" -test.v -test.run 'BenchOnDevice' 2>&1 | tee -a "$out/check.log"
PYTHONUNBUFFERED=1 timeout 140 python3 "$here/bench/gpu_w4a16_torch.py" >"$out/torch.jsonl" 2>>"$out/check.log"
tail -3 "$out/torch.jsonl"
