#!/bin/bash
# Issue 24 (branch wt-w4fix): the 256-column persistent wgmma tile's fault
# (w4a16_mt8_wgp_n256, rows 64-127 of a tile wrong in runs 18-21). Builds
# w4a16.cu's sm_90a cubin once per WGP_FIX in FIXES, bits of: 1: the tile's
# first k16 step with scale_d = 0 instead of zeroing the accumulators
# between tiles; 2: wgmma_wait<0> in the tile's last k16 step (no wgmma in
# flight when the k loop exits); 4: a proxy fence after each stage's
# cp.async wait; 8: the epilogue reads each accumulator through an xor
# with a barrier's result (0) (run 22: 0 is run 21's source). Dumps the
# SASS of the kernel (FIXES' first two), checks each cubin with
# TestWGPersistOnDevice, then, with the first passing fix, times the TP8
# shapes (tp8 variants) beside torch.mm bf16 (cuBLAS), and the dense up
# 18432 x 7168 at M = 1-16 (default plans) with that cubin and with one
# built with -DCPA_PF (cp.async's L2::256B prefetch hint), beside the
# moecast_copy ceiling of the same process.
# Usage: bench/gpu-w4a16-wgpfix.sh DIR OUTDIR (DIR holds gpu.test, xz'd or
# not; run from the repository root or a copy of it).
set -uo pipefail
dir=${1:?usage}
out=${2:?usage}
here=$(cd "$(dirname "$0")/.." && pwd)
fixes=${FIXES:-8 9 0 12}
for f in "$dir"/*.xz; do [ -e "$f" ] && xz -df "$f"; done
chmod +x "$dir"/gpu.test
mkdir -p "$out"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
nvcc --version | tail -2
for f in $fixes; do
	nvcc -O3 -std=c++17 -DWGP_FIX=$f -Xptxas -v -cubin -gencode arch=compute_90a,code=sm_90a \
		-o "$out/fix$f.sm_90.cubin" "$here/kernels/gpu/w4a16.cu" >"$out/fix$f.build.log" 2>&1 &
done
set -- $fixes
nvcc -O3 -std=c++17 -DWGP_FIX=$1 -DCPA_PF -Xptxas -v -cubin -gencode arch=compute_90a,code=sm_90a \
	-o "$out/pf.sm_90.cubin" "$here/kernels/gpu/w4a16.cu" >"$out/pf.build.log" 2>&1 &
wait
stamp built
for f in $fixes; do
	echo "fix $f: $(grep -A2 "entry function 'w4a16_mt8_wgp_n256'" "$out/fix$f.build.log" | grep -E 'Used|spill' | sed 's/ptxas info    : //' | tr '\n' ' ')"
	grep -E "C75[0-9][0-9]" "$out/fix$f.build.log" | cut -c1-200 | head -3
done
n=0
for f in $fixes; do
	[ $n -lt 2 ] && cuobjdump -sass -fun w4a16_mt8_wgp_n256 "$out/fix$f.sm_90.cubin" >"$out/sass$f.txt" 2>&1
	n=$((n + 1))
done
pass=
for f in $fixes; do
	MOECAST_W4A16_MODULE=$out/fix$f.sm_90.cubin timeout 120 "$dir/gpu.test" -test.v -test.run 'WGPersistOnDevice' >"$out/check$f.log" 2>&1
	rc=$?
	echo "fix $f: check rc $rc: $(grep -E 'persistent wgmma tile:' "$out/check$f.log" | sed 's/^ *device_test.go:[0-9]*: //')"
	grep -E "rel error" "$out/check$f.log" | grep -v "rel error [0-9.e-]*$" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-200 | head -4
	[ $rc = 0 ] && [ -z "$pass" ] && pass=$f
done
stamp checked
[ -z "$pass" ] && { echo "no fix passed"; exit 0; }
echo "timing with fix $pass"
SHAPES=tp8 INT4=0 PYTHONUNBUFFERED=1 timeout 100 python3 "$here/bench/gpu_w4a16_torch.py" 512,1024,2048 >"$out/torch.jsonl" 2>"$out/torch.err"
python3 -c '
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("kernel")=="torch_mm_bf16": print("torch bf16 %-14s M=%-5d %7.1f us"%(r["name"],r["m"],r["graph_s"]*1e6))
' "$out/torch.jsonl"
MOECAST_W4A16_MODULE=$out/fix$pass.sm_90.cubin MOECAST_GPU_BENCH=$out/tp8.jsonl MOECAST_GPU_BENCH_M=512,1024,2048 MOECAST_GPU_BENCH_SHAPES=tp8 \
	MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=tp8 timeout 200 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/tp8.log" 2>&1
echo "tp8 bench rc $?"
grep -E "us graph|FAIL|panic" "$out/tp8.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-100
stamp "tp8 timed"
for img in fix$pass pf fix$pass; do
	MOECAST_W4A16_MODULE=$out/$img.sm_90.cubin MOECAST_GPU_BENCH=$out/small-$img.jsonl MOECAST_GPU_BENCH_M=1,2,4,8,16 MOECAST_GPU_BENCH_SHAPES="dense up 18432" \
		MOECAST_GPU_BENCH_COPY=1 MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=default timeout 100 "$dir/gpu.test" -test.v -test.run 'BenchOnDevice' >"$out/small-$img.log" 2>&1
	echo "small bench $img rc $?"
	grep -E "us graph|copy|FAIL|panic" "$out/small-$img.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-100
done
stamp done
