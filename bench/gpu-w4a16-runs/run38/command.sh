# Device call of run 38 (one H200, 2026-12-03, branch wt-w4scale; 127.1 s of command): the post-scaled
# compute path (w4a16.cu ps_group; kernels _sw_ps, _s6_sw_ps, _sw_ps1, _tma_ps (4/5/6/8 stages), _tma16_ps,
# _s5_tma_ps1 and the compute-only diagnostics _tma_noload_ps, _s8_tma_noload_ps, _tma_noload_ps1) beside
# today's defaults, _s6_sw, run 37's bulk-copy kernels and _tma_noload, at M = 1, 2, 4, 8, 16 on every dense
# bench shape; correctness on the sm_90 cubin and the compute_80 PTX; SASS of 11 kernels; ncu of _sw and _sw_ps.
# Payload (ignored folder bench/out/w4scale of the session checkout, deleted after): gpu.test.xz (CGO_ENABLED=0
# go test -c -ldflags='-s -w' ./kernels/gpu from a copy with the build/ images emptied), kgpu/ (*.cu, build.sh,
# build/MANIFEST), gpu-w4scale.sh (= bench/gpu-w4scale.sh). experiment.patch: kernels/gpu against main at
# 6701b697 (run 37's bulk-copy kernels plus the post-scaled ones): git apply, then kernels/gpu/build.sh.
# (Two earlier calls of this session ran nothing, 0.2-0.3 s each: the payload was first put in the worktree,
# which does not travel.)
mkdir -p /tmp/o && (MS=1,2,4,8,16 timeout 560 bash bench/out/w4scale/gpu-w4scale.sh bench/out/w4scale /tmp/o 2>&1 | tee /tmp/o/stdout.txt); cd /tmp/o && gzip -f build.log correct.log correct-ptx.log bench.log 2>/dev/null; tar czf $OUT/run.tgz --exclude='*.ptx' --exclude='*sm_80*' --exclude='*sm_120*' --exclude='*.cubin' -C /tmp/o .; cp /tmp/o/build/w4a16.sm_90.cubin $OUT/ 2>/dev/null; ls -la $OUT
