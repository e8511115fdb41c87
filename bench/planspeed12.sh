#!/bin/bash
# Plan speed, session 12 (RESULTS-planspeed12.md): two moecast binaries
# side by side in one run on this machine:
#   bench/planspeed12.sh OLD NEW [ROUNDS] [ARGS...]   (bash: its time builtin)
# Each round runs `OLD plan kimi-k2.5-plan-1k1k ARGS` then NEW's (wall,
# user and sys seconds, stdout discarded); the load average is printed
# before and after, and each side's median wall and user+sys at the end.
# With QUIET=P a round starts only once the machine's other work used
# under P% of its CPUs over the last half second (the dev box is shared:
# a wall time is only the program's own when both cores are free); it
# waits at most QUIETWAIT seconds (default 120) per round.
set -eu
old=$1; new=$2; rounds=${3:-5}; shift $(( $# < 3 ? $# : 3 ))
echo "start $(date -u +%T); $(nproc) CPUs; $(uptime)"
TIMEFORMAT='%R %U %S'
declare -A walls cpus
busy() { # percent of CPU time not idle over 0.5 s
	local a b
	read -r -a a < <(head -1 /proc/stat); sleep 0.5; read -r -a b < <(head -1 /proc/stat)
	local ta=0 tb=0 i
	for i in 1 2 3 4 5 6 7 8; do ta=$((ta + a[i])); tb=$((tb + b[i])); done
	local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) tot=$((tb - ta))
	echo $(( tot > 0 ? 100 * (tot - idle) / tot : 0 ))
}
quiet() { # waits for a quiet half second (QUIET unset: at once); 1 when none came
	[ -z "${QUIET:-}" ] && { echo 0; return; }
	local w=0
	until [ "$(busy)" -lt "$QUIET" ]; do
		w=$((w + 1))
		[ $w -gt $(( 2 * ${QUIETWAIT:-120} )) ] && { echo 1; return; }
	done
	echo 0
}
med() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else if (NR%2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }
declare -A qwalls qcpus
for r in $(seq 1 "$rounds"); do
	for side in old new; do
		eval bin=\$$side
		loud=$(quiet)
		t=$( { time "$bin" plan kimi-k2.5-plan-1k1k "$@" >/dev/null; } 2>&1 )
		read -r w u s <<<"$t"
		c=$(echo "$u + $s" | bc)
		tag=""
		[ -n "${QUIET:-}" ] && { [ "$loud" = 0 ] && tag=" (quiet start)" || tag=" (not quiet)"; }
		echo "round $r $side wall $w user $u sys $s$tag"
		walls[$side]+="$w "
		cpus[$side]+="$c "
		if [ -n "${QUIET:-}" ] && [ "$loud" = 0 ]; then
			qwalls[$side]+="$w "
			qcpus[$side]+="$c "
		fi
	done
done
for side in old new; do
	echo "$side median wall $(echo ${walls[$side]} | med) s, user+sys $(echo ${cpus[$side]} | med) s"
	if [ -n "${QUIET:-}" ]; then
		echo "$side quiet-start runs: median wall $(echo ${qwalls[$side]:-} | med) s, user+sys $(echo ${qcpus[$side]:-} | med) s ($(echo ${qwalls[$side]:-} | wc -w) runs)"
	fi
done
echo "end $(date -u +%T); $(uptime)"
