# Device call of run 26 (one H200, 2026-12-03, helper session 'gpu24' of session 8, branch wt-gpu24):
# bench/gpu-gpu24.sh: calibop -ops moe twice on main's images (36c602c: run 25's W4A16 images), main's
# kernels/gpu device tests (main's gpu.test), then w4a16.cu's images built from this branch's first
# source (build.sh 80 90 120: the _wgd kernels, first form: step s+1 dequantised between step s's
# wgmma commit and wait_group 2; ptxas serialised all four, C7513), and an sm_90 cubin with
# -DFP4_W4_MINB=3; checks of the new cubin, torch.mm bf16 and every tp8 plan at M = 512-2048, then
# calibop -ops moe_mxfp4 alternating main's images and the FP4_W4_MINB=3 cubin.
# 400.6 s of command, 495.6 s of device time with the start.
# Here (the device call sends the session's checkout, /work/main, so the payload went into its ignored
# bench/out/gpu24 and was carried):
#   (cd /work/main) CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -ldflags="-s -w" -trimpath -o pay/main/gpu.test ./kernels/gpu
#   (cd /work/main) CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -ldflags="-s -w" -trimpath -o pay/main/calibop ./bench/calibop
#   (branch)        CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -ldflags="-s -w" -trimpath -o pay/new/gpu.test ./kernels/gpu
#   tar -C pay -cf - main new | xz -9 > bench/out/gpu24/bins.tar.xz
#   cp kernels/gpu/*.cu kernels/gpu/build.sh bench/out/gpu24/kgpu/; cp kernels/gpu/build/MANIFEST bench/out/gpu24/kgpu/build/
#   cp bench/gpu-gpu24.sh bench/out/gpu24/
# Device (carry bench/out/gpu24):
mkdir -p /tmp/o && (timeout 540 bash bench/out/gpu24/gpu-gpu24.sh bench/out/gpu24 /tmp/o 2>&1 | tee /tmp/o/stdout.txt); cd /tmp/o && gzip -9 -f *.log 2>/dev/null; tar czf $OUT/run1.tgz -C /tmp/o . ; cp /tmp/o/stdout.txt $OUT/
# Afterwards, here: build/ left out (experimental images; MANIFEST kept), *.txt and *.jsonl gzipped.
# TestParallelFixupTiles failed in main's gpu.test: it read w4a16.cu from the working directory (absent
# on the device); this branch reads the embedded source instead. moe1.toml is the Kimi-K2.5 table
# embedded in calib/embedded/calibgpu/h200-sxm.toml.
