# Device call of run 35 (one H200, 2026-12-03, branch wt-w4tma; 95.1 s of command): the producer-warp form
# (288 threads: warp 8's lane 0 issues the weight and scale bulk copies, its 32 lanes the token rows by
# cp.async with cp.async.mbarrier.arrive.noinc on the same "full" mbarrier; the 8 compute warps release
# slots on "empty" mbarriers, no block barrier in the main loop; store_tile's syncs on named barrier 1).
# Source: run36/experiment.patch less two things added for run 36: the 10 ms suspend-time hint in mbar_wait
# (run 35 spun on try_wait with no hint) and the load-only diagnostic (MODE 12, _tma_ldonly).
mkdir -p /tmp/o && (KS="w4a16_mt1_tma w4a16_mt1_s8_tma" timeout 500 bash bench/out/w4tma/gpu-w4tma.sh bench/out/w4tma /tmp/o 2>&1 | tee /tmp/o/stdout.txt); tar czf $OUT/run.tgz -C /tmp/o .
