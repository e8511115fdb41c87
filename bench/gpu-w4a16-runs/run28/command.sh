# Device call of run 28 (one H200, 2026-12-03, helper session 'gpu24', branch wt-gpu24): bench/gpu-gpu24c.sh
# with the branch's final source (the _wgd kernels removed; w4a16_mt1_w4_fp4 at 3 blocks an SM on sm_90
# only): build.sh 80 90 120 (**the images committed in kernels/gpu/build**), checks of the new sm_90 cubin
# and the compute_80 PTX, calibop -ops moe,moe_mxfp4 on it (final-moe.toml: the gpt-oss MXFP4 tables
# embedded in calib/embedded/calibgpu/h200-sxm.toml), then Nsight Compute (--clock-control none) on the
# TP8 gate_up's default plans at M = 512 and 2048 and on cuBLAS's kernel for the same shapes.
# 170.5 s of command, 269 s of device time with the start (one earlier try got no machine: 121 s).
# Payload as run 27, bench/gpu-gpu24c.sh.
mkdir -p /tmp/o && (timeout 520 bash bench/out/gpu24/gpu-gpu24c.sh bench/out/gpu24 /tmp/o 2>&1 | tee /tmp/o/stdout.txt); cd /tmp/o && gzip -9 -f *.log ncu-*.txt 2>/dev/null; tar czf $OUT/run3.tgz -C /tmp/o . ; cp /tmp/o/stdout.txt $OUT/
# Afterwards, here: build/ -> kernels/gpu/build (sm_90 differs from main's only in w4a16_mt1_w4_fp4;
# sm_80 and sm_120 byte-identical: bench/cubin_text_diff.py).
