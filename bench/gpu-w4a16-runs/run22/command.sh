# Device call of run 22 (one H200, 2026-12-02, branch wt-w4fix, before commit bd5b781): the first form of
# bench/gpu-w4a16-wgpfix.sh (FIXES 0 1 3 2; WGP_FIX 1: scale_d = 0 on a tile's first k16 step and
# wgmma_wait<0> in its last, 2: 1 and a proxy fence, 3: 1 and wgmma_wait<0> every k iteration), with
# gpu.test (CGO_ENABLED=0 go test -c ./kernels/gpu), w4a16.cu, build.sh and the script copied into
# bench/out/w4fix (carried). The cubins were named fix<N>.cubin, which hasWGMMA does not take for sm_90
# images, so every check skipped and the benchmark ran without wgmma tiles: only the SASS counts
# (sass-fix0.txt.gz: run 21's source; ptxas converts the 128 accumulators to bf16 right after the k loop,
# before WARPGROUP.DEPBAR.LE gsb0, 0x0; sass-fix1.txt.gz: FIX 1 serialises every wgmma, C7514 in
# build-notes.log). 1.2 min of device time.
cd bench/out/w4fix && bash bench/gpu-w4a16-wgpfix.sh bin /tmp/o 2>&1 | tee /tmp/o.stdout; cp /tmp/o.stdout $OUT/stdout.txt; cd /tmp/o && tar czf $OUT/run22.tgz *.log *.txt *.jsonl
