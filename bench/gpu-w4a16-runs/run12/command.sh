# Device calls of run 12 (one H200, 2026-12-02, one lease; branch wt-gpu24).
# Call 1 (torch.jsonl: torch.mm bf16 = cuBLAS at M = 512-2048 on the bench shapes; the same call ran
# bench/gpu-verify.sh, see bench/campaign-speed-runs/run2), payload bench/out/g24a:
cd bench/out/g24a && INT4=0 PYTHONUNBUFFERED=1 timeout 80 python3 bench/gpu_w4a16_torch.py 512,1024,2048 > $OUT/torch.jsonl
# Call 2, right after on the same machine (build.log, correct.log.gz, bench.log, moecast.jsonl; the
# images it built are those committed in kernels/gpu/build): gpu.test built at commit "kernels/gpu:
# the wgmma tile at 128 columns" with CGO_ENABLED=0 -ldflags="-s -w" -trimpath, xz'd into
# bench/out/g24b/bench/bin with bench/gpu-w4a16-big.sh, w4a16.cu, build.sh and build/MANIFEST:
cd bench/out/g24b && xz -d bench/bin/gpu.test.xz && chmod +x bench/bin/gpu.test && mkdir -p /tmp/w && \
  CHECK_TIMEOUT=150 BENCH_TIMEOUT=200 VARIANTS=wg MS=512,1024,2048 TORCH=0 bash bench/gpu-w4a16-big.sh /tmp/w
