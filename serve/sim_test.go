package serve_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// realPoint is a closed-loop point of the embedded default scenario (Kimi-K2.5
// on 8x RTX PRO 6000 with its calibration tables) priced by the real step
// model.
func realPoint(tb testing.TB, name string, c, requests, in, out int) (serve.Config, *sim.Sim) {
	tb.Helper()
	sc, err := scenarios.Embedded(name)
	require.NoError(tb, err)
	sm, err := sc.Sim()
	require.NoError(tb, err)
	cfg, err := serve.SimConfig(sc.Config, sm, serve.VLLM)
	require.NoError(tb, err)
	cfg.Workload = serve.Workload{Requests: requests, MaxConcurrency: c, RequestRate: math.Inf(1), Burstiness: 1,
		InputTokens: in, OutputTokens: out}
	return cfg, sm
}

// BenchmarkSimClosedLoop is issue 9's speed points with the real step
// model (targets on one core: 0.3 s for 640 requests at concurrency 64 with
// 8192/1024 tokens, 3 s for 10,000 requests at concurrency 256):
//
//	go test ./serve -run '^$' -bench SimClosedLoop -cpu 1 -benchtime 3x
func BenchmarkSimClosedLoop(b *testing.B) {
	points := []struct {
		name                 string
		c, requests, in, out int
	}{
		{"C64-640x8192-1024", 64, 640, 8192, 1024},
		{"C256-10000x1024-1024", 256, 10000, 1024, 1024},
		{"C256-10000x8192-1024", 256, 10000, 8192, 1024},
	}
	for _, p := range points {
		b.Run(p.name, func(b *testing.B) {
			cfg, sm := realPoint(b, scenarios.DefaultName, p.c, p.requests, p.in, p.out)
			var r *serve.Result
			var c *serve.SimCoster
			for b.Loop() {
				c = serve.NewSimCoster(sm)
				var err error
				if r, err = serve.Run(cfg, c); err != nil {
					b.Fatal(err)
				}
				if c.Err() != nil {
					b.Fatal(c.Err())
				}
			}
			b.ReportMetric(float64(c.Hits)/float64(c.Hits+c.Misses), "memo-hits")
			b.ReportMetric(float64(r.Steps), "steps/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Steps), "ns/step")
		})
	}
}
