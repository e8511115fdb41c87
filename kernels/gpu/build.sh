#!/bin/sh
# Builds the images that kernels/gpu embeds, for every source <stem>.cu of
# the package (w4a16.cu and the others): a cubin per target (sm_80, sm_90 and
# sm_120 by default; sm_120 needs nvcc 12.8 or newer) and a compute_80 PTX
# that the driver JIT-compiles on any other sm_80+ GPU, then build/MANIFEST
# with the SHA-256 of each source and of each image (checked by
# TestBuildMatchesSource). Prints ptxas's register and spill report.
# Usage: kernels/gpu/build.sh [outdir [sm ...]]; NVCC_FLAGS adds flags
# (e.g. -ccbin g++-11 for a CUDA 11.8 nvcc); STEMS="w4a16 glue" builds only
# those sources (the MANIFEST keeps the other sources' lines).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}
[ $# -gt 0 ] && shift
sms=${*:-80 90 120}
stems=${STEMS:-$(cd "$here" && ls ./*.cu | sed 's|^\./||; s|\.cu$||' | tr '\n' ' ')}
flags="-O3 -std=c++17 ${NVCC_FLAGS:-}"
log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
mkdir -p "$out"
for stem in $stems; do
	src=$here/$stem.cu
	rm -f "$out/$stem".*
	pids=
	for sm in $sms; do
		# shellcheck disable=SC2086
		# sm_90 is built as sm_90a (Hopper's wgmma; runs on compute capability 9.0 only, as any sm_90 cubin).
		arch=$sm
		[ "$sm" = 90 ] && arch=90a
		nvcc $flags -Xptxas -v -cubin -gencode "arch=compute_$arch,code=sm_$arch" \
			-o "$out/$stem.sm_$sm.cubin" "$src" 2>"$log.$stem.$sm" &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086
	nvcc $flags -ptx -arch=compute_80 -o "$out/$stem.compute_80.ptx" "$src"
	for p in $pids; do wait "$p" || { cat "$log".*; exit 1; }; done
	for sm in $sms; do
		grep -E "Compiling entry|registers|spill" "$log.$stem.$sm" | sed "s/^/$stem sm_$sm: /"
	done
done
old=$(grep -v '^#' "$out/MANIFEST" 2>/dev/null || true)
{
	echo "# built by kernels/gpu/build.sh $*: $(nvcc --version | grep -i release)"
	for stem in $(cd "$here" && ls ./*.cu | sed 's|^\./||; s|\.cu$||'); do
		if echo " $stems " | grep -q " $stem "; then
			echo "$stem.cu $(sha256sum <"$here/$stem.cu" | cut -d' ' -f1)"
			for f in "$out/$stem".*; do
				echo "$(basename "$f") $(sha256sum <"$f" | cut -d' ' -f1)"
			done
		else
			echo "$old" | grep "^$stem\." || true
		fi
	done
} >"$out/MANIFEST.new"
mv "$out/MANIFEST.new" "$out/MANIFEST"
