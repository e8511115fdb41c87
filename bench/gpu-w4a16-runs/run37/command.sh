# Device call of run 37 (one H200, 2026-12-03, branch wt-w4tma; 96.6 s of command): run 36 plus the
# compute-only diagnostic (MODE 13, w4a16_mt1_tma_noload, _s8_tma_noload: the producer releases each slot
# without filling it, so the 8 compute warps dequantise and multiply whatever is in shared memory with no
# memory traffic), at M = 1 and 8. experiment.patch: the whole source (kernels/gpu) against main at 7853080;
# apply it (git apply) and rebuild the images with kernels/gpu/build.sh to rerun.
mkdir -p /tmp/o && (MS=1,8 KS="w4a16_mt1_s8_tma_noload w4a16_mt1_tma_noload" timeout 400 bash bench/out/w4tma/gpu-w4tma.sh bench/out/w4tma /tmp/o 2>&1 | tee /tmp/o/stdout.txt); tar czf $OUT/run.tgz -C /tmp/o .
