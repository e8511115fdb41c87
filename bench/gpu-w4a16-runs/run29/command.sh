# Device call of run 29 (one H200, 2026-12-03, helper session 'gpu24', branch wt-gpu24): bench/gpu-gpu24d.sh
# (its first form: checks GEMM, MoE, wgmma default plans, split plans; the tp8 shapes' gate_up and down)
# with this branch's source plus the Go side of run27/wgd.patch and wgd-pf-copies-after-step0.patch (the
# _wgd kernels: each k16 step's weight and scale words read before the previous step's wait, and the next
# stage's copies issued between step 0's wgmma commit and its wait). ptxas still serialised all four
# _wgd kernels (C7513). 121.8 s of command, 216 s of device time with the start.
# Payload: pay/new/gpu.test (the branch with the patch), kgpu/ (*.cu, build.sh, build/MANIFEST), the script.
mkdir -p /tmp/o && (timeout 400 bash bench/out/gpu24/gpu-gpu24d.sh bench/out/gpu24 /tmp/o 2>&1 | tee /tmp/o/stdout.txt); cd /tmp/o && gzip -9 -f *.log 2>/dev/null; tar czf $OUT/run4.tgz -C /tmp/o . ; cp /tmp/o/stdout.txt $OUT/
