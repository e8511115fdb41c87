package validate

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The readers of vllm bench serve's printed block, vllm bench sweep
// directories, AIPerf and GuideLLM; fixtures in testdata/bench (README.md
// says how each was written).

func TestReadBenchText(t *testing.T) {
	rs := readFixture(t, "vllm-bench-serve.txt")
	require.Len(t, rs, 2)
	sg := readFixture(t, "sglang-bench-serving.txt")
	require.Len(t, sg, 1)
	nan := math.NaN()
	for _, tc := range []struct {
		name                string
		r                   BenchResult
		line, conc          int
		rate                float64
		done, failed        int
		dur, in, out        float64
		ttft, tpot, e2e     Stats
		itlMean, acceptance float64
		multi               bool
	}{
		{"closed loop", rs[0], 10, 16, math.Inf(1), 160, 0, 40, 1024, 256,
			Stats{180.5, 170.25, nan, 410.75}, Stats{14.75, 14.5, nan, 17.25}, NoStats(), 14.7, 0, true},
		{"open loop, p50 p90 p99 and E2EL", rs[1], 36, 0, 5, 198, 2, 41.25, 1024, 256,
			Stats{150, 140, 220, 390}, Stats{16, 15.75, 18, 21.5}, Stats{4230, 4150, 4700, 5600}, 15.9, 0, true},
		{"SGLang's block", sg[0], 4, 8, math.Inf(1), 64, 0, 32, 1024, 256,
			Stats{120, 110, nan, 300}, NoStats(), Stats{3950, 3900, nan, nan}, 15, 2.4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			assert.Equal(t, "vllm-text", r.Family)
			assert.Equal(t, tc.line, r.Line, "the line of the block's title")
			assert.Equal(t, tc.multi, r.Multi)
			assert.Equal(t, tc.conc, r.Concurrency)
			assert.Equal(t, tc.rate, r.RequestRate)
			assert.Equal(t, tc.done, r.Completed)
			assert.Equal(t, tc.failed, r.Failed)
			assert.InDelta(t, tc.dur, r.Duration, 1e-9)
			assert.InDelta(t, tc.in, r.InputTokens, 1e-9)
			assert.InDelta(t, tc.out, r.OutputTokens, 1e-9)
			assertStats(t, "ttft", tc.ttft, r.Metrics["ttft"])
			assertStats(t, "tpot", tc.tpot, r.Metrics["tpot"])
			assertStats(t, "e2el", tc.e2e, r.Metrics["e2el"])
			assert.InDelta(t, tc.itlMean, r.Metrics["itl"].Mean, 1e-9)
			assert.InDelta(t, tc.acceptance, r.AcceptanceLength, 1e-9)
		})
	}
	assert.Equal(t, "sglang", sg[0].Backend)
	assert.Contains(t, strings.Join(sg[0].Warnings, "\n"), "no TPOT figure", "SGLang's ITL is not taken for TPOT")
	assert.Equal(t, "vllm-bench-serve.txt:36", rs[1].Name())
}

// assertStats compares two Stats, NaN equal to NaN.
func assertStats(t *testing.T, what string, want, got Stats) {
	t.Helper()
	for _, f := range []struct {
		name   string
		w, g   float64
		absent bool
	}{{"mean", want.Mean, got.Mean, false}, {"median", want.Median, got.Median, false}, {"p90", want.P90, got.P90, false}, {"p99", want.P99, got.P99, false}} {
		if math.IsNaN(f.w) {
			assert.True(t, math.IsNaN(f.g), "%s %s: want absent, got %g", what, f.name, f.g)
			continue
		}
		assert.InDelta(t, f.w, f.g, 1e-9, "%s %s", what, f.name)
	}
}

