#!/bin/bash
# Issue 24, the TP8 shards and small M (branch wt-w4tp8): the 64-row wgmma
# tiles (w4a16_mt4_s3_wg_n256, w4a16_mt4_w4_wg: two blocks a multiprocessor)
# and the 6-stage swapped-operand kernel (w4a16_mt1_s6_sw), then the
# persistent wgmma tile (w4a16_mt8_wgp_n256, w4a16_mt8_w4_wgp), on a GPU machine,
# in one call: builds w4a16.cu's images with nvcc there, checks the kernels
# against the float64 reference (the sm_90 cubin: GEMM, MoE, the wgmma
# default plans and the split plans on the TP8 shapes; the compute_80 PTX
# through the JIT: GEMM), times torch.mm bf16 (cuBLAS) on the TP8 shapes,
# every plan of MOECAST_GPU_BENCH_VARIANTS=tp8 there at M = MS and on the
# dense up 18432 x 7168 at M = SMALL (SMALL= : none). BENCH_SHAPES: a
# substring of the bench shapes' names for the large-M rows and torch's
# (default tp8; empty: every shape).
# Needs nvcc and python3 with torch, and DIR holding gpu.test
# (CGO_ENABLED=0 go test -c ./kernels/gpu), xz'd or not.
# Usage: bench/gpu-w4a16-tp8.sh DIR OUTDIR. Writes OUTDIR/build/ (images and
# MANIFEST for kernels/gpu/build) and logs. BUILD=0: no build, the embedded
# images (then only the checks and the benchmarks).
set -uo pipefail
dir=${1:?usage: bench/gpu-w4a16-tp8.sh DIR OUTDIR}
out=${2:?usage: bench/gpu-w4a16-tp8.sh DIR OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
ms=${MS:-512,1024,2048}
small=${SMALL-1,2,4,8,16}
for f in "$dir"/*.xz; do [ -e "$f" ] && xz -df "$f"; done
chmod +x "$dir"/gpu.test
export NCCL_NVLS_ENABLE=0
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
if [ "${BUILD:-1}" != 0 ]; then
	build=$out/build
	mkdir -p "$build"
	cp "$here/kernels/gpu/build/MANIFEST" "$build/"
	{
		nvcc --version | tail -2
		STEMS=w4a16 "$here/kernels/gpu/build.sh" "$build" 80 90 120
	} >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
	stamp "built"
	grep -A2 -E "entry function 'w4a16_mt(4_s3_wg_n256|4_w4_wg|1_s6_sw|8_w4_wg|8_wg_n256|8_wgp_n256|8_w4_wgp)' for 'sm_90a'" "$out/build.log" | grep -E "entry|Used|spill" | sed 's/ptxas info    : //'
	grep -E "C75[0-9][0-9]" "$out/build.log" | grep sm_90 | cut -c1-200
	export MOECAST_W4A16_MODULE=$build/w4a16.sm_90.cubin
fi
timeout ${CHECK_TIMEOUT:-200} "$dir/gpu.test" -test.v -test.run 'GEMMOnDevice|^TestMoEOnDevice|WGDefaultOnDevice|SplitOnDevice' >"$out/correct.log" 2>&1
echo "tests rc $?"
if [ "${BUILD:-1}" != 0 ] && [ "${PTX:-1}" != 0 ]; then
	MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 100 "$dir/gpu.test" -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
	echo "ptx tests rc $?"
fi
stamp "checked"
grep -hE "^(--- |FAIL|ok|panic)|cases, worst|counter" "$out"/correct*.log | cut -c1-200 | head -20
for pat in "Mode:5|_wg" "MT:4 [^}]*Mode:5|mt4_s3_wg|mt4_w4_wg" "Stages:6 [^}]*Mode:3|Mode:3 [^}]*Stages:6|s6_sw" "Mode:6|_wgp"; do
	grep -hE "($pat).*rel error [0-9.e-]+$" "$out/correct.log" | awk -v p="$pat" '{n++; if ($NF > w) w = $NF} END {printf "%s: %d cases, worst rel error %s\n", p, n, w}'
done
SHAPES=${BENCH_SHAPES-tp8} INT4=0 PYTHONUNBUFFERED=1 timeout 100 python3 "$here/bench/gpu_w4a16_torch.py" "$ms" >"$out/torch.jsonl" 2>"$out/torch.err"
echo "torch rc $?"
python3 -c '
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("kernel")=="torch_mm_bf16": print("torch bf16 %-14s M=%-5d %7.1f us"%(r["name"],r["m"],r["graph_s"]*1e6))
    elif r.get("kernel") in ("copy","device"): print(r)
' "$out/torch.jsonl"
MOECAST_GPU_BENCH=$out/tp8.jsonl MOECAST_GPU_BENCH_M=$ms MOECAST_GPU_BENCH_SHAPES=${BENCH_SHAPES-tp8} \
	MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=${VARIANTS:-tp8} timeout 200 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/tp8.log" 2>&1
echo "tp8 bench rc $?"
grep -E "us graph|FAIL|panic" "$out/tp8.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-112
stamp "tp8 timed"
[ -z "$small" ] && exit 0
MOECAST_GPU_BENCH=$out/small.jsonl MOECAST_GPU_BENCH_M=$small MOECAST_GPU_BENCH_SHAPES="dense up 18432" \
	MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=${VARIANTS:-tp8} timeout 100 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/small.log" 2>&1
echo "small bench rc $?"
grep -E "us graph|FAIL|panic" "$out/small.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-112
stamp done
