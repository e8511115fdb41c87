# Device call of run 16 (one H200, 2026-12-02, branch wt-gpu24b, commit 5ea83bb with the run-15 images
# embedded and the new default plans; TestWGDefaultOnDevice/TestWGDefaultShapes gained the TP8 gate_up
# case M=1000 after that commit, committed with this run): gpu.test built with CGO_ENABLED=0 go test
# -c -ldflags="-s -w" -trimpath ./kernels/gpu, xz'd into bench/out/gpu24b/bench/bin with
# bench/gpu-w4a16-split-verify.sh and bench/gpu_w4a16_torch.py:
cd bench/out/gpu24b && timeout 210 bash bench/gpu-w4a16-split-verify.sh bench/bin $OUT
