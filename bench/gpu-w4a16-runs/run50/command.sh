# Device call of run 50 (one H200, 2026-12-03, branch wt-w4small): the swapped-operand kernels on 256-column
# tiles (w4a16.cu _n256: 4 warps along N x 2 along K, each warp 64 columns and two 32-k scale groups a stage),
# post-scaled (run 38's ps_group, PS 2 and PS 1) at 4 and 3 stages, the dequantise-first form (_sw_n256), the
# 16-row post-scaled swapped kernel (_sw16_ps1, 128 and 256 columns) and the compute-only diagnostics
# (_sw_ps_noload, _sw_ps1_noload and their _n256 forms; run 38's _tma_noload_ps1) beside the defaults, at
# M = 1, 2, 4, 8, 16 on every dense bench shape; correctness on the sm_90 cubin and the compute_80 PTX; SASS;
# ncu of _sw_ps1_n256, _sw and _sw_ps1_noload_n256 (dense up g32, M = 1) and warp stall reasons of the first two.
# Payload (ignored folder bench/out/w4small of the session checkout, deleted after): gpu.test.xz (CGO_ENABLED=0
# go test -c -ldflags='-s -w' ./kernels/gpu from a copy with the build/ images emptied), kgpu/ (*.cu, build.sh,
# build/MANIFEST), gpu-w4small.sh (= bench/gpu-w4small.sh). experiment.patch: kernels/gpu against main at
# 31ecae41 (run 37's and run 38's kernels plus this run's): git apply, then kernels/gpu/build.sh.
mkdir -p /tmp/o && (timeout 540 bash bench/out/w4small/gpu-w4small.sh bench/out/w4small /tmp/o 2>&1 | tee /tmp/o/stdout.txt); cd /tmp/o && gzip -f build.log correct.log correct-ptx.log bench.log 2>/dev/null; tar czf $OUT/run.tgz --exclude=build -C /tmp/o .; tar czf $OUT/images.tgz -C /tmp/o build; ls -la $OUT
