# Device call of run 8 (H200, 2026-12-02), from a payload of the working tree just before commit
# c5852a3 (w4a16.cu with the mma.sync large-batch tile, not yet the wgmma one), gpu.test built with
#   CGO_ENABLED=0 go test -c -ldflags="-s -w" -trimpath ./kernels/gpu
cd bench/out/w4m && gunzip -f bench/bin/gpu.test.gz && chmod +x bench/bin/gpu.test && SMS=90 bash bench/gpu-w4a16-big.sh $OUT
