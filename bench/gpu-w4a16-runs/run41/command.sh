# Device call of run 41 (one H200, 2026-12-03, branch wt-w4gu; 140 s of command): the cluster tiles
# (w4a16_mt8_w4_wgc2, _wgc4, _wgc8: the 128 x 128 wgmma tile cut along K in 2, 4 or 8 parts whose blocks
# form one thread block cluster, summed through distributed shared memory) and a diagnostic build of
# store_tile's fixup with one thread's fence after the barrier instead of every thread's (FIX_LIGHT=1),
# on the TP8 shards at M = 512-2048 beside torch.mm bf16. Source: run42/experiment.patch's with, instead
# of its three 64-row cluster kernels, W4A16_KERNEL(w4a16_mt8_w4_wgc4, 8, 4, 4, 10, false, 128, 1) and
# (w4a16_mt8_w4_wgc8, 8, 4, 4, 11, false, 128, 1), and without the Args/runOnce workspace fixes: the
# device tests' cluster cases failed in the harness (cuMemAlloc of 0 bytes), never reaching the kernels,
# so the cluster kernels' results were NOT checked. Script: bench/gpu-w4gu.sh (this commit's).
cd bench/out/w4gu && mkdir -p /tmp/o && (OLD=$PWD/../../../kernels/gpu/build DIAGS="light=-DFIX_LIGHT=1" TESTS=WGClusterOnDevice MS=512,1024,1536,2048 VARIANTS=cluster NCU=0 timeout 540 bash bench/gpu-w4gu.sh bin /tmp/o 2>&1 | tee /tmp/o/stdout.txt); rm -f /tmp/o/light.sm_90.cubin; tar czf $OUT/run41.tgz -C /tmp/o .
