# Device call of this run (one H200, 2026-12-03, helper session 'recal' of session 7): the whole
# calib gpu campaign, then --quick, then kernels/gpu's device tests, at main's code (commit e4a68ff;
# kernels/gpu/build images of 790f328, run 24). 273.8 s of command, 365 s of device time with the start.
# Here (the payload: both binaries in one .tar.xz, 8.0 MB; xz -9 stores the second almost free):
#   CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -ldflags="-s -w" -trimpath -o pay/gpu.test ./kernels/gpu
#   CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -ldflags="-s -w" -trimpath -o pay/calibop ./bench/calibop
#   tar -C pay -cf - calibop gpu.test | xz -9 > bench/out/recal/pay/bins.tar.xz
# Device (carry bench/out/recal; bench/gpu-campaign-speed.sh unpacks the payload, stamps every
# progress line and writes TAG.toml, TAG.txt, TAG-progress.txt, times.txt):
cd bench/out/recal && export NCCL_NVLS_ENABLE=0 && nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm --format=csv,noheader; LIMIT=280 bash ../../gpu-campaign-speed.sh pay $OUT full; QUICK=1 LIMIT=80 bash ../../gpu-campaign-speed.sh pay $OUT quick; s=$(date +%s); timeout 170 pay/gpu.test -test.v -test.timeout 165s > $OUT/tests.log 2>&1; echo "gpu.test rc $?: $(( $(date +%s) - s )) s" | tee -a $OUT/times.txt; grep -E "^(--- (FAIL|SKIP)|FAIL|ok|PASS)|panic" $OUT/tests.log | cut -c1-160 | head -30; grep -cE "^--- PASS" $OUT/tests.log; grep -E "worst" $OUT/tests.log | sed 's/^ *//' | cut -c1-160 | head -30
