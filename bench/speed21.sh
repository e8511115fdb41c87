#!/bin/sh
# Issue 21's speed targets, two revisions side by side in one run:
#   bench/speed21.sh OLD_REV NEW_REV [ROUNDS]
# builds each revision (git archive into a temporary directory) with this
# tree's serve/scenario_bench_test.go copied in (so that both run the same
# benchmark), then runs ROUNDS rounds (default 2), each OLD then NEW so both
# see the same load:
#   - GOMAXPROCS=1 serve benchmarks ScenarioClosedLoop (the shipped MoE
#     scenarios as `moecast simulate` runs them, client lengths on) and
#     SimClosedLoop (issue 9's points), BENCHTIME (default 5x);
#   - `moecast plan kimi-k2.5-plan-1k1k` (the README's plan example) on
#     every core, PLANS times (default 3), /usr/bin/time wall and CPU.
# uptime is printed before and after each part (other engineers build on
# the same machine). Targets: 640 requests at C=64 8k/1k <= 0.15 s and
# 10,000 at C=256 <= 0.5 s on one core; the plan case <= 3 s wall on 2
# cores (goal 1 s).
set -eu
old=$1; new=$2; rounds=${3:-2}; bt=${BENCHTIME:-5x}; np=${PLANS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
for side in old new; do
	eval rev=\$$side
	mkdir -p "$work/$side/src"
	git -C "$root" archive "$rev" | tar -x -C "$work/$side/src"
	cp "$root/serve/scenario_bench_test.go" "$work/$side/src/serve/"
	(cd "$work/$side/src" && go test -c -o "$work/$side/serve.test" ./serve &&
		go build -o "$work/$side/moecast" ./cmd/moecast)
	echo "$side = $rev ($(git -C "$root" rev-parse --short "$rev"))"
done
for r in $(seq 1 "$rounds"); do
	for side in old new; do
		echo "== round $r $side serve benchmarks, GOMAXPROCS=1; $(uptime)"
		(cd "$work/$side/src/serve" && GOMAXPROCS=1 "$work/$side/serve.test" -test.run '^$' \
			-test.bench 'ScenarioClosedLoop|SimClosedLoop' -test.benchtime "$bt" | grep '^Benchmark')
	done
	for side in old new; do
		echo "== round $r $side plan kimi-k2.5-plan-1k1k; $(uptime)"
		for i in $(seq 1 "$np"); do
			taskset -c 0,1 /usr/bin/time -f "$side plan: %e s wall, %U s user, %S s sys, %M KB" \
				"$work/$side/moecast" plan kimi-k2.5-plan-1k1k >/dev/null
		done
	done
done
echo "== end; $(uptime)"
rm -rf "$work"
