# Device call of run 33 (one H200, 2026-12-03, branch wt-w4small16; 103.1 s of command): run 32's
# direct-load kernels plus the dynamic swapped kernel (w4a16.cu w4a16_swd, MODE 9, w4a16_mt1_swd: MODE 3's
# 16 x 128 tile and 4-stage cp.async pipeline, the work cut into chunks of Units k iterations of one tile
# that a resident grid takes from a counter, the pipeline running on across chunks, one fp32 partial slot a
# chunk, the last part of a tile summing them in order), checked (TestGEMMOnDevice, sm_90 cubin and
# compute_80 PTX) and timed at chunks of 7 (default; 6 on o_proj's 64 iterations), 4, 14 and 2 iterations
# beside the defaults (bench/gpu-w4small16.sh as run 32; ncu on w4a16_mt1_sw, w4a16_mt1_swd, w4a16_mt1_dr).
# experiment.patch: the whole experimental source (kernels/gpu: w4a16.cu, gemm.go, device_test.go,
# emu_test.go) against main at cc0a9d3; the direct-load kernels in it are run 32's form. Not committed as
# code (the target was not reached); the images it builds are not committed either.
mkdir -p /tmp/o && (timeout 420 bash bench/out/w4small16/gpu-w4small16.sh bench/out/w4small16 /tmp/o 2>&1 | tee /tmp/o/stdout.txt); tar czf $OUT/run33.tgz -C /tmp/o .
