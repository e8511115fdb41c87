package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// sharedModelConfigs is ../shared/data/model_configs from the repository
// root.
const sharedModelConfigs = "../../../../../shared/data/model_configs"

// BenchmarkPredictLargestNewModels runs `moecast predict` end to end
// (scenario, config.json import, embedded calibration, sim, text output)
// at 8 batch sizes on the largest new models, DeepSeek-V4-Pro and
// Nemotron-3-Ultra, on 8x H200 TP8 EP8. Target: under 50 ms per predict
// (issue 20). Skipped without the shared configs.
func BenchmarkPredictLargestNewModels(b *testing.B) {
	for _, m := range []string{"deepseek-ai--DeepSeek-V4-Pro", "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16"} {
		sc := largestModelScenario(b, m)
		b.Run(m, func(b *testing.B) {
			var out, errb bytes.Buffer
			for b.Loop() {
				out.Reset()
				errb.Reset()
				if code := Run([]string{"predict", sc}, &out, &errb); code != ExitOK {
					b.Fatalf("exit %d: %s", code, errb.String())
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/predict")
		})
	}
}

// largestModelScenario writes the scenario of the largest-model predict
// benchmarks: model m's shared config.json on 8x H200 TP8 EP8 at 8 batch
// sizes, context 8192; it skips b without the shared configs.
func largestModelScenario(b *testing.B, m string) string {
	b.Helper()
	cfg, err := filepath.Abs(filepath.Join(sharedModelConfigs, m+"_config.json"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(cfg); err != nil {
		b.Skipf("shared model configs not present at %s", sharedModelConfigs)
	}
	sc := filepath.Join(b.TempDir(), "sc.toml")
	src := fmt.Sprintf("name = %q\n[model]\nconfig = %q\n[hardware]\ngpu = \"h200-sxm\"\ngpus = 8\nfabric = \"nvlink4\"\n"+
		"[parallel]\ntp = 8\nep = 8\n[workload]\nbatch = [1, 2, 4, 8, 16, 32, 64, 128]\ncontext = 8192\n", m, cfg)
	if err := os.WriteFile(sc, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	return sc
}
