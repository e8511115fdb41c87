# Device call of run 27 (one H200, 2026-12-03, helper session 'gpu24', branch wt-gpu24): bench/gpu-gpu24b.sh
# with this branch's second source (wgd.patch against main: the _wgd kernels' wait_group 2 moved before the
# next step's dequantisation; still serialised by ptxas, C7513; w4a16_mt1_w4_fp4 at 3 blocks an SM on
# every target): build.sh 80 90 120, checks, torch.mm bf16 and every tp8 plan at M = 512-2048, calibop -ops
# moe,moe_mxfp4 on the new sm_90 cubin. 184.4 s of command, 266 s of device time with the start.
# Payload as run 26 (pay/main/calibop from /work/main; pay/new/gpu.test from the branch), bench/gpu-gpu24b.sh.
mkdir -p /tmp/o && (timeout 500 bash bench/out/gpu24/gpu-gpu24b.sh bench/out/gpu24 /tmp/o 2>&1 | tee /tmp/o/stdout.txt); cd /tmp/o && gzip -9 -f *.log 2>/dev/null; tar czf $OUT/run2.tgz -C /tmp/o . ; cp /tmp/o/stdout.txt $OUT/
