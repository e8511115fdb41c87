#!/bin/bash
# Builds attention.cu's images, checks moecast's prefill attention (and the
# decode attention kernels of the same module) against the float64 host
# reference on the GPU, times prefill at kernels/gpu's prefillTimingCases and
# torch's SDPA at the same shapes, then runs the whole calib gpu campaign
# (--quick, then full) with the new images. Needs nvcc and python3 with torch
# there, and binaries built beforehand (gzipped or not) with
#   CGO_ENABLED=0 go test -c -o DIR/gpu.test ./kernels/gpu
#   CGO_ENABLED=0 go build -o DIR/moecast ./cmd/moecast
# Usage: bench/gpu-prefill.sh DIR OUTDIR, DIR holding gpu.test, moecast, the
# kernels/gpu *.cu sources, build.sh and build/ (the committed images, whose
# MANIFEST keeps the other sources' lines). Writes OUTDIR/build.tgz,
# check.log, moecast.json, torch.jsonl, quick.toml/.txt and full.toml/.txt.
# STAGES (default 2,3) are the pipeline depths timed; TORCH=0 skips torch;
# CAMPAIGN=0 skips the campaign; OPS limits it (--ops).
set -uo pipefail
dir=${1:?usage: bench/gpu-prefill.sh DIR OUTDIR}
out=${2:?usage: bench/gpu-prefill.sh DIR OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0
for f in "$dir"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done; chmod +x "$dir"/gpu.test "$dir"/moecast 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$out/check.log"
build=$dir/build
STEMS=attention "$dir/build.sh" "$build" 2>&1 | grep prefill | tee -a "$out/check.log"
tar -C "$build" -czf "$out/build.tgz" . || exit 1
export MOECAST_ATTENTION_MODULE=$build/attention.sm_90.cubin
{
	echo "== correctness, cubin sm_90"
	timeout 200 "$dir/gpu.test" -test.v -test.run 'PrefillOnDevice|MLAOnDevice|GQAOnDevice' 2>&1
	echo "== prefill correctness, compute_80 PTX through the driver's JIT"
	MOECAST_ATTENTION_MODULE=$build/attention.compute_80.ptx timeout 100 "$dir/gpu.test" -test.v -test.run 'PrefillOnDevice' 2>&1 | tail -3
	echo "== prefill timing"
	MOECAST_PREFILL_TIMING=$out/moecast.json MOECAST_PREFILL_STAGES=${STAGES:-2,3} timeout 200 "$dir/gpu.test" -test.v -test.run 'PrefillTimingOnDevice' 2>&1
} 2>&1 | tee -a "$out/check.log" | grep -E "^(---|===|FAIL|ok|==)|worst|TFLOP" | cut -c1-150
if [ "${TORCH:-1}" != 0 ]; then # torch SDPA at the timing shapes
	PYTHONUNBUFFERED=1 timeout ${TORCH_TIMEOUT:-200} python3 "$here/gpu_prefill_torch.py" >"$out/torch.jsonl" 2>>"$out/check.log"
	echo "torch rows: $(wc -l <"$out/torch.jsonl")"; tail -2 "$out/torch.jsonl" | cut -c1-300
fi
if [ -x "$dir/moecast" ] && [ "${CAMPAIGN:-1}" != 0 ]; then
	# The whole campaign (every op), --quick then full: its speed, and the file
	# embedded as calib/embedded/calibgpu/h200-sxm.toml.
	for q in quick full; do
		flag=; [ $q = quick ] && flag=--quick
		start=$(date +%s%N)
		timeout 280 "$dir/moecast" calib gpu ${OPS:+--ops $OPS} $flag -o "$out/$q.toml" >"$out/$q.txt" 2>&1
		echo "calib gpu ${OPS:+--ops $OPS} $flag: rc $? in $(( ($(date +%s%N) - start) / 1000000 )) ms"; grep -E "^(wrote|calib gpu)" "$out/$q.txt" | cut -c1-200
	done
fi
