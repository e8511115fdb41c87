# Device call of run 14 (one H200, 2026-12-02, a fresh machine: 345 MHz, 35 C before it), the moe op of
# `calib gpu` again at run 13's code (the same calibop, xz'd alone into bench/out/g24d): its
# moe.moecast_w4a16.int4_wo.e384.uniform table is the one embedded in calib/embedded/calibgpu/h200-sxm.toml.
cd bench/out/g24d && xz -d calibop.xz && chmod +x calibop && \
  timeout 150 ./calibop -ops moe -out $OUT/moe.toml > $OUT/op.txt 2> $OUT/progress.txt
