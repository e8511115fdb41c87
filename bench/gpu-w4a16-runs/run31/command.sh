# Device call of run 31 (one H200, 2026-12-03, branch wt-w4small16; 77.8 s of command): the first form of
# the direct-load kernels (w4a16.cu w4a16_direct_segment: each buffer of the register ring refilled before
# the iteration it held is computed, no L2 prefetch; kernels w4a16_mt1_s2_dr (D=2, 3 blocks an SM),
# w4a16_mt1_dr (D=4, 2), w4a16_mt1_s8_dr (D=8, 1), w4a16_mt1_s2_dr16 (D=2, 16 rows, 2), w4a16_mt1_dr16
# (D=4, 16 rows, 1)). bench/gpu-w4small16.sh builds w4a16.cu's images (build.sh 80 90 120; experimental,
# not committed), checks the sm_90 cubin and the compute_80 PTX (TestGEMMOnDevice), times every dense bench
# shape at M = 1, 2, 4, 8, 16 (MOECAST_GPU_BENCH_VARIANTS=direct) beside moecast_copy, and profiles
# w4a16_mt1_sw, w4a16_mt1_dr and w4a16_mt1_s2_dr at M = 1 on the dense up 18432 x 7168 (ncu --clock-control
# none). Payload (bench/out/w4small16, carried): gpu.test.xz (CGO_ENABLED=0 go test -c ./kernels/gpu),
# kgpu/{w4a16.cu,build.sh,build/MANIFEST}, gpu-w4small16.sh.
mkdir -p /tmp/o && (timeout 500 bash bench/out/w4small16/gpu-w4small16.sh bench/out/w4small16 /tmp/o 2>&1 | tee /tmp/o/stdout.txt); tar czf $OUT/run31.tgz -C /tmp/o .
