#!/bin/bash
# Issue 24 item 3 (branch wt-w4gu): the TP8 shards at large M with the deep
# wgmma forms (4 k16 steps' wgmmas in flight: w4a16_mt8_w4_wgd,
# w4a16_mt8_s5_w4_wgd, w4a16_mt8_wgd_n256, w4a16_mt4_w4_wgd,
# w4a16_mt8_wgpd_n256), on a GPU machine, in one call: builds w4a16.cu's
# images with build.sh (80 90 120) and, beside them, sm_90a cubins with the
# diagnostics WG_DIAG = 1 (no dequantisation), 2 (no loads after the first
# stages), 4 (no fixup of cut tiles), 8 (no wgmma) (DIAGS= : none); checks
# the new sm_90 cubin against the float64 reference (GEMM, MoE, the wgmma
# default plans, the persistent tile, the deep forms, the split plans; the
# compute_80 PTX through the JIT: GEMM); times torch.mm bf16 (cuBLAS) on the
# TP8 shapes, the "deep" benchmark plans there at M = MS, each diagnostic
# cubin on the TP8 gate_up (the "diag" plans: the deep forms alone), profiles one deep kernel with Nsight Compute
# (NCU=0: no), and compares the new images' SASS with the committed ones
# (OLD: their directory).
# Needs nvcc and python3 with torch, and DIR holding gpu.test
# (CGO_ENABLED=0 go test -c ./kernels/gpu), xz'd or not.
# Usage (from the root of a copy of the repository): bench/gpu-w4gu.sh DIR OUTDIR
set -uo pipefail
dir=${1:?usage: bench/gpu-w4gu.sh DIR OUTDIR}
out=${2:?usage: bench/gpu-w4gu.sh DIR OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
ms=${MS:-512,1024,2048}
diags=${DIAGS-1 2 4 8}
old=${OLD:-}
for f in "$dir"/*.xz; do [ -e "$f" ] && xz -df "$f"; done
chmod +x "$dir"/gpu.test
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
t0=$(date +%s)
stamp() { echo "[$(($(date +%s) - t0)) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
build=$out/build
mkdir -p "$build"
cp "$here/kernels/gpu/build/MANIFEST" "$build/"
for d in $diags; do
	nvcc -O3 -std=c++17 -DWG_DIAG=$d -Xptxas -v -cubin -gencode arch=compute_90a,code=sm_90a \
		-o "$out/diag$d.sm_90.cubin" "$here/kernels/gpu/w4a16.cu" >"$out/diag$d.build.log" 2>&1 &
done
{
	nvcc --version | tail -2
	STEMS=w4a16 "$here/kernels/gpu/build.sh" "$build" 80 90 120
} >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
wait
stamp "built"
grep -A2 -E "entry function 'w4a16_mt(8_w4_wg|4_w4_wg|8_wg_n256|8_wgp_n256|8_w4_wgd|8_s5_w4_wgd|8_wgd_n256|4_w4_wgd|8_wgpd_n256)' for 'sm_90a'" "$out/build.log" | grep -E "entry|Used|spill" | sed 's/ptxas info    : //'
grep -E "C7[0-9][0-9][0-9]|arning" "$out/build.log" | grep -v "^#" | cut -c1-220 | sort | uniq -c | head
for d in $diags; do [ -s "$out/diag$d.sm_90.cubin" ] || echo "diag $d: no cubin: $(tail -3 "$out/diag$d.build.log")"; done
export MOECAST_W4A16_MODULE=$build/w4a16.sm_90.cubin
timeout ${CHECK_TIMEOUT:-240} "$dir/gpu.test" -test.v -test.run 'GEMMOnDevice|^TestMoEOnDevice|WGDefaultOnDevice|WGPersistOnDevice|WGDeepOnDevice|SplitOnDevice' >"$out/correct.log" 2>&1
echo "tests rc $?"
MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 100 "$dir/gpu.test" -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
echo "ptx tests rc $?"
stamp "checked"
grep -hE "^(--- FAIL|FAIL|ok|panic)|cases, worst|rel error [0-9.e-]+: " "$out"/correct*.log | cut -c1-220 | head -30
for pat in "Mode:7|_wgd" "Mode:8|_wgpd" "Mode:5|_wg[ _]" "Mode:6|_wgp[ _]"; do
	grep -hE "($pat).*rel error [0-9.e-]+$" "$out/correct.log" | awk -v p="$pat" '{n++; if ($NF > w) w = $NF} END {printf "%s: %d cases, worst rel error %s\n", p, n, w}'
done
SHAPES=tp8 INT4=0 PYTHONUNBUFFERED=1 timeout 100 python3 "$here/bench/gpu_w4a16_torch.py" "$ms" >"$out/torch.jsonl" 2>"$out/torch.err"
echo "torch rc $?"
python3 -c '
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("kernel")=="torch_mm_bf16": print("torch bf16 %-14s M=%-5d %7.1f us"%(r["name"],r["m"],r["graph_s"]*1e6))
' "$out/torch.jsonl"
MOECAST_GPU_BENCH=$out/deep.jsonl MOECAST_GPU_BENCH_M=$ms MOECAST_GPU_BENCH_SHAPES=tp8 \
	MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=deep timeout 200 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/deep.log" 2>&1
echo "deep bench rc $?"
grep -E "us graph|FAIL|panic" "$out/deep.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-100
stamp "deep timed"
for d in $diags; do
	[ -s "$out/diag$d.sm_90.cubin" ] || continue
	MOECAST_W4A16_MODULE=$out/diag$d.sm_90.cubin MOECAST_GPU_BENCH=$out/diag$d.jsonl MOECAST_GPU_BENCH_M=$ms MOECAST_GPU_BENCH_SHAPES="tp8 gate_up" \
		MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=diag timeout 120 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/diag$d.log" 2>&1
	echo "diag $d bench rc $?"
	grep -E "us graph|FAIL|panic" "$out/diag$d.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-100
done
stamp "diagnostics timed"
if [ "${NCU:-1}" != 0 ] && command -v ncu >/dev/null; then
	sec="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section LaunchStats"
	for k in ${NCU_KERNELS:-w4a16_mt8_w4_wgd}; do
		MOECAST_GPU_BENCH=/tmp/ncu.jsonl MOECAST_GPU_BENCH_M=2048 MOECAST_GPU_BENCH_SHAPES="tp8 gate_up" \
			MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=diag timeout 90 ncu --clock-control none -k "regex:^$k\$" --launch-skip 5 --launch-count 1 $sec \
			"$dir/gpu.test" -test.run BenchOnDevice >"$out/ncu-$k-M2048.txt" 2>&1
		stamp "ncu $k rc $?"
		grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|L2 Cache Throughput|DRAM Throughput|Executed Ipc A|Issue Slots|Warp Cycles Per Issued|Registers Per|Tensor|Grid Size|SM Active" "$out/ncu-$k-M2048.txt" | head -14
	done
fi
if [ -n "$old" ] && [ -x "$here/bench/sass_diff.py" -o -e "$here/bench/sass_diff.py" ]; then
	for sm in 90 80 120; do
		cuobjdump -sass "$old/w4a16.sm_$sm.cubin" >/tmp/old$sm.sass 2>/dev/null
		cuobjdump -sass "$build/w4a16.sm_$sm.cubin" >/tmp/new$sm.sass 2>/dev/null
		echo "sm_$sm: $(python3 "$here/bench/sass_diff.py" /tmp/old$sm.sass /tmp/new$sm.sass | tr '\n' ';')"
	done | tee "$out/sassdiff.txt"
fi
stamp done
