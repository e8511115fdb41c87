#!/bin/bash
# How a calibration changes predict for the shipped H200 scenarios: each
# scenario's step time and per-category breakdown (ms) with the perf-database
# tables alone (calib/embedded/h200-sxm.toml) and with the embedded h200-sxm
# calibration (the perf database with `calib gpu`'s tables stacked on it), or
# with --calibration embedded,FILE when FILE is given.
# Usage: bench/calib-compare.sh [FILE]   (from the repository root)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)/moecast
(cd "$here" && go build -o "$bin" ./cmd/moecast)
new=${1:+embedded,$1}
new=${new:-embedded}
for s in "$here"/scenarios/*h200*.toml; do
	for cal in "$here/calib/embedded/h200-sxm.toml" "$new"; do
		"$bin" predict "$s" --batch 1,8,64 --calibration "$cal" --format json 2>/dev/null |
			python3 -c '
import json, sys
d = json.load(sys.stdin)
name, cal = sys.argv[1], sys.argv[2]
for p in d["points"]:
    b = p["breakdown_ms"]
    parts = " ".join(f"{k} {v:.3f}" for k, v in sorted(b.items()) if v)
    print("%-34s %-6s batch %4d  step %8.3f ms  [%s]" % (name, cal, p["batch"], p["step_ms"], parts))
' "$(basename "$s" .toml)" "$([ "$cal" = "$new" ] && echo new || echo perfdb)" || echo "$(basename "$s"): predict failed with $cal"
	done
done
