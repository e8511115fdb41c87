package validate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moecast/moecast/serve"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readFixture(t *testing.T, name string) []BenchResult {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "bench", name))
	require.NoError(t, err)
	defer f.Close()
	rs, err := ReadBench(name, f)
	require.NoError(t, err)
	return rs
}

func TestReadBenchVLLM(t *testing.T) {
	rs := readFixture(t, "vllm-c16.json")
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Equal(t, "vllm", r.Family)
	assert.Equal(t, 16, r.Concurrency)
	assert.True(t, math.IsInf(r.RequestRate, 1), "request_rate \"inf\"")
	assert.Equal(t, 160, r.Completed)
	assert.InDelta(t, 1024, r.InputTokens, 1e-9)
	assert.InDelta(t, 1024, r.OutputTokens, 1e-9)
	assert.InDelta(t, 120, r.Duration, 1e-9)
	assert.InDelta(t, 412.5, r.Metrics["ttft"].Mean, 1e-9)
	assert.InDelta(t, 12.9, r.Metrics["tpot"].P99, 1e-9)
	assert.InDelta(t, 11992.2, r.Metrics["e2el"].Mean, 1e-9)
	assert.True(t, math.IsNaN(r.Metrics["ttft"].P90), "no p90 in the file")
	assert.InDelta(t, 2730.6667, r.TotalTokenThroughput, 1e-9)
	assert.Equal(t, "moonshotai/Kimi-K2.5", r.Model)
}

func TestReadBenchSGLangJSONL(t *testing.T) {
	rs := readFixture(t, "sglang-rates.jsonl")
	require.Len(t, rs, 2, "two objects, one blank line between")
	a, b := rs[0], rs[1]
	assert.Equal(t, "sglang", a.Family)
	assert.Equal(t, 1, a.Line)
	assert.Equal(t, 3, b.Line)
	assert.True(t, math.IsInf(a.RequestRate, 1), "bare Infinity")
	assert.Equal(t, 64, a.Concurrency)
	assert.InDelta(t, 8192, a.InputTokens, 1e-9)
	assert.InDelta(t, 29500, a.Metrics["e2el"].Mean, 1e-9, "mean_e2e_latency_ms maps to e2el")
	assert.Equal(t, 0.0, a.AcceptanceLength, "null accept_length")
	assert.InDelta(t, 4.0, b.RequestRate, 1e-9)
	assert.Equal(t, 0, b.Concurrency, "null max_concurrency")
	assert.InDelta(t, 0.5, b.RangeRatio, 1e-9)
	assert.Equal(t, serve.RangeBelow, b.RangeStyle, "SGLang's range: [int(L r), L]")
	assert.InDelta(t, 1365, b.InputTokens, 1e-9, "the nominal length, not the mean")
	assert.InDelta(t, 1.0, a.RangeRatio, 1e-9, "SGLang's fixed lengths")
	assert.InDelta(t, 2.4, b.AcceptanceLength, 1e-9)
}

