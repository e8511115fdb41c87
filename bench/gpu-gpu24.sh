#!/bin/bash
# Issue 24 leftovers (branch wt-gpu24), on a GPU machine in one call:
#  1. calibop -ops moe twice on main's images (the Kimi-K2.5 W4A16 layer
#     table of the embedded h200-sxm calibration, retimed after the small-M
#     fix) and kernels/gpu's device tests on main's images (main's gpu.test);
#  2. builds w4a16.cu's images from PAY/kgpu (build.sh 80 90 120; the _wgd
#     kernels: the wgmma tile with four k16 steps' A fragments) and, in
#     parallel, an sm_90 cubin with -DFP4_W4_MINB=3 (w4a16_mt1_w4_fp4 built
#     for 3 blocks an SM: no spill?); prints ptxas's report of those kernels;
#  3. checks the new sm_90 cubin (GEMM, MoE, wgmma default plans, persistent
#     tile, split plans, MXFP4 MoE, MoE layer; the compute_80 PTX: GEMM);
#  4. times torch.mm bf16 on the TP8 shapes and every tp8 plan (the _wgd
#     ones among them) at M = 512, 1024, 2048 with the new cubin;
#  5. calibop -ops moe_mxfp4 on main's images and the FP4_W4_MINB=3 cubin,
#     alternating.
# PAY holds bins.tar.xz (main/gpu.test, main/calibop: main's code and images;
# new/gpu.test: this branch's) and kgpu/ (*.cu, build.sh, build/MANIFEST).
# Usage (repository root): bench/gpu-gpu24.sh PAY OUTDIR
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
chmod +x main/gpu.test main/calibop new/gpu.test kgpu/build.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
# 2 (in the background while 1 runs: CPU only)
build=$out/build
mkdir -p "$build" /tmp/fp4b
cp kgpu/build/MANIFEST "$build/"
( { nvcc --version | tail -2; STEMS=w4a16 kgpu/build.sh "$build" 80 90 120; } >"$out/build.log" 2>&1; echo "build rc $?" >"$out/build.rc" ) &
bpid=$!
( NVCC_FLAGS=-DFP4_W4_MINB=3 STEMS=w4a16 kgpu/build.sh /tmp/fp4b 90 >"$out/build-fp4.log" 2>&1; echo "fp4 build rc $?" >"$out/build-fp4.rc" ) &
fpid=$!
# 1
for r in 1 2; do
	timeout 70 main/calibop -ops moe -out "$out/moe$r.toml" >"$out/moe$r.txt" 2>"$out/moe$r-progress.txt"
	stamp "main moe$r rc $?"
done
timeout 170 main/gpu.test -test.v -test.timeout 165s >"$out/tests-main.log" 2>&1
stamp "main gpu.test rc $?: $(grep -cE '^--- PASS' "$out/tests-main.log") pass, $(grep -cE '^--- SKIP' "$out/tests-main.log") skip, $(grep -cE '^--- FAIL' "$out/tests-main.log") fail"
grep -E "cases, worst|^--- FAIL|^FAIL|panic" "$out/tests-main.log" | sed 's/^ *//' | cut -c1-160 | head -20
wait $bpid $fpid
cat "$out/build.rc" "$out/build-fp4.rc"
grep -q "rc 0" "$out/build.rc" || { tail -30 "$out/build.log"; exit 1; }
stamp built
grep -A2 -E "entry function 'w4a16_mt(8_w4_wg|8_wg_n256|4_w4_wg|4_s3_wg_n256|8_w4_wgd|8_wgd_n256|4_w4_wgd|4_s3_wgd_n256|1_w4_fp4)' for 'sm_90a'" "$out/build.log" |
	grep -E "entry|Used|spill" | sed 's/ptxas info    : //; s/Compiling entry function //' | paste - - - | cut -c1-200
grep -A2 -E "entry function 'w4a16_mt1_w4_fp4' for 'sm_90a'" "$out/build-fp4.log" | grep -E "Used|spill" | sed 's/^/FP4_W4_MINB=3: /' | cut -c1-160
grep -E "C75[0-9][0-9]" "$out/build.log" | cut -c1-200 | head
new=$build/w4a16.sm_90.cubin
# 3
MOECAST_W4A16_MODULE=$new timeout 200 new/gpu.test -test.v \
	-test.run 'GEMMOnDevice|^TestMoEOnDevice|WGDefaultOnDevice|WGPersistOnDevice|SplitOnDevice|MXFP4MoEOnDevice|MoELayerOnDevice' >"$out/correct.log" 2>&1
echo "tests rc $?"
MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 60 new/gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
echo "ptx tests rc $?"
stamp checked
grep -hE "^(--- FAIL|FAIL|panic)|cases, worst" "$out"/correct*.log | cut -c1-200 | head -30
grep -hE "_wgd.*rel error [0-9.e-]+$|Mode:7.*rel error [0-9.e-]+$" "$out/correct.log" | awk '{n++; if ($NF > w) w = $NF} END {printf "deep (mode 7): %d cases, worst rel error %s\n", n, w}'
# 4
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
grep -E "us graph|FAIL|panic" "$out/tp8.log" | sed 's/^ *device_test.go:[0-9]*: //' | cut -c1-100
stamp "tp8 timed"
# 5
cd "$pay"
if grep -q "rc 0" "$out/build-fp4.rc"; then
	for r in 1 2; do
		for v in main fp4; do
			if [ "$v" = fp4 ]; then export MOECAST_W4A16_MODULE=/tmp/fp4b/w4a16.sm_90.cubin; else unset MOECAST_W4A16_MODULE; fi
			timeout 40 main/calibop -ops moe_mxfp4 -out "$out/mx-$v$r.toml" >"$out/mx-$v$r.txt" 2>"$out/mx-$v$r-progress.txt"
			stamp "mxfp4 $v$r rc $?"
		done
	done
	unset MOECAST_W4A16_MODULE
fi
stamp done
