# Device call of run 42 (one H200, 2026-12-03, branch wt-w4gu; 171 s of command): the cluster tiles of
# experiment.patch (w4a16_mt8_w4_wgc2; 64 rows, two blocks an SM: w4a16_mt4_w4_wgc2, _wgc4, _wgc8) on the
# TP8 shards at M = 512-2048 beside torch.mm bf16 and the stream-K plans, the images built by build.sh
# (not committed: see below), every device check, SASS against main's images. The gpu.test of this run
# lacked experiment.patch's Plan.Args fix (a cluster plan has no workspace, and Args refused it), so
# every device test case of a cluster plan failed in the harness before launching: the cluster kernels'
# results were NOT checked (the benchmark's launches ran: it allocates a 16-byte stand-in workspace).
# experiment.patch = this run's kernels/gpu source plus that fix and TestWGDense's cluster cases (CPU).
cd bench/out/w4gu && mkdir -p /tmp/o && (OLD=$PWD/../../../kernels/gpu/build CHECK_TIMEOUT=150 TESTS=WGClusterOnDevice MS=512,1024,1536,2048 VARIANTS=cluster NCU=0 timeout 300 bash bench/gpu-w4gu.sh bin /tmp/o 2>&1 | tee /tmp/o/stdout.txt); tar czf $OUT/run42.tgz -C /tmp/o .