func TestReadBenchBad(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "r.out: empty file"},
		{"array", "[1,2]", "r.out: not a result file of a known format; looked for: "},
		{"trace", `{"traceEvents": []}`, "vllm (a JSON object with mean_ttft_ms"},
		{"string duration", `{"duration": "soon", "completed": 3, "mean_ttft_ms": 1, "total_input_tokens": 3, "total_output_tokens": 3}`,
			`r.out:1: duration: want a number, got the string "soon"`},
		{"negative", `{"duration": 1, "completed": 3, "mean_ttft_ms": -1, "total_input_tokens": 3, "total_output_tokens": 3}`,
			"r.out:1: mean_ttft_ms: want a finite number >= 0, got -1"},
		{"no completions", `{"duration": 1, "completed": 0, "mean_ttft_ms": 1}`, "r.out:1: completed: 0 requests completed"},
		{"no lengths", `{"duration": 1, "completed": 2, "mean_ttft_ms": 1}`, "r.out:1: total_input_tokens: input or output length unknown"},
		{"bad rate", `{"duration": 1, "completed": 2, "mean_ttft_ms": 1, "request_rate": -3, "total_input_tokens": 3, "total_output_tokens": 3}`,
			"r.out:1: request_rate: want a rate > 0 or inf"},
		{"fractional count", `{"duration": 1, "completed": 2.5, "mean_ttft_ms": 1}`, "r.out:1: completed: want a whole number"},
		{"second line broken", "{\"duration\": 1, \"completed\": 2, \"mean_ttft_ms\": 1, \"total_input_tokens\": 2, \"total_output_tokens\": 2}\n{\"duration\": ",
			"r.out:2: not valid JSON"},
		{"string with Infinity stays", `{"duration": 1, "completed": 2, "mean_ttft_ms": 1, "backend": "Infinity", "total_input_tokens": 2, "total_output_tokens": 2, "request_rate": NaN}`,
			"r.out:1: request_rate: want a rate > 0 or inf, got NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadBench("r.out", strings.NewReader(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "json: ", "no Go internals")
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestReadBenchPartial(t *testing.T) {
	// A row copied from a blog: TTFT and TPOT, concurrency and lengths,
	// no duration, no counts.
	rs, err := ReadBench("blog.json", strings.NewReader(`{"mean_ttft_ms": 120, "mean_tpot_ms": 11.5, "max_concurrency": 8, "random_input_len": 1000, "random_output_len": 100}`))
	require.NoError(t, err)
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Equal(t, 8, r.Concurrency)
	assert.True(t, math.IsNaN(r.Duration), "duration absent, not refused")
	assert.InDelta(t, 1000, r.InputTokens, 1e-9)
	require.Len(t, r.Warnings, 1)
	assert.Contains(t, r.Warnings[0], "no request count")
}

func TestPythonFloatsLeavesStrings(t *testing.T) {
	in := `{"a": "NaN and Infinity", "b": -Infinity, "c": "x\"Infinity"}`
	got := string(pythonFloats([]byte(in)))
	assert.Equal(t, `{"a": "NaN and Infinity", "b": "-inf", "c": "x\"Infinity"}`, got)
}

func FuzzReadBench(f *testing.F) {
	for _, name := range []string{"vllm-c16.json", "sglang-rates.jsonl", "aiconfigurator-rows.csv", "inferencex-agg.json",
		"inferencex-rows.json", "inferencex-tokenpos.json", "requests.jsonl", "mooncake.jsonl",
		"vllm-bench-serve.txt", "sglang-bench-serving.txt", "aiperf/profile_export_aiperf.json", "aiperf/profile_export.jsonl",
		"guidellm-benchmarks.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "bench", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"duration": Infinity, "completed": 1e300, "mean_ttft_ms": NaN}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ReadBench("fuzz.json", strings.NewReader(string(b)))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, r := range rs {
			if !(r.InputTokens >= 1) || !(r.OutputTokens >= 1) || math.IsInf(r.InputTokens, 0) || math.IsInf(r.OutputTokens, 0) || r.Duration <= 0 {
				t.Fatalf("accepted an unusable result: %+v", r)
			}
		}
	})
}

func FuzzReadWorkload(f *testing.F) {
	for _, name := range []string{"requests.jsonl", "mooncake.jsonl", "vllm-c16.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "bench", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, _, err := ReadWorkload("fuzz.jsonl", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.jsonl") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		prev := 0.0
		for i, q := range tr {
			if !(q.Arrival >= prev) || math.IsInf(q.Arrival, 0) || q.InputTokens < 1 || q.OutputTokens < 1 ||
				q.InputTokens > MaxReplayTokens || q.OutputTokens > MaxReplayTokens || !(q.Wait <= serve.MaxArrival) {
				t.Fatalf("request %d unusable or out of order: %+v", i, q)
			}
			prev = q.Arrival
		}
	})
}
