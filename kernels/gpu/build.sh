#!/bin/sh
# Builds the W4A16 images that kernels/gpu embeds: a cubin per target (sm_80,
# sm_90 and sm_120 by default; sm_120 needs nvcc 12.8 or newer) and a
# compute_80 PTX that the driver JIT-compiles on any other sm_80+ GPU, then
# build/MANIFEST with the SHA-256 of the source and of each image (checked by
# TestBuildMatchesSource). Prints ptxas's register and spill report.
# Usage: kernels/gpu/build.sh [outdir [sm ...]]; NVCC_FLAGS adds flags
# (e.g. -ccbin g++-11 for a CUDA 11.8 nvcc).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}
[ $# -gt 0 ] && shift
sms=${*:-80 90 120}
src=$here/w4a16.cu
flags="-O3 -std=c++17 ${NVCC_FLAGS:-}"
log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
mkdir -p "$out"
rm -f "$out"/w4a16.*
pids=
for sm in $sms; do
	# shellcheck disable=SC2086
	nvcc $flags -Xptxas -v -cubin -gencode "arch=compute_$sm,code=sm_$sm" \
		-o "$out/w4a16.sm_$sm.cubin" "$src" 2>"$log.$sm" &
	pids="$pids $!"
done
# shellcheck disable=SC2086
nvcc $flags -ptx -arch=compute_80 -o "$out/w4a16.compute_80.ptx" "$src"
for p in $pids; do wait "$p" || { cat "$log".*; exit 1; }; done
for sm in $sms; do
	grep -E "Compiling entry|registers|spill" "$log.$sm" | sed "s/^/sm_$sm: /"
done
{
	echo "# built by kernels/gpu/build.sh $*: $(nvcc --version | grep -i release)"
	echo "source $(sha256sum <"$src" | cut -d' ' -f1)"
	for f in "$out"/w4a16.*; do
		echo "$(basename "$f") $(sha256sum <"$f" | cut -d' ' -f1)"
	done
} >"$out/MANIFEST"
