#!/bin/sh
# Plan speed, two revisions side by side in one run (RESULTS-planspeed8.md):
#   bench/planspeed8.sh OLD_REV NEW_REV [ROUNDS]
# builds each revision (git archive into a temporary directory): the
# moecast binary and the cli test binary. Each round runs OLD then NEW, so
# both see the same load:
#   - cli BenchmarkPlanReadme (agg and --disagg: `moecast plan
#     kimi-k2.5-plan-1k1k`), BENCHTIME (default 3x), ns/op and cpu-s/op;
#   - `moecast plan kimi-k2.5-plan-1k1k` under taskset -c 0,1 and
#     /usr/bin/time, PLANS times (default 3): wall and user+sys CPU.
# uptime is printed before each part (the box is shared).
set -eu
old=$1; new=$2; rounds=${3:-3}; bt=${BENCHTIME:-3x}; np=${PLANS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
for side in old new; do
	eval rev=\$$side
	mkdir -p "$work/$side/src"
	git -C "$root" archive "$rev" | tar -x -C "$work/$side/src"
	(cd "$work/$side/src" && go test -c -o "$work/$side/cli.test" ./cmd/moecast/internal/cli &&
		go build -o "$work/$side/moecast" ./cmd/moecast)
	echo "$side = $rev ($(git -C "$root" rev-parse --short "$rev"))"
done
for r in $(seq 1 "$rounds"); do
	for side in old new; do
		echo "== round $r $side PlanReadme; $(uptime)"
		(cd "$work/$side/src/cmd/moecast/internal/cli" && "$work/$side/cli.test" -test.run '^$' \
			-test.bench 'PlanReadme' -test.benchtime "$bt" | grep '^Benchmark')
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
