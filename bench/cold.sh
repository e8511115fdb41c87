#!/bin/sh
# Cold start of moecast before (main) and after (this branch), side by side:
# bench/cold.sh BASE_DIR ROUNDS, BASE_DIR holding main's calib and cli test
# binaries and moecast binary (calib.test, cli.test, moecast) built with
# this branch's calib/cold_bench_test.go and
# cmd/moecast/internal/cli/{predict_cold_bench_test.go,cputime_*_test.go}
# copied in. Runs each round base then new, interleaved, so both see the same load.
# BENCHTIME (default 3x) is the -test.benchtime of the benchmarks; PREDICTS
# (default 5) the runs of the real binary's predict per round and side.
#
# Every binary is copied (cp) before it runs: a file the Go linker wrote
# sits in the page cache in large folios, and a process mapping it counts
# whole folios in its RSS (measured: the same moecast binary, `gpus`, 31 MB
# as linked and 19 MB as a cp copy; its anonymous memory 2.7 MB in both),
# so peak RSS compares only binaries written the same way.
set -eu
base=$1; rounds=${2:-3}; bt=${BENCHTIME:-3x}; np=${PREDICTS:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
new=$(mktemp -d); built=$(mktemp -d)
(cd "$root" && go test -c -o "$built/calib.test" ./calib && go test -c -o "$built/cli.test" ./cmd/moecast/internal/cli &&
	go build -o "$built/moecast" ./cmd/moecast)
for f in calib.test cli.test moecast; do cp "$built/$f" "$new/$f"; done
b=$(mktemp -d)
for f in calib.test cli.test moecast; do cp "$base/$f" "$b/$f"; done
base=$b
sc=$(mktemp -d)/v4pro.toml
cat >"$sc" <<EOT
name = "v4pro"
[model]
config = "$root/../shared/data/model_configs/deepseek-ai--DeepSeek-V4-Pro_config.json"
[hardware]
gpu = "h200-sxm"
gpus = 8
fabric = "nvlink4"
[parallel]
tp = 8
ep = 8
[workload]
batch = [1, 2, 4, 8, 16, 32, 64, 128]
context = 8192
EOT
for r in $(seq "$rounds"); do
	echo "== round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
	for v in base new; do
		d=$base; [ $v = new ] && d=$new
		(cd "$root/calib" && "$d/calib.test" -test.run '^$' -test.bench 'EmbeddedCold|EmbeddedTablesCold' -test.benchtime "$bt") | grep '^Benchmark' | sed "s/^/$v /"
		(cd "$root/cmd/moecast/internal/cli" && "$d/cli.test" -test.run '^$' -test.bench 'PredictCold|PlanCold' -test.benchtime "$bt") | grep '^Benchmark' | sed "s/^/$v /"
		for i in $(seq "$np"); do
			/usr/bin/time -f "$v binary predict V4-Pro 8xH200: %e s wall %U s user %S s sys %M KB" "$d/moecast" predict "$sc" >/dev/null
		done
		/usr/bin/time -f "$v binary plan kimi-k2.5-plan-1k1k: %e s wall %U s user %S s sys %M KB" "$d/moecast" plan kimi-k2.5-plan-1k1k >/dev/null
	done
done
