#!/bin/bash
# Device check of kernels/gpu as built (issue 24 (d)): every device test of
# the package (correctness of every kernel against its reference, the
# timing helpers' event spans through the GEMM and replay paths), then the
# campaign: `calib gpu --quick` and the whole campaign, timed
# (bench/gpu-campaign-speed.sh, QUICK=1 for the first).
# Usage: bench/gpu-verify.sh DIR OUTDIR, DIR holding gpu.test
#   (CGO_ENABLED=0 go test -c ./kernels/gpu) and calibop (CGO_ENABLED=0 go
#   build ./bench/calibop), plain, .gz, or both in a .tar.xz (xz -9 stores
#   the second almost free). CAMPAIGN=0: the tests alone.
#   Writes OUTDIR/tests.log, quick.*, full.*, times.txt.
set -uo pipefail
dir=${1:?usage: bench/gpu-verify.sh DIR OUTDIR}
out=${2:?usage: bench/gpu-verify.sh DIR OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
for f in "$dir"/*.tar.xz; do [ -e "$f" ] && { tar -C "$dir" -xJf "$f" 2>/dev/null || python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$f" "$dir"; rm -f "$f"; }; done
for f in "$dir"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
chmod +x "$dir"/gpu.test "$dir"/calibop
export NCCL_NVLS_ENABLE=0
s=$(date +%s)
timeout ${TEST_LIMIT:-240} "$dir/gpu.test" -test.v -test.timeout 230s >"$out/tests.log" 2>&1
echo "gpu.test rc $?: $(( $(date +%s) - s )) s" | tee -a "$out/times.txt"
grep -E "^(--- (FAIL|SKIP)|FAIL|ok|PASS)|panic" "$out/tests.log" | cut -c1-160 | head -30
grep -cE "^--- PASS" "$out/tests.log" | sed 's/^/tests passed: /'
grep -E "worst" "$out/tests.log" | sed 's/^ *//' | cut -c1-160 | head -40
if [ "${CAMPAIGN:-1}" != 0 ]; then
	QUICK=1 LIMIT=${QUICK_LIMIT:-120} "$here/gpu-campaign-speed.sh" "$dir" "$out" quick
	LIMIT=${FULL_LIMIT:-300} "$here/gpu-campaign-speed.sh" "$dir" "$out" full
fi
