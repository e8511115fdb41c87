package serve_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/scenarios"
)

// BenchmarkScenarioClosedLoop is issue 21's speed points as `moecast
// simulate` runs them: the serve.Config of a shipped MoE scenario with
// every mechanism at its default (front end, host work, full-ISL
// admission, SGLang's admission and memory defaults, capture sizes, ...)
// and the client's spread of lengths on (InferenceX's benchmark_serving.py:
// lengths on [int(0.8 L), L]), priced by the real step model. Targets on
// one core: 0.15 s for 640 requests at concurrency 64 with 8192/1024
// tokens, 0.5 s for 10,000 requests at concurrency 256 with 1024/1024:
//
//	GOMAXPROCS=1 go test ./serve -run '^$' -bench ScenarioClosedLoop -benchtime 5x
func BenchmarkScenarioClosedLoop(b *testing.B) {
	engines := []struct {
		name, scenario string
		set            []scenarios.Override
	}{
		{"kimi-rtx6000-vllm", scenarios.DefaultName, nil},
		{"kimi-h200-vllm", "kimi-k2.5-h200-nvlink-tp8", nil},
		{"deepseek-h200-dp8-sglang", "deepseek-v3-fp8-h200-dp8-ep8", []scenarios.Override{{Key: "runtime.engine", Value: "sglang"}}},
	}
	points := []struct {
		name                 string
		c, requests, in, out int
	}{
		{"C64-640x8192-1024", 64, 640, 8192, 1024},
		{"C256-10000x1024-1024", 256, 10000, 1024, 1024},
	}
	for _, e := range engines {
		for _, p := range points {
			b.Run(e.name+"/"+p.name, func(b *testing.B) {
				set := append([]scenarios.Override{
					{Key: "workload.concurrency", Value: strconv.Itoa(p.c)},
					{Key: "workload.requests", Value: strconv.Itoa(p.requests)},
					{Key: "workload.input_tokens", Value: strconv.Itoa(p.in)},
					{Key: "workload.output_tokens", Value: strconv.Itoa(p.out)},
					{Key: "workload.range_ratio", Value: "0.8"},
					{Key: "workload.range_style", Value: "below"},
				}, e.set...)
				sc, err := scenarios.OpenWith(e.scenario, set)
				require.NoError(b, err)
				sm, err := sc.Sim()
				require.NoError(b, err)
				pts := sc.Serving.Points()
				require.Len(b, pts, 1)
				cfg, err := sc.ServeConfig(sm, pts[0])
				require.NoError(b, err)
				require.Equal(b, p.requests, cfg.Workload.Requests)
				require.Positive(b, cfg.Workload.RangeRatio, "client lengths off")
				r := benchRun(b, cfg, sm)
				if r.Completed != p.requests {
					b.Fatalf("completed %d of %d", r.Completed, p.requests)
				}
			})
		}
	}
}
