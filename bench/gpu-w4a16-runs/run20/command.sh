# Device call of run 20 (one H200, 2026-12-02, branch wt-w4tp8, commit 440b03e: the persistent tile's
# epilogue barrier reads an accumulator): same payload as run 17 (gpu.test built here, xz'd into
# bench/out/w4tp8/bin, with bench/gpu-w4a16-tp8.sh, bench/gpu_w4a16_torch.py, kernels/gpu/*.cu,
# build.sh, build/MANIFEST). The TP8 shapes at M = 512-2048 and the dense up 18432 x 7168 at M = 1-16.
# The 256-column persistent tile still failed on rows 64-127 (correct.log.gz); the 128-column one and
# every other kernel passed. Images not committed.
cd bench/out/w4tp8 && mkdir -p /tmp/o && timeout 540 bash bench/gpu-w4a16-tp8.sh bin /tmp/o; tar czf $OUT/run4.tgz -C /tmp/o .
