#!/bin/bash
# Issue 24, TP8 shards: the parallel fixup of cut tiles (kernels/gpu/w4a16.cu
# store_tile, Plan.Coresident) on a GPU machine, in one call: builds
# w4a16.cu's images with nvcc there, checks the kernels against the float64
# reference (the sm_90 cubin: GEMM, MoE, MoE layer, MXFP4 MoE, the wgmma
# default plans and TestSplitOnDevice's split plans on the TP8 shapes; the
# compute_80 PTX through the JIT: GEMM), times torch.mm bf16 (cuBLAS) on the
# TP8 shapes, the split plans there (MOECAST_GPU_BENCH_VARIANTS=split), the
# default plans with the parallel and the serial fixup on every bench shape
# and MoE case (fixup), and reruns `calib gpu --ops moe,moe_mxfp4` on the new
# cubin. Needs nvcc and python3 with torch, and DIR holding gpu.test
# (CGO_ENABLED=0 go test -c ./kernels/gpu) and calibop (CGO_ENABLED=0 go
# build ./bench/calibop), xz'd or not.
# Usage: bench/gpu-w4a16-split.sh DIR OUTDIR. Writes OUTDIR/build/ (images
# and MANIFEST for kernels/gpu/build) and logs; MS (default 512,1024,2048).
set -uo pipefail
dir=${1:?usage: bench/gpu-w4a16-split.sh DIR OUTDIR}
out=${2:?usage: bench/gpu-w4a16-split.sh DIR OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
ms=${MS:-512,1024,2048}
for f in "$dir"/*.xz; do [ -e "$f" ] && xz -df "$f"; done
chmod +x "$dir"/gpu.test "$dir"/calibop
export NCCL_NVLS_ENABLE=0
build=$out/build
mkdir -p "$build"
cp "$here/kernels/gpu/build/MANIFEST" "$build/"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
	nvcc --version | tail -2
	STEMS=w4a16 "$here/kernels/gpu/build.sh" "$build" 80 90 120
} >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
stamp "built"; grep -E "spill" "$out/build.log" | grep -vE " 0 bytes spill" | head -5
cubin=$build/w4a16.sm_90.cubin
MOECAST_W4A16_MODULE=$cubin timeout 200 "$dir/gpu.test" -test.v \
	-test.run 'GEMMOnDevice|^TestMoEOnDevice|MoELayerOnDevice|WGDefaultOnDevice|SplitOnDevice|MXFP4MoEOnDevice' >"$out/correct.log" 2>&1
echo "tests rc $?"
MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 100 "$dir/gpu.test" -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
echo "ptx tests rc $?"
stamp "checked"
grep -hE "^(--- |FAIL|ok|panic)|cases, worst|worst rel|counter" "$out/correct.log" "$out/correct-ptx.log" | cut -c1-220 | head -30
grep -E "coresident true.*rel error [0-9.e-]+$" "$out/correct.log" | awk '{n++; if ($NF > w) w = $NF} END {printf "parallel-fixup cases: %d, worst rel error %s\n", n, w}'
SHAPES=tp8 INT4=0 PYTHONUNBUFFERED=1 timeout 100 python3 "$here/bench/gpu_w4a16_torch.py" "$ms" >"$out/torch.jsonl" 2>"$out/torch.err"
echo "torch rc $?"
python3 -c '
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("kernel")=="torch_mm_bf16": print("torch bf16 %-14s M=%-5d %7.1f us"%(r["name"],r["m"],r["graph_s"]*1e6))
' "$out/torch.jsonl"
MOECAST_GPU_BENCH=$out/split.jsonl MOECAST_W4A16_MODULE=$cubin MOECAST_GPU_BENCH_M=$ms MOECAST_GPU_BENCH_SHAPES=tp8 \
	MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=split timeout 150 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/split.log" 2>&1
echo "split bench rc $?"
grep -E "us graph|FAIL|panic" "$out/split.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-110
stamp "split timed"
MOECAST_GPU_BENCH=$out/fixup.jsonl MOECAST_W4A16_MODULE=$cubin MOECAST_GPU_BENCH_M=$ms \
	MOECAST_GPU_BENCH_VARIANTS=fixup timeout 150 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/fixup.log" 2>&1
echo "fixup bench rc $?"
stamp "fixup timed"
s=$(date +%s); MOECAST_W4A16_MODULE=$cubin timeout 150 "$dir/calibop" -ops moe,moe_mxfp4 -out "$out/moe.toml" >"$out/op.txt" 2>&1
echo "calibop -ops moe,moe_mxfp4 rc $?: $(( $(date +%s) - s )) s"
stamp done
