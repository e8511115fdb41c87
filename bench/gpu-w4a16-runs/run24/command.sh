# Device call of run 24 (one H200, 2026-12-02, branch wt-w4fix, the source of the commit that adds this
# directory): bench/gpu-w4a16-tp8.sh builds w4a16.cu's images (build.sh 80 90 120: these are the images
# committed in kernels/gpu/build), checks them (GEMM 1190 cases, MoE 607, wgmma default plans 6,
# persistent tile 56, split plans 40; the compute_80 PTX: GEMM 739), times torch.mm bf16, the TP8 shapes
# at M = 512-2048 (tp8 variants) and the dense up 18432 x 7168 at M = 1-16 beside moecast_copy; then
# bench/sass_diff.py compares the new images' SASS with main's (sassdiff.txt: sm_90 differs only in
# w4a16_mt8_w4_wgp and w4a16_mt8_wgp_n256; sm_80 and sm_120 identical). Payload: gpu.test
# (CGO_ENABLED=0 go test -c ./kernels/gpu, xz'd into bench/out/w4fix/bin), kernels/gpu/w4a16.cu,
# build.sh, build/MANIFEST, bench/gpu-w4a16-tp8.sh, gpu_w4a16_torch.py, sass_diff.py. 2.5 min of device time.
cd bench/out/w4fix && mkdir -p /tmp/o && (timeout 480 bash bench/gpu-w4a16-tp8.sh bin /tmp/o 2>&1 | tee /tmp/o/stdout.txt); for sm in 90 80 120; do cuobjdump -sass ../../../kernels/gpu/build/w4a16.sm_$sm.cubin >/tmp/old$sm.sass; cuobjdump -sass /tmp/o/build/w4a16.sm_$sm.cubin >/tmp/new$sm.sass; echo "sm_$sm: $(python3 bench/sass_diff.py /tmp/old$sm.sass /tmp/new$sm.sass | tr '\n' ';')"; done | tee /tmp/o/sassdiff.txt; tar czf $OUT/run24.tgz -C /tmp/o .
