# Device call of run 30 (one H200, 2026-12-03, helper session 'gpu24', branch wt-gpu24): bench/gpu-gpu24d.sh
# with this branch's source plus wgd-pf.patch (run 29's form with the next stage's copies back before step
# 0, as in the plain kernel): no C75xx note from ptxas; checks pass but TestMoELayerOnDevice's timing
# assertion (the layer without the router faster than with it: 296.6 against 296.5 us on kimi ep8 T=64;
# its kernels are byte-identical to the committed images'); the _wgd kernels 1.4-3.9% faster than the
# plain ones (not adopted: bench/RESULTS-gpu24.md). 128.0 s of command, 225 s of device time with the start.
# Payload as run 29.
mkdir -p /tmp/o && (timeout 280 bash bench/out/gpu24/gpu-gpu24d.sh bench/out/gpu24 /tmp/o 2>&1 | tee /tmp/o/stdout.txt); cd /tmp/o && gzip -9 -f *.log 2>/dev/null; tar czf $OUT/run5.tgz -C /tmp/o . ; cp /tmp/o/stdout.txt $OUT/
# Afterwards, here: build/ left out (MANIFEST kept); every kernel the branch's committed images hold is
# byte for byte the same in this sm_90 image (bench/cubin_text_diff.py), the four _wgd kernels are extra.
