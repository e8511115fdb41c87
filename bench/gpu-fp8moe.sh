#!/bin/bash
# Builds the images of the .cu sources in DIR (fp8moe.cu; glue.cu when it
# changed) on the device machine, checks the block-fp8 MoE kernels on the
# GPU (quantisation bit for bit against the host, grouped GEMM against the
# float64 reference; sm_90 cubin and compute_80 PTX) and glue.cu's kernels,
# runs the calib gpu ops $OPS (default moe_fp8; full, then quick, each
# timed) and torch's baselines at the block-fp8 shapes.
# Usage: bench/gpu-fp8moe.sh DIR OUTDIR, DIR holding gpu.test (CGO_ENABLED=0
#   go test -c ./kernels/gpu), calibop (CGO_ENABLED=0 go build
#   ./bench/calibop), gzipped or not, fp8moe.cu, build.sh of kernels/gpu
#   gpu_fp8moe_torch.py, and glue.cu where it changed. Writes OUTDIR/build.tgz, check.log, op.txt,
#   op-quick.txt, fp8.toml, torch.jsonl.
set -uo pipefail
dir=${1:?usage: bench/gpu-fp8moe.sh DIR OUTDIR}
out=${2:?usage: bench/gpu-fp8moe.sh DIR OUTDIR}
for f in "$dir"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
chmod +x "$dir"/gpu.test "$dir"/calibop "$dir"/build.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/check.log"
start=$(date +%s)
mkdir -p "$dir/build"
timeout 200 "$dir/build.sh" "$dir/build" 80 90 120 2>&1 | tee -a "$out/check.log" | grep -E "error|spill" | head -20
echo "build: $(( $(date +%s) - start )) s" | tee -a "$out/check.log"
tar -C "$dir/build" -czf "$out/build.tgz" . || exit 1
export MOECAST_FP8MOE_MODULE=$dir/build/fp8moe.sm_90.cubin MOECAST_GLUE_MODULE=$dir/build/glue.sm_90.cubin
{
	echo "== correctness, cubin sm_90"
	timeout 150 "$dir/gpu.test" -test.v -test.run 'FP8QuantOnDevice|FP8MoEOnDevice|FP8LayerOnDevice|RouterOnDevice|AlignOnDevice|^TestElementwiseOnDevice|MoELayerOnDevice' 2>&1
	echo "== correctness, compute_80 PTX through the driver's JIT"
	MOECAST_FP8MOE_MODULE=$dir/build/fp8moe.compute_80.ptx MOECAST_GLUE_MODULE=$dir/build/glue.compute_80.ptx timeout 90 "$dir/gpu.test" -test.v -test.run 'FP8QuantOnDevice|FP8MoEOnDevice|^TestElementwiseOnDevice' 2>&1 | grep -E "^(---|ok|FAIL)|worst"
} 2>&1 | tee -a "$out/check.log" | grep -E "^(---|FAIL|ok|==)|worst|Error" | cut -c1-200 | head -60
s=$(date +%s); timeout ${OPT:-240} "$dir/calibop" -ops ${OPS:-moe_fp8} -out "$out/fp8.toml" >"$out/op.txt" 2>&1; echo "op full rc $?: $(( $(date +%s) - s )) s" | tee -a "$out/check.log"
s=$(date +%s); timeout 60 "$dir/calibop" -quick -ops ${OPS:-moe_fp8} -out "$out/fp8-quick.toml" >"$out/op-quick.txt" 2>&1; echo "op quick rc $?: $(( $(date +%s) - s )) s" | tee -a "$out/check.log"
tail -5 "$out/op.txt"
PYTHONUNBUFFERED=1 timeout ${TT:-150} python3 "$dir/gpu_fp8moe_torch.py" >"$out/torch.jsonl" 2>>"$out/check.log"
echo "torch rows: $(wc -l <"$out/torch.jsonl")"; head -2 "$out/torch.jsonl"
