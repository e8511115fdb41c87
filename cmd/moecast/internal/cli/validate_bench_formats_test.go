package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateBenchFieldFormats runs validate bench end to end on the
// printed vllm block, a sweep directory, AIPerf and GuideLLM: every record
// is simulated at its own load and compared on the metrics it holds.
func TestValidateBenchFieldFormats(t *testing.T) {
	tests := []struct {
		name, path, family string
		cases              int
		conc               []int
		metrics            []string // metrics every case compares
	}{
		{"vllm printed block", "vllm-bench-serve.txt", "vllm-text", 2, []int{16, 0}, []string{"ttft", "tpot", "itl"}},
		{"vllm sweep directory", "vllm-sweep", "vllm-sweep", 3, []int{16, 16, 32}, []string{"ttft", "tpot", "itl", "e2el"}},
		{"aiperf", "aiperf/profile_export_aiperf.json", "aiperf", 1, []int{16}, []string{"ttft", "tpot", "itl", "e2el"}},
		{"guidellm", "guidellm-benchmarks.json", "guidellm", 2, []int{16, 0}, []string{"ttft", "tpot", "e2el"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "validate", "bench", benchFixtures+tt.path, "--scenario", "gpt-oss-120b-h200-tp1", "--format", "json")
			require.Equal(t, ExitOK, code, stderr)
			var got struct {
				Cases []struct {
					Family      string `json:"family"`
					Concurrency int    `json:"concurrency"`
					Metrics     []struct {
						Metric string `json:"metric"`
					} `json:"rows"`
				} `json:"results"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
			require.Len(t, got.Cases, tt.cases)
			for i, c := range got.Cases {
				assert.Equal(t, tt.family, c.Family)
				assert.Equal(t, tt.conc[i], c.Concurrency, "case %d", i)
				seen := map[string]bool{}
				for _, m := range c.Metrics {
					seen[m.Metric] = true
				}
				for _, m := range tt.metrics {
					assert.True(t, seen[m], "case %d compares %s", i, m)
				}
			}
		})
	}
}