func TestReadSweepDir(t *testing.T) {
	rs, err := ReadBenchPath("testdata/bench/vllm-sweep")
	require.NoError(t, err)
	require.Len(t, rs, 3, "one record per run=<n>.json; summaries are not read again")
	const comb = "testdata/bench/vllm-sweep/20260105_101500/SERVE--max_num_seqs=64-tensor_parallel_size=4-BENCH--max_concurrency="
	for i, tc := range []struct {
		file      string
		conc, run int
		ttft      float64
	}{
		{comb + "16/run=0.json", 16, 0, 180},
		{comb + "16/run=1.json", 16, 1, 185},
		{comb + "32/run=0.json", 32, 0, 240},
	} {
		r := rs[i]
		assert.Equal(t, "vllm-sweep", r.Family)
		assert.Equal(t, tc.file, r.File)
		assert.Equal(t, tc.conc, r.Concurrency)
		assert.InDelta(t, tc.ttft, r.Metrics["ttft"].Mean, 1e-9)
		assert.Equal(t, 4, r.Layout.TP)
		assert.Equal(t, 4, r.Layout.EP, "enable_expert_parallel: EP = TP x DP")
		assert.Equal(t, 4, r.Layout.GPUs)
		assert.Equal(t, tc.run, mustAtoi(t, r.Layout.Extra["run_number"]))
		assert.InDelta(t, 1024, r.InputTokens, 1e-9)
	}
	// The timestamp directory and a combination directory are sweeps too.
	sub, err := ReadBenchPath("testdata/bench/vllm-sweep/20260105_101500/SERVE--max_num_seqs=64-tensor_parallel_size=4-BENCH--max_concurrency=32/")
	require.NoError(t, err)
	require.Len(t, sub, 1)
	assert.Equal(t, comb+"32/run=0.json", sub[0].File)
}

// TestReadSweepDirSLA reads the deeper tree of vllm bench sweep serve_sla.
func TestReadSweepDirSLA(t *testing.T) {
	run := `{"mean_ttft_ms": 100, "completed": 10, "total_input_tokens": 1000, "total_output_tokens": 100, "request_rate": %d, "run_number": 0}`
	fsys := fstest.MapFS{
		"out/20260105_1200/SERVE--tensor_parallel_size=2/request_rate=8/run=0.json":  {Data: []byte(strings.Replace(run, "%d", "8", 1))},
		"out/20260105_1200/SERVE--tensor_parallel_size=2/request_rate=16/run=0.json": {Data: []byte(strings.Replace(run, "%d", "16", 1))},
		"out/20260105_1200/SERVE--tensor_parallel_size=2/SLA--p99_e2el_ms<=500.json": {Data: []byte("[]")},
		"out/20260105_1200/summary.csv":                                              {Data: []byte("x\n")},
	}
	rs, err := ReadBenchFS(fsys, "out")
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, 16.0, rs[0].RequestRate, "sorted by path: request_rate=16 before request_rate=8")
	assert.Equal(t, 8.0, rs[1].RequestRate)
	assert.Equal(t, "out/20260105_1200/SERVE--tensor_parallel_size=2/request_rate=8/run=0.json", rs[1].File)
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9', "%q is not a number", s)
		n = 10*n + int(c-'0')
	}
	return n
}

