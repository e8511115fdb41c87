#!/usr/bin/env bash
# Validate benchmark (issue 11, item 6): `moecast validate trace` against
# `moecast trace summary` on the same eight generated vLLM-like rank files
# (trace/tracegen: Kimi-K2.5-like, TP8), one after the other, REPEAT runs of
# each, median wall kept. Target: validate at most 2x trace summary.
#
#   bench/validate.sh                    # 8 x 80 MB ranks
#   RANK_SIZE=32MB REPEAT=3 bench/validate.sh
#   CPUS=0,1 bench/validate.sh           # pin to two cores (taskset)
#
# Needs go (or prebuilt bench/out/bin/{moecast,tracegen}) and GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."

RANK_SIZE=${RANK_SIZE:-80MB}
REPEAT=${REPEAT:-5}
CPUS=${CPUS:-}
OUT=bench/out
BIN=$OUT/bin
mkdir -p "$BIN"
if command -v go >/dev/null; then
	CGO_ENABLED=0 go build -o "$BIN/moecast" ./cmd/moecast
	CGO_ENABLED=0 go build -o "$BIN/tracegen" ./bench/tracegen
fi
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "GNU time missing: apt-get install time" >&2; exit 1; }
PIN=()
if [ -n "$CPUS" ]; then PIN=(taskset -c "$CPUS"); fi
RANKS=$OUT/ranks8-$RANK_SIZE
if [ ! -f "$RANKS/rank7.pt.trace.json.gz" ]; then
	"$BIN/tracegen" -out "$RANKS" -size "$RANK_SIZE" -ranks 8
fi
rbytes=0
for f in "$RANKS"/rank*.pt.trace.json.gz; do rbytes=$((rbytes + $(gzip -dc "$f" | wc -c))); done

# median NAME CMD...: REPEAT runs, interleaved by the caller; prints walls.
walls() { sort -n | awk -v m=$(((REPEAT + 1) / 2)) 'NR == m'; }
S=() V=()
for ((k = 1; k <= REPEAT; k++)); do
	"$TIME" -f "%e %U %S %M" -o "$OUT/time-s.txt" "${PIN[@]}" "$BIN/moecast" trace summary "$RANKS" >/dev/null
	S+=("$(cat "$OUT/time-s.txt")")
	"$TIME" -f "%e %U %S %M" -o "$OUT/time-v.txt" "${PIN[@]}" "$BIN/moecast" validate trace "$RANKS" \
		--scenario kimi-k2.5-rtx-pro-6000-pcie-tp8 >"$OUT/out-validate.txt"
	V+=("$(cat "$OUT/time-v.txt")")
done
echo "machine: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "eight ranks: $RANKS, $rbytes bytes JSON in all; $REPEAT runs each, interleaved"
ms=$(printf '%s\n' "${S[@]}" | walls)
mv=$(printf '%s\n' "${V[@]}" | walls)
echo "trace summary   walls: $(printf '%s\n' "${S[@]}" | awk '{printf "%s ", $1}')  median: $ms (wall user sys maxrss_KB)"
echo "validate trace  walls: $(printf '%s\n' "${V[@]}" | awk '{printf "%s ", $1}')  median: $mv"
awk -v a="${ms%% *}" -v b="${mv%% *}" 'BEGIN { printf "ratio validate / summary (median walls): %.2fx (target <= 2x)\n", b/a }'
