# Device call of run 23 (one H200, 2026-12-02, branch wt-w4fix, bench/gpu-w4a16-wgpfix.sh and w4a16.cu as
# in commit bd5b781's parent state with the WGP_FIX / CPA_PF switches, i.e. the script as committed in
# bd5b781 with FIXES 8 9 0 12): cubins of WGP_FIX 8 (the epilogue reads each accumulator through an xor
# with a barrier's result), 9 (8 and scale_d = 0 on a tile's first step: C7514, serialised), 0 (run 21's
# source) and 12 (8 and a proxy fence); TestWGPersistOnDevice on each (check<N>.log: 8, 9, 12 pass 56
# cases, worst 0.00222; 0 fails every 256-column case, error on the odd 16-column slices); the TP8 shapes
# with fix 8 beside torch.mm bf16; the dense up 18432 x 7168 at M = 1-16 (default plans) with fix 8, with
# -DCPA_PF (cp.async .L2::256B prefetch hint) and fix 8 again, each beside moecast_copy in the same
# process. 1.3 min of device time (and 2 min of a machine start that failed before it).
cd bench/out/w4fix && bash bench/gpu-w4a16-wgpfix.sh bin /tmp/o 2>&1 | tee /tmp/o.stdout; cp /tmp/o.stdout $OUT/stdout.txt; cd /tmp/o && tar czf $OUT/run23.tgz *.log *.txt *.jsonl
