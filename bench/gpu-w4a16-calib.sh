#!/bin/bash
# After a change of the W4A16 kernels' images or defaults (issue 24's
# large-batch tile): with the images embedded in the binaries (no module
# override), checks the kernels and the MoE layer on the device, reruns
# `calib gpu`'s moe op (the Kimi-K2.5 W4A16 layer table that the embedded
# h200-sxm calibration carries) and times the plans' default kernels on
# kernels/gpu's bench shapes at M = MS and the MoE cases
# (MOECAST_GPU_BENCH_VARIANTS=default).
# Usage: bench/gpu-w4a16-calib.sh DIR OUTDIR, DIR holding gpu.test
#   (CGO_ENABLED=0 go test -c ./kernels/gpu) and calibop (CGO_ENABLED=0 go
#   build ./bench/calibop), gzipped or not. Writes OUTDIR/check.log,
#   moe.toml, op.txt, default.jsonl, bench.log. WG=1: also the MoE layers'
#   wgmma plans (MOECAST_GPU_BENCH_VARIANTS=wg, no dense shapes) into
#   wg.jsonl, wg.log.
set -uo pipefail
dir=${1:?usage: bench/gpu-w4a16-calib.sh DIR OUTDIR}
out=${2:?usage: bench/gpu-w4a16-calib.sh DIR OUTDIR}
for f in "$dir"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
chmod +x "$dir"/gpu.test "$dir"/calibop
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/check.log"
{
	echo "== correctness, embedded images"
	timeout 150 "$dir/gpu.test" -test.v -test.run 'GEMMOnDevice|^TestMoEOnDevice|MoELayerOnDevice|WGDefaultOnDevice' 2>&1
} >>"$out/check.log" 2>&1
grep -E "^(---|FAIL|ok)|worst|Error|panic" "$out/check.log" | cut -c1-200 | head -20
s=$(date +%s); timeout 200 "$dir/calibop" -ops moe -out "$out/moe.toml" >"$out/op.txt" 2>&1
echo "calibop -ops moe rc $?: $(( $(date +%s) - s )) s" | tee -a "$out/check.log"
tail -3 "$out/op.txt" | cut -c1-300
MOECAST_GPU_BENCH=$out/default.jsonl MOECAST_GPU_BENCH_M=${MS:-1,2,4,8,16,32,64,128,256,512,1024,2048} \
	MOECAST_GPU_BENCH_VARIANTS=default timeout 240 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/bench.log" 2>&1
echo "bench rc $?"
grep -E "us graph|FAIL|panic" "$out/bench.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-150 | head -120
if [ "${WG:-0}" = 1 ]; then
	MOECAST_GPU_BENCH=$out/wg.jsonl MOECAST_GPU_BENCH_SHAPES=none MOECAST_GPU_BENCH_VARIANTS=wg \
		timeout 200 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/wg.log" 2>&1
	echo "wg bench rc $?"
	grep -E "us graph|FAIL|panic" "$out/wg.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-150 | head -80
fi
