#!/bin/bash
# Issue 24 item 3, the small-M W4A16 regression (branch wt-w4small): on a GPU
# machine, in one call, builds w4a16.cu's images from PAY/kgpu (the branch's
# kernels/gpu sources and build.sh; build.sh 80 90 120, as run 24), prints
# ptxas's registers and spills of the small-M kernels, compares the new
# images' SASS with main's (the repository's kernels/gpu/build, PAY being
# bench/out/NAME) and with run 14's sm_90 image (PAY/run14.w4a16.sm_90.cubin.xz:
# git show 0be37af:kernels/gpu/build/w4a16.sm_90.cubin | xz), checks the new sm_90 cubin
# against the float64 reference (GEMM, MoE, wgmma default plans, persistent
# tile, split plans, MXFP4 MoE, the whole MoE layer; the compute_80 PTX
# through the JIT: GEMM), then times the moe and moe_mxfp4 ops of `calib gpu`
# (calibop: the Kimi-K2.5 W4A16 layer at TP8 and EP8, 1-8192 tokens, and
# gpt-oss's MXFP4 layer) on main's images and the new ones, alternating
# (main, new, main, new) on the same GPU.
# PAY holds bins.tar.xz (gpu.test: CGO_ENABLED=0 go test -c ./kernels/gpu;
# calibop: go build ./bench/calibop; both embed main's images), kgpu/ (the
# *.cu, build.sh and build/MANIFEST), sass_diff.py and run 14's cubin.
# Needs nvcc and cuobjdump. Usage: bench/gpu-w4a16-small.sh PAY OUTDIR.
set -uo pipefail
pay=$(cd "${1:?usage: bench/gpu-w4a16-small.sh PAY OUTDIR}" && pwd)
out=${2:?usage: bench/gpu-w4a16-small.sh PAY OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export NCCL_NVLS_ENABLE=0
t0=$(date +%s)
stamp() { echo "[$(($(date +%s) - t0)) s] $*"; }
cd "$pay" || exit 1
[ -e bins.tar.xz ] && { tar -xJf bins.tar.xz && rm -f bins.tar.xz; }
[ -e run14.w4a16.sm_90.cubin.xz ] && xz -df run14.w4a16.sm_90.cubin.xz
main=$pay/../../../kernels/gpu/build
chmod +x gpu.test calibop kgpu/build.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
build=$out/build
mkdir -p "$build"
cp kgpu/build/MANIFEST "$build/"
{
	nvcc --version | tail -2
	STEMS=w4a16 kgpu/build.sh "$build" 80 90 120
} >"$out/build.log" 2>&1 || {
	tail -40 "$out/build.log"
	exit 1
}
stamp "built"
grep -A2 -E "entry function 'w4a16_mt(1|2|1_w4|2_w4|1_s6|2_s6|1_sw|1_w4_sw|1_s6_sw|1_fp4|1_w4_fp4|2_fp4|4_w4|8_wg_n256|4_n256)' for 'sm_90a'" "$out/build.log" |
	grep -E "entry|Used|spill" | sed 's/ptxas info    : //; s/Compiling entry function //' | paste - - - | cut -c1-200
echo "sm_90 kernels with spills: $(grep -A1 "for 'sm_90a'" "$out/build.log" | grep -c -E ' [1-9][0-9]* bytes spill stores')"
for sm in 90 80 120; do
	cuobjdump -sass "$main/w4a16.sm_$sm.cubin" >"/tmp/main$sm.sass"
	cuobjdump -sass "$build/w4a16.sm_$sm.cubin" >"/tmp/new$sm.sass"
	echo "main -> new sm_$sm: $(python3 sass_diff.py "/tmp/main$sm.sass" "/tmp/new$sm.sass" | tr '\n' ';')"
done | tee "$out/sassdiff.txt"
cuobjdump -sass run14.w4a16.sm_90.cubin >/tmp/r14.sass
echo "run14 -> new sm_90: $(python3 sass_diff.py /tmp/r14.sass /tmp/new90.sass | tr '\n' ';')" | tee -a "$out/sassdiff.txt"
stamp "sass compared"
new=$build/w4a16.sm_90.cubin
MOECAST_W4A16_MODULE=$new timeout "${CHECK_TIMEOUT:-150}" ./gpu.test -test.v \
	-test.run 'GEMMOnDevice|^TestMoEOnDevice|WGDefaultOnDevice|WGPersistOnDevice|SplitOnDevice|MXFP4MoEOnDevice|MoELayerOnDevice' >"$out/correct.log" 2>&1
echo "tests rc $?"
MOECAST_W4A16_MODULE=$build/w4a16.compute_80.ptx timeout 60 ./gpu.test -test.v -test.run 'GEMMOnDevice' >"$out/correct-ptx.log" 2>&1
echo "ptx tests rc $?"
stamp "checked"
grep -hE "^(--- |FAIL|ok|panic)|cases, worst|counter" "$out"/correct*.log | cut -c1-200 | head -30
for r in 1 2; do
	for v in main new; do
		if [ "$v" = new ]; then export MOECAST_W4A16_MODULE=$new; else unset MOECAST_W4A16_MODULE; fi
		timeout "${OP_TIMEOUT:-70}" ./calibop -ops moe,moe_mxfp4 -out "$out/$v$r.toml" >"$out/$v$r.txt" 2>"$out/$v$r-progress.txt"
		stamp "$v$r rc $?: $(grep -m1 -o 'moecast w4a16 (kernels/gpu, [^)]*)' "$out/$v$r.toml")"
	done
done
unset MOECAST_W4A16_MODULE
stamp done
