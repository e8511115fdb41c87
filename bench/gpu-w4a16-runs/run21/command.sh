# Device call of run 21 (one H200, 2026-12-02, branch wt-w4tp8, commit a1dc9d3: the persistent tile's
# epilogue keeps the A fragments live): same payload as run 20, the TP8 shapes only. Its
# images (build.log.gz) are the ones committed in kernels/gpu/build. The 256-column persistent tile
# (w4a16_mt8_wgp_n256) still fails on rows 64-127 of a tile (correct.log.gz, rel error 0.06-0.13): it is
# not among gemm.go's Variants (never loaded). Every other kernel passed: GEMM 1178 cases less those,
# MoE 608 cases, the compute_80 PTX GEMM 739 cases.
cd bench/out/w4tp8 && mkdir -p /tmp/o && SMALL= timeout 170 bash bench/gpu-w4a16-tp8.sh bin /tmp/o; tar czf $OUT/run5.tgz -C /tmp/o .
