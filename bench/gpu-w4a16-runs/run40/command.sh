# Device call of run 40 (one H200, 2026-12-03, branch wt-w4gu; 150 s of command, the machine started cold):
# the deep wgmma forms (4 k16 steps' wgmmas in flight: w4a16_mt8_w4_wgd, _s5_w4_wgd, _wgd_n256,
# w4a16_mt4_w4_wgd, w4a16_mt8_wgpd_n256) and four diagnostic builds of the deep 128-column tile
# (WG_DIAG 1: no dequantisation, 2: no loads after the first stages, 4: no fixup of cut tiles, 8: no
# wgmma), on the TP8 shards at M = 512, 1024, 2048 beside torch.mm bf16, then Nsight Compute on
# w4a16_mt8_w4_wgd at M = 2048. Source: experiment.patch (w4a16.cu against main 31ecae4; the Go side
# added modes 7 and 8, TestWGDeepOnDevice and the "deep"/"diag" benchmark lists), script: gpu-w4gu.sh
# here (its first form). Payload (carried from an ignored folder of the session's checkout,
# bench/out/w4gu): gpu.test (CGO_ENABLED=0 go test -c -ldflags="-s -w" ./kernels/gpu, xz'd into bin/),
# kernels/gpu/w4a16.cu, build.sh, build/MANIFEST, bench/gpu-w4gu.sh, gpu_w4a16_torch.py, sass_diff.py.
cd bench/out/w4gu && mkdir -p /tmp/o && (OLD=$PWD/../../../kernels/gpu/build timeout 560 bash bench/gpu-w4gu.sh bin /tmp/o 2>&1 | tee /tmp/o/stdout.txt); rm -f /tmp/o/diag*.cubin; tar czf $OUT/run40.tgz -C /tmp/o .
