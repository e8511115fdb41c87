#!/bin/bash
# run 3: the whole campaign (every default op, the new ones included) and
# the quick one, each timed, with the committed (device-built) images.
set -uo pipefail
dir=$1; out=$2
gunzip -f "$dir/calibop.gz"; chmod +x "$dir/calibop"
s=$(date +%s); timeout 420 "$dir/calibop" -ops all -out "$out/full.toml" >"$out/full.txt" 2>&1; echo "full rc $?: $(( $(date +%s) - s )) s" | tee "$out/times.txt"
s=$(date +%s); timeout 100 "$dir/calibop" -quick -ops all -out "$out/quick.toml" >"$out/quick.txt" 2>&1; echo "quick rc $?: $(( $(date +%s) - s )) s" | tee -a "$out/times.txt"
grep -E "^NVIDIA|calibop" "$out/full.txt" "$out/quick.txt" | head
