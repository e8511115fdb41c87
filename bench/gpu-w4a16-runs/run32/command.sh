# Device call of run 32 (one H200, 2026-12-03, branch wt-w4small16; 84.1 s of command): the second form of
# the direct-load kernels (each register buffer refilled right after it is consumed, and the warp's weight
# and scale lines prefetched into L2 DIRECT_PF = 4 iterations beyond the ring: prefetch.global.L2; kernels
# w4a16_mt1_s1_dr (D=1, 4 blocks an SM), w4a16_mt1_s2_dr (D=2, 3), w4a16_mt1_dr (D=4, 2), w4a16_mt1_s1_dr16
# (D=1, 16 rows, 3), w4a16_mt1_s2_dr16 (D=2, 16 rows, 2)); otherwise as run 31 (bench/gpu-w4small16.sh,
# the same payload, rebuilt from the branch's source; ncu on w4a16_mt1_sw, w4a16_mt1_s1_dr, w4a16_mt1_s2_dr).
# Its source: the direct-load part of bench/gpu-w4a16-runs/run33/experiment.patch (run 33 added w4a16_swd).
mkdir -p /tmp/o && (timeout 500 bash bench/out/w4small16/gpu-w4small16.sh bench/out/w4small16 /tmp/o 2>&1 | tee /tmp/o/stdout.txt); tar czf $OUT/run32.tgz -C /tmp/o .
