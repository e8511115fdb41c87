# Device call of run 34 (one H200, 2026-12-03, branch wt-w4tma; 72.5 s of command): the first form of the
# bulk-copy swapped kernel (w4a16.cu w4a16_tma_run, MODES 10 and 11; experiment.patch, against main at
# 7853080): 256 threads, thread 0 refilling the freed slot with cp.async.bulk copies (two 4 KiB weight
# chunks, two scale rows, one 256-byte copy per token row) on a "full" mbarrier after a block barrier at
# the top of every iteration; stages 4, 5, 6, 8 (_tma: at most 8 rows) and 4, 6 (_tma16: 16 rows).
# Payload: bench/out/w4tma (ignored) in the session's checkout: gpu.test.xz (CGO_ENABLED=0 go test -c
# -ldflags='-s -w' ./kernels/gpu, its embedded images emptied to fit the 64 MB transfer; the kernels come
# from MOECAST_W4A16_MODULE), kgpu/ (the *.cu sources, build.sh, build/MANIFEST) and bench/gpu-w4tma.sh.
mkdir -p /tmp/o && (timeout 500 bash bench/out/w4tma/gpu-w4tma.sh bench/out/w4tma /tmp/o 2>&1 | tee /tmp/o/stdout.txt); tar czf $OUT/run.tgz -C /tmp/o .