func TestReadAIPerf(t *testing.T) {
	rs := readFixture(t, "aiperf/profile_export_aiperf.json")
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Equal(t, "aiperf", r.Family)
	assert.Equal(t, 16, r.Concurrency, "input_config.loadgen.concurrency")
	assert.True(t, math.IsInf(r.RequestRate, 1))
	assert.Equal(t, 160, r.Completed)
	assert.Equal(t, 160, r.NumPrompts)
	assert.Equal(t, "example/MoE-A", r.Model)
	assert.InDelta(t, 41.03, r.Duration, 1e-9, "benchmark_duration in sec")
	assert.InDelta(t, 1024, r.InputTokens, 1e-9)
	assert.InDelta(t, 256, r.OutputTokens, 1e-9)
	assertStats(t, "ttft", Stats{210, 190, 320, 450}, r.Metrics["ttft"])
	assertStats(t, "tpot = inter_token_latency", Stats{15.33, 15.1, 16.8, 18.2}, r.Metrics["tpot"])
	assertStats(t, "itl = inter_chunk_latency", Stats{15.30, 14.6, 18.9, 31.0}, r.Metrics["itl"])
	assertStats(t, "e2el = request_latency", Stats{4120, 4050, 4500, 5200}, r.Metrics["e2el"])
	assert.Empty(t, r.Warnings)

	// A configuration without the load says so.
	noLoad := `{"time_to_first_token": {"unit": "ms", "avg": 10}, "input_sequence_length": {"unit": "tokens", "avg": 100}, "output_sequence_length": {"unit": "tokens", "avg": 10}, "request_count": {"unit": "requests", "avg": 8}, "input_config": {"concurrency": 4}}`
	rs, err := readBenchBytes("n.json", []byte(noLoad))
	require.NoError(t, err)
	assert.Contains(t, strings.Join(rs[0].Warnings, "\n"), "neither loadgen.concurrency nor loadgen.request_rate")
	assert.Equal(t, 0, rs[0].Concurrency)

	// Units are converted from what the file states.
	data, err := os.ReadFile("testdata/bench/aiperf/profile_export_aiperf.json")
	require.NoError(t, err)
	sec := strings.Replace(string(data), `"time_to_first_token": {
    "unit": "ms",
    "avg": 210.0`, `"time_to_first_token": {
    "unit": "s",
    "avg": 0.21`, 1)
	require.NotEqual(t, string(data), sec)
	rs, err = readBenchBytes("s.json", []byte(sec))
	require.NoError(t, err)
	assert.InDelta(t, 210, rs[0].Metrics["ttft"].Mean, 1e-9)
}

func TestReadAIPerfRequests(t *testing.T) {
	rs := readFixture(t, "aiperf/profile_export.jsonl")
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Equal(t, "aiperf-requests", r.Family)
	require.Len(t, r.Requests, 5, "the cancelled request is left out")
	assert.Equal(t, 1, r.Failed)
	assert.Equal(t, 6, r.NumPrompts)
	assert.Equal(t, 5, r.Completed)
	wantArrival := []float64{0, 0.25, 0.5, 0.75, 1.25}
	for i, q := range r.Requests {
		assert.InDelta(t, wantArrival[i], q.Arrival, 1e-6, "request %d sorted by request_start_ns", i)
		assert.InDelta(t, q.TTFT+q.TPOT*float64(q.OutputTokens-1), q.E2E, 1e-6, "request %d", i)
		assert.True(t, math.IsNaN(q.Queue))
	}
	assert.Equal(t, 1048, r.Requests[1].InputTokens)
	assert.InDelta(t, (200.0+220+190+180+300)/5, r.Metrics["ttft"].Mean, 1e-9)
	assert.InDelta(t, (15.0+15.5+15.2+14.8+16)/5, r.Metrics["tpot"].Mean, 1e-9)
	w := strings.Join(r.Warnings, "\n")
	assert.Contains(t, w, "1 failed or cancelled")
	assert.Contains(t, w, "client's send times")
}

func TestReadGuideLLM(t *testing.T) {
	rs := readFixture(t, "guidellm-benchmarks.json")
	require.Len(t, rs, 2)
	for _, tc := range []struct {
		name              string
		r                 BenchResult
		conc              int
		rate, burst       float64
		done, failed, all int
		ttft, itl, lat    float64
	}{
		{"concurrent streams", rs[0], 16, math.Inf(1), 1, 240, 0, 243, 200, 15, 200 + 15*255},
		{"constant rate", rs[1], 0, 4, math.Inf(1), 236, 2, 238, 150, 14, 150 + 14*255},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			assert.Equal(t, "guidellm", r.Family)
			assert.True(t, r.Multi)
			assert.Equal(t, tc.conc, r.Concurrency)
			assert.Equal(t, tc.rate, r.RequestRate)
			assert.Equal(t, tc.burst, r.Burstiness)
			assert.Equal(t, tc.done, r.Completed)
			assert.Equal(t, tc.failed, r.Failed)
			assert.Equal(t, tc.all, r.NumPrompts)
			assert.InDelta(t, 60, r.Duration, 1e-9)
			assert.InDelta(t, 1024, r.InputTokens, 1e-9)
			assert.InDelta(t, 256, r.OutputTokens, 1e-9)
			assert.InDelta(t, tc.ttft, r.Metrics["ttft"].Mean, 1e-9)
			assert.InDelta(t, tc.ttft*2.2, r.Metrics["ttft"].P99, 1e-9)
			assert.InDelta(t, tc.itl, r.Metrics["tpot"].Mean, 1e-9, "inter_token_latency_ms is TPOT")
			assert.InDelta(t, tc.lat, r.Metrics["e2el"].Mean, 1e-6, "request_latency is in seconds")
			assert.True(t, math.IsNaN(r.Metrics["itl"].Mean), "GuideLLM has no per-gap ITL")
			assert.Equal(t, "example/MoE-A", r.Model)
		})
	}
	assert.Contains(t, strings.Join(rs[0].Warnings, "\n"), "3 incomplete requests")
	assert.Equal(t, "guidellm-benchmarks.json:2", rs[1].Name())
}

