#!/bin/bash
# The whole calib gpu campaign (every default op), as the embedded h200-sxm
# calibration is produced (calibop -ops all: the ops of `moecast calib gpu`),
# timed, with each progress line stamped (seconds since the epoch) so that
# the time of every step and op can be read back.
# Usage: bench/gpu-campaign-speed.sh DIR OUTDIR [TAG]. DIR holds calibop
#   (CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -ldflags="-s -w"
#   ./bench/calibop), plain, .gz or .xz; or a .tar.xz of folders each holding
#   one (two builds in one payload: xz -9 stores the second almost free), of
#   which DIR/TAG/calibop runs. LIMIT: seconds the campaign may take (420).
#   Writes OUTDIR/TAG.toml, TAG.txt (stdout: per-op times and the report),
#   TAG-progress.txt (the progress lines, each stamped), times.txt.
#   QUICK=1 runs `-quick` (as `moecast calib gpu --quick`).
set -uo pipefail
dir=${1:?usage: bench/gpu-campaign-speed.sh DIR OUTDIR [TAG]}
out=${2:?usage: bench/gpu-campaign-speed.sh DIR OUTDIR [TAG]}
tag=${3:-full}
for f in "$dir"/*.tar.xz; do [ -e "$f" ] && { tar -C "$dir" -xJf "$f" 2>/dev/null || python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$f" "$dir"; rm -f "$f"; }; done
for f in "$dir"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
for f in "$dir"/*.xz; do [ -e "$f" ] && { xz -d -f "$f" 2>/dev/null || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; }; done
bin=$dir/calibop
[ -x "$dir/$tag/calibop" ] && bin=$dir/$tag/calibop
chmod +x "$bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee -a "$out/times.txt"
s=$(date +%s.%N)
q=
[ "${QUICK:-0}" = 1 ] && q=-quick
timeout ${LIMIT:-420} "$bin" $q -ops all -out "$out/$tag.toml" >"$out/$tag.txt" \
	2> >(while IFS= read -r l; do echo "$(date +%s.%N) $l"; done >"$out/$tag-progress.txt")
rc=$?
e=$(date +%s.%N)
sleep 1
echo "$tag rc $rc: $(awk "BEGIN{printf \"%.1f\", $e - $s}") s (start $s)" | tee -a "$out/times.txt"
grep -E "^NVIDIA|^op " "$out/$tag.txt"
