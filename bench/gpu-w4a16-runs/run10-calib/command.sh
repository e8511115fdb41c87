# Device call of run 10 (H200, 2026-12-02), at the commit that added this directory's parent change
# (branch wt-w4m: run 9's images embedded, the large-batch defaults of gemm.go); gpu.test and calibop
# built with CGO_ENABLED=0 -ldflags="-s -w" -trimpath and gzipped into bench/out/w4m/d.
cd bench/out/w4m && bash gpu-w4a16-calib.sh d $OUT
