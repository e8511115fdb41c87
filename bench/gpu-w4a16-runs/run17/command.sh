# Device call of run 17 (one H200, 2026-12-02, branch wt-w4tp8, commit 0c9e5d6: the 64-row wgmma
# tiles and the 6-stage swapped kernel): gpu.test built here with CGO_ENABLED=0 GOOS=linux GOARCH=amd64
# go test -c -ldflags="-s -w" -trimpath ./kernels/gpu, xz'd into bench/out/w4tp8/bin with
# bench/gpu-w4a16-tp8.sh, bench/gpu_w4a16_torch.py, kernels/gpu/*.cu, build.sh and build/MANIFEST
# (carry: bench/out/w4tp8). Images built there with nvcc 13.0 (build.log); not committed (superseded
# by run 18's source).
cd bench/out/w4tp8 && mkdir -p /tmp/o && timeout 530 bash bench/gpu-w4a16-tp8.sh bin /tmp/o; tar czf $OUT/run1.tgz -C /tmp/o .
