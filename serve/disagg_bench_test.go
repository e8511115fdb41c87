package serve

import (
	"runtime"
	"testing"
)

// BenchmarkCluster360k is issue 23's scale point: 32 prefill + 32 decode
// instances replaying one hour at 100 requests/s (360,000 Poisson
// arrivals, 2000 +/- 50% in, 200 +/- 50% out tokens, 400 Gb/s transfer),
// with the free linear coster (the simulator alone) and with busy1us (a
// step model of about the real one's cost per call). Target: <= 30 s on
// 2 cores and <= 2 GB. Reports the heap in use after the run.
func BenchmarkCluster360k(b *testing.B) {
	for _, tc := range []struct {
		name   string
		c      StepCoster
		prefix bool
		router Router
	}{{"linear", realistic, false, LeastLoaded}, {"busy1us", busy1us, false, LeastLoaded},
		{"linear-prefix", realistic, true, LeastLoaded}, {"linear-prefix-aware", realistic, true, PrefixAware}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := point(VLLM, 0, 360000, 2000, 200)
			cfg.Workload.RequestRate, cfg.Workload.RangeRatio = 100, 0.5
			// DeepSeek-V3-like: 70 KB per token per GPU, 30 GB of KV per GPU
			cfg.Memory.KVBytesPerToken, cfg.Memory.KVCapacity = 70e3, 30e9
			if tc.prefix {
				cfg.Workload.Prefix = &PrefixLoad{SystemTokens: 1000}
			}
			cfg = disagg(cfg, 32, 32, 50e9, 20e-6)
			cfg.Disagg.Prefill.Coster, cfg.Disagg.Decode.Coster = tc.c, tc.c
			cfg.Disagg.Router = tc.router
			b.ReportAllocs()
			var r *Result
			cpu0 := cpuTime()
			for b.Loop() {
				var err error
				if r, err = Run(cfg, tc.c); err != nil {
					b.Fatal(err)
				}
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e9, "cpu-s/op")
			b.ReportMetric(float64(r.Steps), "steps/op")
			b.ReportMetric(float64(ms.Sys)/1e6, "sys-MB")
			if r.Completed != 360000 || r.Overloaded {
				b.Fatalf("completed %d, overloaded %v", r.Completed, r.Overloaded)
			}
		})
	}
}
