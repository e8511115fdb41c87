# Device call of run 13 (one H200, 2026-12-02; branch wt-gpu24 at the commit "kernels/gpu: device test of
# the wgmma tile's default plans ..."): gpu.test (CGO_ENABLED=0 go test -c -ldflags="-s -w" -trimpath
# ./kernels/gpu) and calibop (CGO_ENABLED=0 go build ... ./bench/calibop), both with the images committed
# in kernels/gpu/build (run 12's), in one .tar.xz under bench/out/g24c/pay with bench/gpu-w4a16-calib.sh:
cd bench/out/g24c && tar -C pay -xJf pay/bins3.tar.xz && rm pay/bins3.tar.xz && \
  MS=256,512,1024,2048 WG=1 bash bench/gpu-w4a16-calib.sh pay $OUT
# check.log: correctness with the embedded images (GEMM 798 cases, MoE 512, the MoE layer, the wgmma
# default plans 3); moe.toml/op.txt: calibop -ops moe (its TP8 1024-token row had a 23% spread: not
# embedded; run 14 reran the op); default.jsonl: the plans' defaults at M = 256-2048 and the MoE cases;
# wg.jsonl: the MoE layers' wgmma plans (whole tiles and stream-K, 256 and 128 columns).
