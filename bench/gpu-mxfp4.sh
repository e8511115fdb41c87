#!/bin/bash
# Builds w4a16.cu's images (with the MXFP4 ModeFP4 kernels), checks them on
# the GPU against the float64 host reference (MXFP4 MoE, and the int4 MoE
# and GEMM kernels of the same module), times the MXFP4 grouped GEMMs at
# gpt-oss shapes and torch's bf16 torch.mm per expert at the same shapes.
# Usage: bench/gpu-mxfp4.sh DIR OUTDIR, DIR holding gpu.test (from
#   CGO_ENABLED=0 go test -c -o DIR/gpu.test ./kernels/gpu, gzipped or not),
# w4a16.cu, build.sh and build/ (the committed images) of kernels/gpu, and
# gpu_mxfp4_torch.py. Writes OUTDIR/build.tgz, check.log, mxfp4.jsonl,
# torch.jsonl.
set -uo pipefail
dir=${1:?usage: bench/gpu-mxfp4.sh DIR OUTDIR}
out=${2:?usage: bench/gpu-mxfp4.sh DIR OUTDIR}
for f in "$dir"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done; chmod +x "$dir"/gpu.test "$dir"/build.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/check.log"
start=$(date +%s)
STEMS=w4a16 timeout 200 "$dir/build.sh" "$dir/build" 2>&1 | grep -E -A2 "fp4|error" | tee -a "$out/check.log"
echo "build: $(( $(date +%s) - start )) s" | tee -a "$out/check.log"
tar -C "$dir/build" -czf "$out/build.tgz" . || exit 1
export MOECAST_W4A16_MODULE=$dir/build/w4a16.sm_90.cubin
{
	echo "== correctness, cubin sm_90"
	timeout 90 "$dir/gpu.test" -test.v -test.run 'MXFP4MoEOnDevice|^TestMoEOnDevice$|^TestGEMMOnDevice$' 2>&1
	echo "== MXFP4 correctness, compute_80 PTX through the driver's JIT"
	MOECAST_W4A16_MODULE=$dir/build/w4a16.compute_80.ptx timeout 60 "$dir/gpu.test" -test.v -test.run 'MXFP4MoEOnDevice' 2>&1 | tail -3
	echo "== MXFP4 timing"
	MOECAST_MXFP4_TIMING=$out/mxfp4.jsonl timeout 90 "$dir/gpu.test" -test.v -test.run 'MXFP4TimingOnDevice' 2>&1
} 2>&1 | tee -a "$out/check.log" | grep -E "^(---|FAIL|ok|==)|worst|graph" | cut -c1-160
PYTHONUNBUFFERED=1 timeout 90 python3 "$dir/gpu_mxfp4_torch.py" >"$out/torch.jsonl" 2>>"$out/check.log"
echo "torch rows: $(wc -l <"$out/torch.jsonl")"
