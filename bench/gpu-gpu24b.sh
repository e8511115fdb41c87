#!/bin/bash
# Issue 24 leftovers (branch wt-gpu24), second device call: builds w4a16.cu's
# images from PAY/kgpu (build.sh 80 90 120: the _wgd kernels with the wait
# before the next step's dequantisation; w4a16_mt1_w4_fp4 at 3 blocks an
# SM), prints ptxas's report of the wgmma and MXFP4 kernels, checks the new
# sm_90 cubin (GEMM, MoE, wgmma default plans, persistent tile, split plans,
# MXFP4 MoE, MoE layer; the compute_80 PTX: GEMM), times torch.mm bf16 and
# every tp8 plan at M = 512, 1024, 2048, then calibop -ops moe,moe_mxfp4 on
# the new cubin (main's calibop; the override loads main's kernels from it).
# PAY: bins.tar.xz (main/calibop; new/gpu.test: this branch's), kgpu/.
# Usage (repository root): bench/gpu-gpu24b.sh PAY OUTDIR
set -uo pipefail
pay=$(cd "${1:?usage}" && pwd)
out=${2:?usage}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(pwd)
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
grep -A2 -E "entry function 'w4a16_mt(8_w4_wg|8_wg_n256|4_w4_wg|4_s3_wg_n256|8_w4_wgd|8_wgd_n256|4_w4_wgd|4_s3_wgd_n256|1_w4_fp4)' for 'sm_90a'" "$out/build.log" |
	grep -E "entry|Used|spill" | sed 's/ptxas info    : //; s/Compiling entry function //' | paste - - - | cut -c1-200
grep -E "C75[0-9][0-9]" "$out/build.log" | cut -c1-200 | head
new=$build/w4a16.sm_90.cubin
MOECAST_W4A16_MODULE=$new timeout 200 new/gpu.test -test.v \
	-test.run 'GEMMOnDevice|^TestMoEOnDevice|WGDefaultOnDevice|WGPersistOnDevice|SplitOnDevice|MXFP4MoEOnDevice|MoELayerOnDevice' >"$out/correct.log" 2>&1
echo "tests rc $?"
MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 60 new/gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
echo "ptx tests rc $?"
stamp checked
grep -hE "^(--- FAIL|FAIL|panic)|cases, worst" "$out"/correct*.log | cut -c1-200 | head -30
grep -hE "_wgd.*rel error [0-9.e-]+$|Mode:7.*rel error [0-9.e-]+$" "$out/correct.log" | awk '{n++; if ($NF > w) w = $NF} END {printf "deep (mode 7): %d cases, worst rel error %s\n", n, w}'
cd "$here"
SHAPES=tp8 INT4=0 PYTHONUNBUFFERED=1 timeout 100 python3 bench/gpu_w4a16_torch.py 512,1024,2048 >"$out/torch.jsonl" 2>"$out/torch.err"
echo "torch rc $?"
python3 -c '
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("kernel")=="torch_mm_bf16": print("torch bf16 %-14s M=%-5d %7.1f us"%(r["name"],r["m"],r["graph_s"]*1e6))
' "$out/torch.jsonl"
MOECAST_W4A16_MODULE=$new MOECAST_GPU_BENCH=$out/tp8.jsonl MOECAST_GPU_BENCH_M=512,1024,2048 MOECAST_GPU_BENCH_SHAPES=tp8 \
	MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=tp8 timeout 200 "$pay/new/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/tp8.log" 2>&1
echo "tp8 bench rc $?"
grep -E "us graph|FAIL|panic" "$out/tp8.log" | grep -E "gate_up|FAIL|panic|wgd" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-100
stamp "tp8 timed"
cd "$pay"
MOECAST_W4A16_MODULE=$new timeout 100 main/calibop -ops moe,moe_mxfp4 -out "$out/new-moe.toml" >"$out/new-moe.txt" 2>"$out/new-moe-progress.txt"
stamp "calibop moe,moe_mxfp4 (new images) rc $?"
