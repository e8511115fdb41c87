# Device call of run 18 (one H200, 2026-12-02, branch wt-w4tp8, commit d3de0f1: the persistent wgmma
# tile, first form): gpu.test built here (CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c
# -ldflags="-s -w" -trimpath ./kernels/gpu), xz'd into bench/out/w4tp8/bin with the same files as run 17.
# Every bench shape at M = 512-2048 (VARIANTS=tp8) and torch.mm bf16 on all of them. The persistent
# kernel FAILED the device checks here (correct.log.gz: up to 0.146 rel error, nondeterministic): its
# timings are of a wrong kernel; kept for the record. Images not committed.
cd bench/out/w4tp8 && mkdir -p /tmp/o && BENCH_SHAPES= SMALL= timeout 540 bash bench/gpu-w4a16-tp8.sh bin /tmp/o; tar czf $OUT/run2.tgz -C /tmp/o .
