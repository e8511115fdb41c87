#!/usr/bin/env bash
# Trace benchmark (issue 3, item 6): `moecast trace summary` (read + classify
# + steps + breakdown) against python3 -c "json.load(gzip.open(F))" alone, on
# the same generated vLLM-like trace of SIZE uncompressed JSON (gzip), run one
# after the other in this script; then eight rank files read concurrently.
#
#   bench/trace.sh                 # 1 GB trace, 8 x 128 MB ranks
#   SIZE=200MB RANK_SIZE=32MB bench/trace.sh
#   CPUS=0,1 bench/trace.sh        # pin moecast to two cores (taskset)
#   REPEAT=5 bench/trace.sh        # runs of each moecast command (median kept)
#
# Needs go (or prebuilt bench/out/bin/{moecast,tracegen,traceread}), python3
# and GNU time (/usr/bin/time; apt-get install time). Outputs go to bench/out/
# (gitignored); generated traces are kept and reused. Results measured with
# it are in bench/RESULTS-trace.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-1GB}
RANK_SIZE=${RANK_SIZE:-128MB}
CPUS=${CPUS:-}
REPEAT=${REPEAT:-3}
OUT=bench/out
BIN=$OUT/bin
mkdir -p "$BIN"

if command -v go >/dev/null; then
	CGO_ENABLED=0 go build -o "$BIN/moecast" ./cmd/moecast
	CGO_ENABLED=0 go build -o "$BIN/tracegen" ./bench/tracegen
	CGO_ENABLED=0 go build -o "$BIN/traceread" ./bench/traceread
fi
for b in moecast tracegen traceread; do
	[ -x "$BIN/$b" ] || { echo "missing $BIN/$b (no go to build it)" >&2; exit 1; }
done
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "GNU time missing: apt-get install time" >&2; exit 1; }
PIN=()
if [ -n "$CPUS" ]; then PIN=(taskset -c "$CPUS"); fi

BIG=$OUT/big-$SIZE
if [ ! -f "$BIG/rank0.pt.trace.json.gz" ]; then
	"$BIN/tracegen" -out "$BIG" -size "$SIZE" -ranks 1 -world 8
fi
RANKS=$OUT/ranks8-$RANK_SIZE
if [ ! -f "$RANKS/rank7.pt.trace.json.gz" ]; then
	"$BIN/tracegen" -out "$RANKS" -size "$RANK_SIZE" -ranks 8
fi
F=$BIG/rank0.pt.trace.json.gz
bytes=$(gzip -dc "$F" | wc -c)
rbytes=0
for f in "$RANKS"/rank*.pt.trace.json.gz; do rbytes=$((rbytes + $(gzip -dc "$f" | wc -c))); done

# run NAME CMD...: runs CMD under GNU time; sets WALL, CPU (user+sys), RSS (KiB).
run() {
	local name=$1; shift
	"$TIME" -v -o "$OUT/time-$name.txt" "$@" >"$OUT/out-$name.txt" 2>"$OUT/err-$name.txt" || {
		echo "$name failed:" >&2; cat "$OUT/err-$name.txt" >&2; exit 1; }
	WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$OUT/time-$name.txt")
	CPU=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {print u+s}' "$OUT/time-$name.txt")
	RSS=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$OUT/time-$name.txt")
}
# runs NAME CMD...: run REPEAT times; keeps the run with the median wall time
# (its CPU time) and the largest peak RSS of all runs; ALL lists the walls.
runs() {
	local name=$1; shift
	local rows="" k maxrss=0
	for ((k = 1; k <= REPEAT; k++)); do
		run "$name" "$@"
		rows+="$WALL $CPU"$'\n'
		((RSS > maxrss)) && maxrss=$RSS
	done
	read -r WALL CPU < <(printf '%s' "$rows" | sort -n | awk -v m=$(((REPEAT + 1) / 2)) 'NR == m')
	ALL=$(printf '%s' "$rows" | awk '{printf "%s%s", sep, $1; sep=" "}')
	RSS=$maxrss
}
report() { # name bytes
	awk -v n="$1" -v b="$2" -v w="$WALL" -v c="$CPU" -v r="$RSS" -v all="${ALL:-}" 'BEGIN {
		printf "%-28s %8.2f s wall %8.2f s CPU %8.0f MB/s wall %8.0f MB/s per CPU-s  peak RSS %6.0f MB",
			n, w, c, b/1e6/w, b/1e6/c, r*1024/1e6
		if (all != "") printf "  (walls: %s)", all
		printf "\n" }'
}

echo "machine: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "trace: $F, $(stat -c %s "$F") bytes gzip, $bytes bytes JSON"
echo "moecast: median of $REPEAT runs${CPUS:+, pinned to CPUs $CPUS}; python: one run"
run python python3 -c "import json,gzip,sys; json.load(gzip.open(sys.argv[1]))" "$F"
ALL="" report "python json.load" "$bytes"; PY=$WALL
runs summary "${PIN[@]}" "$BIN/moecast" trace summary "$F"
report "moecast trace summary" "$bytes"; MC=$WALL
runs read "${PIN[@]}" "$BIN/traceread" "$F"
report "reader alone (traceread)" "$bytes"
awk -v p="$PY" -v m="$MC" 'BEGIN { printf "ratio python / moecast trace summary: %.1fx\n", p/m }'
sed -n '1,4p' "$OUT/out-summary.txt"

echo "eight ranks: $RANKS, $rbytes bytes JSON in all"
runs summary8 "${PIN[@]}" "$BIN/moecast" trace summary "$RANKS"
report "moecast trace summary x8" "$rbytes"
runs read8 "${PIN[@]}" "$BIN/traceread" "$RANKS"/rank*.pt.trace.json.gz
report "reader alone x8" "$rbytes"
