#!/bin/bash
# Issue 24 leftovers (branch wt-gpu24), third device call: builds w4a16.cu's
# images from PAY/kgpu (build.sh 80 90 120: the final source, w4a16_mt1_w4_fp4
# at 3 blocks an SM on sm_90, the _wgd experiment removed), checks the new
# sm_90 cubin (GEMM, MoE, wgmma default plans, persistent tile, split plans,
# MXFP4 MoE, MoE layer; the compute_80 PTX: GEMM), runs calibop -ops
# moe,moe_mxfp4 on it (main's calibop, the cubin by override), then profiles
# with Nsight Compute (--clock-control none) the TP8 gate_up 512 x 7168's
# default plans at M = 512 and 2048 and cuBLAS's kernel (torch.mm bf16) at
# the same shapes: speed of light, compute and memory workload, warp stalls.
# PAY: bins.tar.xz (main/calibop; new/gpu.test: this branch's), kgpu/.
# Usage (repository root): bench/gpu-gpu24c.sh PAY OUTDIR
set -uo pipefail
pay=$(cd "${1:?usage}" && pwd)
out=${2:?usage}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export NCCL_NVLS_ENABLE=0
t0=$(date +%s)
stamp() { echo "[$(($(date +%s) - t0)) s] $*"; }
cd "$pay" || exit 1
[ -e bins.tar.xz ] && { tar -xJf bins.tar.xz && rm -f bins.tar.xz; }
chmod +x main/calibop new/gpu.test kgpu/build.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
build=$out/build
mkdir -p "$build"
cp kgpu/build/MANIFEST "$build/"
{ nvcc --version | tail -2; STEMS=w4a16 kgpu/build.sh "$build" 80 90 120; } >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
stamp built
for sm in 90 80 120; do
	grep -A2 -E "entry function 'w4a16_mt1_w4_fp4' for 'sm_${sm}a?'" "$out/build.log" | grep -E "Used|spill" | sed "s/^/sm_$sm w4a16_mt1_w4_fp4: /" | cut -c1-160
done
grep -c -E "C75[0-9][0-9]" "$out/build.log"
new=$build/w4a16.sm_90.cubin
MOECAST_W4A16_MODULE=$new timeout 200 new/gpu.test -test.v \
	-test.run 'GEMMOnDevice|^TestMoEOnDevice|WGDefaultOnDevice|WGPersistOnDevice|SplitOnDevice|MXFP4MoEOnDevice|MoELayerOnDevice|ParallelFixupTiles' >"$out/correct.log" 2>&1
echo "tests rc $?"
MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 60 new/gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
echo "ptx tests rc $?"
stamp checked
grep -hE "^(--- FAIL|--- PASS|FAIL|panic)|cases, worst" "$out"/correct*.log | cut -c1-200 | head -30
MOECAST_W4A16_MODULE=$new timeout 100 main/calibop -ops moe,moe_mxfp4 -out "$out/final-moe.toml" >"$out/final-moe.txt" 2>"$out/final-moe-progress.txt"
stamp "calibop moe,moe_mxfp4 (final images) rc $?"
sec="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
for M in 512 2048; do
	k=w4a16_mt8_w4_wg; [ $M = 512 ] && k=w4a16_mt4_w4_wg
	MOECAST_W4A16_MODULE=$new MOECAST_GPU_BENCH=/tmp/ncu$M.jsonl MOECAST_GPU_BENCH_M=$M MOECAST_GPU_BENCH_SHAPES="tp8 gate_up" \
		MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=default timeout 120 ncu --clock-control none -k "regex:^$k\$" --launch-skip 5 --launch-count 1 $sec \
		new/gpu.test -test.run BenchOnDevice >"$out/ncu-$k-M$M.txt" 2>&1
	stamp "ncu $k M=$M rc $?"
	timeout 90 ncu --clock-control none --profile-from-start off --launch-count 1 $sec python3 -c "
import torch
a=torch.randn($M,7168,dtype=torch.bfloat16,device='cuda'); w=torch.randn(7168,512,dtype=torch.bfloat16,device='cuda')
for _ in range(3): a@w
torch.cuda.synchronize(); torch.cuda.profiler.start(); a@w; torch.cuda.synchronize(); torch.cuda.profiler.stop()
" >"$out/ncu-cublas-M$M.txt" 2>&1
	stamp "ncu cublas M=$M rc $?"
done
for f in "$out"/ncu-*.txt; do echo "== $(basename $f)"; grep -E "^  [a-z_0-9]+|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|Executed Ipc A|Registers Per|Achieved Occupancy|Block Limit" "$f" | head -14; done
stamp done
