# Device call of run 25 (one H200, 2026-12-03, helper session 'w4small' of session 7, branch wt-w4small):
# bench/gpu-w4a16-small.sh builds w4a16.cu's images from this branch's sources (build.sh 80 90 120, nvcc
# 13.0.88: the images committed in kernels/gpu/build), prints the small-M kernels' registers and spills,
# compares their SASS with main's images and run 14's, checks the new sm_90 cubin (GEMM 1190 cases, MoE
# 608, wgmma default plans 6, persistent tile 56, split plans 40, MXFP4 MoE 56, the whole MoE layer; the
# compute_80 PTX through the JIT: GEMM 739), then runs calibop -ops moe,moe_mxfp4 on main's images and the
# new ones alternately (main1, new1, main2, new2). 302.9 s of command; the machine's start and the
# transfers counted in, 764 s of device time; given back at once.
# Here (the device call sends the session's checkout, /work/main, so the payload went into its ignored
# bench/out/w4small and was carried):
#   CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -ldflags="-s -w" -trimpath -o pay/gpu.test ./kernels/gpu
#   CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -ldflags="-s -w" -trimpath -o pay/calibop ./bench/calibop
#   tar -C pay -cf - calibop gpu.test | xz -9 > bench/out/w4small/bins.tar.xz
#   cp kernels/gpu/*.cu kernels/gpu/build.sh bench/out/w4small/kgpu/; cp kernels/gpu/build/MANIFEST bench/out/w4small/kgpu/build/
#   cp bench/sass_diff.py bench/gpu-w4a16-small.sh bench/out/w4small/
#   git show 0be37af:kernels/gpu/build/w4a16.sm_90.cubin | xz -9 > bench/out/w4small/run14.w4a16.sm_90.cubin.xz
# Device (carry bench/out/w4small):
cd bench/out/w4small && mkdir -p /tmp/o && (timeout 430 bash gpu-w4a16-small.sh . /tmp/o 2>&1 | tee /tmp/o/stdout.txt); cd /tmp/o && gzip -9 build.log correct.log correct-ptx.log; tar czf $OUT/run25.tgz -C /tmp/o . ; cp /tmp/o/stdout.txt $OUT/; ls -la $OUT
# Afterwards, here: build/ -> kernels/gpu/build; python3 bench/cubin_text_diff.py (text-sections.txt);
# python3 bench/w4small_table.py bench/gpu-w4a16-runs/run25 > table.md; *.txt gzipped.
