# Device call of run 51 (one H200, 2026-12-03, branch wt-w4small; 53.7 s of command): the runs a block
# (stream-K units) of today's swapped kernel (_sw) and the 256-column post-scaled ones (_sw_ps1_n256,
# _sw_ps_n256) at M = 1, 2, 4, 8 on every dense bench shape, each default plan timed twice
# (MOECAST_GPU_BENCH_VARIANTS=units: kernels/gpu/device_test.go unitOptions in run50/experiment.patch).
# No build: the sm_90 cubin built on the device in run 50 (xz) and gpu.test.xz (as in run 50, with
# unitOptions) in the ignored folder bench/out/w4small of the session checkout, deleted after.
# (A first try of this call was refused at once, the carried tree over 64 MiB with the uncompressed cubin.)
cd bench/out/w4small && xz -d gpu.test.xz w4a16.sm_90.cubin.xz && chmod +x gpu.test && nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader && MOECAST_W4A16_MODULE=$PWD/w4a16.sm_90.cubin MOECAST_GPU_BENCH_COPY=1 MOECAST_GPU_BENCH=$OUT/units.jsonl MOECAST_GPU_BENCH_M=1,2,4,8 MOECAST_GPU_BENCH_MOE=0 MOECAST_GPU_BENCH_VARIANTS=units timeout 240 ./gpu.test -test.v -test.run BenchOnDevice > $OUT/bench-units.log 2>&1; echo rc $?; grep -E "copy|FAIL|panic" $OUT/bench-units.log | cut -c1-120; gzip $OUT/bench-units.log; ls -la $OUT
