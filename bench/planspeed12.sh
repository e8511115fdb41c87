#!/bin/bash
# Plan speed, session 12 (RESULTS-planspeed12.md): two moecast binaries
# side by side in one run on this machine:
#   bench/planspeed12.sh OLD NEW [ROUNDS] [ARGS...]   (bash: its time builtin)
# Each round runs `OLD plan kimi-k2.5-plan-1k1k ARGS` then NEW's (wall,
# user and sys seconds, stdout discarded); the load average is printed
# before and after, and each side's median wall and user+sys at the end.
set -eu
old=$1; new=$2; rounds=${3:-5}; shift $(( $# < 3 ? $# : 3 ))
echo "start $(date -u +%T); $(nproc) CPUs; $(uptime)"
TIMEFORMAT='%R %U %S'
declare -A walls cpus
for r in $(seq 1 "$rounds"); do
	for side in old new; do
		eval bin=\$$side
		t=$( { time "$bin" plan kimi-k2.5-plan-1k1k "$@" >/dev/null; } 2>&1 )
		read -r w u s <<<"$t"
		echo "round $r $side wall $w user $u sys $s"
		walls[$side]+="$w "
		cpus[$side]+="$(echo "$u + $s" | bc) "
	done
done
med() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }
for side in old new; do
	echo "$side median wall $(echo ${walls[$side]} | med) s, user+sys $(echo ${cpus[$side]} | med) s"
done
echo "end $(date -u +%T); $(uptime)"
