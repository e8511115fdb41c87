# Device call of run 36 (one H200, 2026-12-03, branch wt-w4tma; 118.3 s of command): run 35's kernels with
# a 10 ms suspend-time hint in the mbarrier waits, plus two load-path diagnostics timed beside them: the
# producer warp's stream alone (MODE 12, w4a16_mt1_tma_ldonly, _s8_tma_ldonly: the compute warps only wait
# for and release each slot) and the default's cp.async pipeline alone (w4a16_mt1_ldonly, mode 2).
# experiment.patch: the whole source (kernels/gpu) against main at 7853080.
mkdir -p /tmp/o && (KS="w4a16_mt1_tma w4a16_mt1_s8_tma_ldonly w4a16_mt1_ldonly" timeout 500 bash bench/out/w4tma/gpu-w4tma.sh bench/out/w4tma /tmp/o 2>&1 | tee /tmp/o/stdout.txt); tar czf $OUT/run.tgz -C /tmp/o .
