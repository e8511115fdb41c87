# Device call of run 11 (H200, 2026-12-02), at the commit that added this directory (branch wt-w4m:
# the wgmma tile loading stages STAGES - 2 ahead, no drain a stage); gpu.test and calibop built with
# CGO_ENABLED=0 -ldflags="-s -w" -trimpath, gzipped into bench/out/w4m/bench/bin. The images it built
# are the ones committed in kernels/gpu/build; its moe.toml's Kimi W4A16 table is the embedded one.
cd bench/out/w4m && gunzip -f bench/bin/*.gz && chmod +x bench/bin/* && MS=256,512,1024,2048 TORCH=0 bash bench/gpu-w4a16-big.sh $OUT