func TestFieldReadersBad(t *testing.T) {
	block := "============ Serving Benchmark Result ============\n"
	aip := `{"time_to_first_token": {"unit": "ms", "avg": 10}, "input_sequence_length": {"unit": "tokens", "avg": 100}, "output_sequence_length": {"unit": "tokens", "avg": 10}`
	g := `{"benchmarks": [{"config": {"strategy": {"type_": "concurrent", "streams": 4}}, "metrics": {"request_totals": {"successful": 4}, "time_to_first_token_ms": {"successful": {"mean": %s}}, "prompt_token_count": {"successful": {"mean": 10}}, "output_token_count": {"successful": {"mean": 10}}}}]}`
	line := `{"metadata": {"request_start_ns": 1, "benchmark_phase": "profiling"}, "metrics": {"time_to_first_token": {"value": 5, "unit": %s}, "input_sequence_length": {"value": 10, "unit": "tokens"}, "output_sequence_length": {"value": 3, "unit": "tokens"}}, "error": null}`
	for _, tc := range []struct{ name, in, want string }{
		{"text: a bad number", block + "Successful requests:   x10\n", `r.out:2: Successful requests: "x10" is not a number`},
		{"text: no lengths", block + "Mean TTFT (ms):  5\n", "r.out:1: Total input tokens: input or output length unknown (want Successful requests"},
		{"text: no latency", block + "Successful requests: 2\nTotal input tokens: 20\nTotal generated tokens: 20\n", "r.out:1: no latency figure"},
		{"text: fractional count", block + "Successful requests: 2.5\n", "r.out:1: Successful requests: want a whole number"},
		{"text: zero duration", block + "Benchmark duration (s): 0\n", "r.out:1: Benchmark duration (s): want a duration > 0 s"},
		{"text: negative latency", block + "Successful requests: 2\nTotal input tokens: 20\nTotal generated tokens: 20\nMean TTFT (ms): -3\n", "r.out:1: Mean TTFT (ms): want a latency >= 0 ms"},
		{"aiperf: unknown unit", strings.Replace(aip, `"unit": "ms"`, `"unit": "fortnights"`, 1) + "}", `r.out:1: time_to_first_token: unit "fortnights": want a time unit`},
		{"aiperf: wrong length unit", strings.Replace(aip, `"unit": "tokens", "avg": 100`, `"unit": "words", "avg": 100`, 1) + "}", `r.out:1: input_sequence_length: unit "words": want "tokens"`},
		{"aiperf: metric not an object", `{"time_to_first_token": {"unit": "ms", "avg": "x"}, "request_latency": {"avg": 1}}`, "r.out:1: time_to_first_token: want {\"unit\", \"avg\", ...}"},
		{"aiperf: no lengths", `{"time_to_first_token": {"unit": "ms", "avg": 10}}`, "r.out:1: input_sequence_length: input or output length unknown"},
		{"aiperf: bad concurrency", aip + `, "input_config": {"loadgen": {"concurrency": 0}}}`, "r.out:1: input_config.loadgen.concurrency: want a whole number >= 1"},
		{"aiperf requests: no unit", strings.Replace(line, "%s", "null", 1), "r.out:1: metrics.time_to_first_token: no unit"},
		{"aiperf requests: bad unit", strings.Replace(line, "%s", `"parsecs"`, 1), `r.out:1: metrics.time_to_first_token: unit "parsecs"`},
		{"aiperf requests: no start", `{"metadata": {"request_start_ns": null, "x": 1}, "metrics": {}, "error": null}` + "\n" + strings.Replace(line, "%s", `"ms"`, 1), "r.out:1: metadata.request_start_ns: missing"},
		{"guidellm: negative", strings.Replace(g, "%s", "-1", 1), "r.out:1: benchmarks[0].metrics.time_to_first_token_ms.successful.mean: want a latency >= 0"},
		{"guidellm: bad streams", strings.Replace(strings.Replace(g, "%s", "5", 1), `"streams": 4`, `"streams": 0.5`, 1), "r.out:1: benchmarks[0].config.strategy.streams: want a whole number >= 1"},
		{"guidellm: not a list of objects", `{"benchmarks": [{"metrics": {"time_to_first_token_ms": 3}}]}`, "r.out:1: benchmarks[0]: not a GuideLLM benchmark"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readBenchBytes("r.out", []byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestFieldReadersDetected(t *testing.T) {
	for _, tc := range []struct{ file, family string }{
		{"vllm-bench-serve.txt", "vllm-text"},
		{"sglang-bench-serving.txt", "vllm-text"},
		{"aiperf/profile_export_aiperf.json", "aiperf"},
		{"aiperf/profile_export.jsonl", "aiperf-requests"},
		{"guidellm-benchmarks.json", "guidellm"},
		{"vllm-c16.json", "vllm"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/bench/" + tc.file)
			require.NoError(t, err)
			f := detect(newSniff(tc.file, data))
			require.NotNil(t, f)
			assert.Equal(t, tc.family, f.Name)
		})
	}
}

// FuzzReadSweepDir feeds arbitrary run files to the sweep-directory reader:
// a record or a one-line error naming the file, never a panic.
func FuzzReadSweepDir(f *testing.F) {
	for _, p := range []string{
		"vllm-sweep/20260105_101500/SERVE--max_num_seqs=64-tensor_parallel_size=4-BENCH--max_concurrency=16/run=0.json",
		"vllm-c16.json",
	} {
		b, err := os.ReadFile("testdata/bench/" + p)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"mean_ttft_ms": 1, "completed": 2, "total_input_tokens": 2, "total_output_tokens": 2, "tensor_parallel_size": -1, "enable_expert_parallel": 3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fsys := fstest.MapFS{"d/ts/comb/run=0.json": {Data: b}}
		rs, err := ReadBenchFS(fsys, "d")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "d/ts/comb/run=0.json") {
				t.Fatalf("error without the run file's name: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error has a newline: %q", err)
			}
			return
		}
		for _, r := range rs {
			if !(r.InputTokens >= 1) || r.Layout.TP < 0 || r.Layout.EP < 0 {
				t.Fatalf("accepted an unusable record: %+v", r)
			}
		}
	})
}

// TestReadWorkloadAIPerfKeys: a replayed AIPerf export's request past the
// replay limits is named by its own record's line and AIPerf's key, not
// the request-log or Mooncake keys the file does not have.
func TestReadWorkloadAIPerfKeys(t *testing.T) {
	data, err := os.ReadFile("testdata/bench/aiperf/profile_export.jsonl")
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	lines[2] = strings.Replace(lines[2], `"input_sequence_length": {"value": 1048,`, fmt.Sprintf(`"input_sequence_length": {"value": %d,`, MaxReplayTokens+1), 1)
	require.NotEqual(t, string(data), strings.Join(lines, ""), "the fixture's third record has 1048 input tokens")
	_, _, err = ReadWorkload("p.jsonl", []byte(strings.Join(lines, "")))
	var be *BenchError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "metrics.input_sequence_length", be.Key)
	assert.Equal(t, 3, be.Line)
}
