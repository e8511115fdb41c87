#!/bin/sh
# Issue 23's speed targets, timed on this machine (GNU time: wall, CPU,
# peak RSS). Run from the repository root: sh bench/cluster360k/run.sh
set -e
go build -o /tmp/moecast-360k ./cmd/moecast
echo "== simulate: 32P+32D, 360,000 requests at 100/s (one hour)"
/usr/bin/time -f "wall %e s, user %U s, sys %S s, max RSS %M KB" /tmp/moecast-360k simulate bench/cluster360k/disagg-32p32d.toml
echo "== serve benchmark: the simulator alone (linear and busy-1us costers)"
go test ./serve -run '^$' -bench BenchmarkCluster360k -benchtime 1x
echo "== plan over agg and disagg, the README planning case"
/usr/bin/time -f "wall %e s, user %U s, sys %S s, max RSS %M KB" /tmp/moecast-360k plan kimi-k2.5-plan-1k1k --disagg > /dev/null
