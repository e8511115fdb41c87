# Device call of run 15 (one H200, 2026-12-02, branch wt-gpu24b, commit 0e01514 "kernels/gpu: parallel
# fixup of cut tiles"): gpu.test built there with CGO_ENABLED=0 go test -c -ldflags="-s -w" -trimpath
# ./kernels/gpu, xz'd into bench/out/gpu24b/bench/bin with bench/gpu-w4a16-split.sh,
# bench/gpu_w4a16_torch.py, kernels/gpu/w4a16.cu, build.sh and build/MANIFEST (calibop was left out:
# the payload was over the device's 64 MiB limit with it, so its step failed with rc 127 and the
# MoE plans were left as they were, see bench/RESULTS-gpu-w4a16-split.md). The images in build.log
# are those committed in kernels/gpu/build.
cd bench/out/gpu24b && mkdir -p /tmp/w && timeout 385 bash bench/gpu-w4a16-split.sh bench/bin /tmp/w
