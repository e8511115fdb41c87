package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
)

func TestSimulateReplay(t *testing.T) {
	dir := t.TempDir()
	src, err := scenarios.EmbeddedSource("qwen3-235b-h100-tp4")
	require.NoError(t, err)
	log, err := os.ReadFile(benchFixtures + "mooncake.jsonl")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trace.jsonl"), log, 0o644))
	// The scenario's config path is relative to the shipped scenarios.
	abs, err := filepath.Abs("../../../../scenarios/configs/qwen3-235b-a22b-fp8.json")
	require.NoError(t, err)
	text := string(src)
	text = replaceOnce(t, text, `config = "configs/qwen3-235b-a22b-fp8.json"`, `config = "`+filepath.ToSlash(abs)+`"`)
	text = replaceOnce(t, text, "[workload]\n", "[workload]\ntrace = \"trace.jsonl\"\n")
	withTrace := filepath.Join(dir, "replay.toml")
	require.NoError(t, os.WriteFile(withTrace, []byte(text), 0o644))

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"--workload", []string{"simulate", "qwen3-235b-h100-tp4", "--workload", benchFixtures + "mooncake.jsonl", "--format", "json"}},
		{"workload.trace", []string{"simulate", withTrace, "--format", "json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			require.Equal(t, ExitOK, code, stderr)
			var got struct {
				Points []struct {
					Replay      bool     `json:"replay"`
					Requests    int      `json:"requests"`
					InputTokens int      `json:"input_tokens"`
					RequestRate *float64 `json:"request_rate"`
					MeanTTFT    *float64 `json:"mean_ttft_ms"`
				} `json:"points"`
				Warnings []string `json:"warnings"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &got))
			require.Len(t, got.Points, 1, "one point: the log")
			p := got.Points[0]
			assert.True(t, p.Replay)
			assert.Equal(t, 3, p.Requests)
			assert.Equal(t, (6955+1000+512+1)/3, p.InputTokens, "mean length")
			require.NotNil(t, p.RequestRate)
			assert.InDelta(t, 2/2.5, *p.RequestRate, 1e-9, "(n-1) / last arrival")
			require.NotNil(t, p.MeanTTFT)
			assert.Contains(t, stdout, `"prefix_hit_rate"`, "the trace's hash_ids drive the prefix cache")
		})
	}
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	require.Contains(t, s, old)
	return strings.Replace(s, old, new, 1)
}

func TestSimulateReplayBad(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"with concurrency", []string{"simulate", "--workload", benchFixtures + "mooncake.jsonl", "--concurrency", "4"}, "--concurrency does not apply"},
		{"missing", []string{"simulate", "--workload", "nope.jsonl"}, "--workload: nope.jsonl: no such file or directory"},
		{"not a log", []string{"simulate", "--workload", benchFixtures + "vllm-c16.json"}, "vllm-c16.json: a vllm result holds no per-request arrivals"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, ExitInput, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func TestValidateBenchRequestLog(t *testing.T) {
	code, stdout, stderr := runCLI(t, "validate", "bench", benchFixtures+"requests.jsonl", "--scenario", "qwen3-235b-h100-tp4", "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var got view.BenchJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Len(t, got.Results, 1)
	r := got.Results[0]
	assert.True(t, r.Replay)
	assert.Equal(t, 3, r.Requests)
	stats := map[string]bool{}
	for _, row := range r.Rows {
		stats[row.Metric+" "+row.Stat] = row.Predicted != nil
	}
	for _, k := range []string{"ttft mean", "ttft median", "ttft p90", "ttft p99", "tpot mean", "tpot p99", "e2el mean", "e2el p99"} {
		assert.True(t, stats[k], "%s predicted", k)
	}
}
