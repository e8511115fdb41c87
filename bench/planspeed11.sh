#!/bin/bash
# Plan speed, session 11 (RESULTS-planspeed11.md): two moecast binaries side
# by side in one run, on two physical cores of an otherwise idle machine:
#   bench/planspeed11.sh OLD NEW [ROUNDS]   (bash: its time builtin)
# Each round runs OLD then NEW, PLANS times each (default 3):
#   - `moecast plan kimi-k2.5-plan-1k1k` under taskset on two cores that
#     are not hyperthread siblings: wall, user and sys seconds;
#   - the same with --disagg;
#   - the same on one core (GOMAXPROCS=1): its CPU time.
set -eu
old=$1; new=$2; rounds=${3:-3}; np=${PLANS:-3}
c0=0
c1=$(awk -v s="$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null || echo 0)" \
	'BEGIN { n = split(s, a, /[,-]/); for (i = 1; i <= n; i++) sib[a[i]] = 1; for (c = 1; c < 1024; c++) if (!(c in sib)) { print c; exit } }')
echo "cores $c0,$c1 (cpu0 siblings: $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null)); $(nproc) CPUs; $(uptime)"
TIMEFORMAT='%R %U %S'
for r in $(seq 1 "$rounds"); do
	for mode in agg disagg one; do
		for side in old new; do
			eval bin=\$$side
			for i in $(seq 1 "$np"); do
				case $mode in
				agg) t=$( { time taskset -c $c0,$c1 "$bin" plan kimi-k2.5-plan-1k1k >/dev/null; } 2>&1 ) ;;
				disagg) t=$( { time taskset -c $c0,$c1 "$bin" plan kimi-k2.5-plan-1k1k --disagg >/dev/null; } 2>&1 ) ;;
				one) t=$( { time GOMAXPROCS=1 taskset -c $c0 "$bin" plan kimi-k2.5-plan-1k1k >/dev/null; } 2>&1 ) ;;
				esac
				echo "round $r $mode $side wall/user/sys $t"
			done
		done
	done
done
echo "end; $(uptime)"
