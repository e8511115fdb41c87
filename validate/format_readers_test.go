package validate

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/moecast/moecast/serve"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadAIConfigurator(t *testing.T) {
	rs := readFixture(t, "aiconfigurator-rows.csv")
	require.Len(t, rs, 3)
	for _, tc := range []struct {
		name          string
		r             BenchResult
		line, conc    int
		gpu, mode     string
		tp, dp, ep    int
		dpa           bool
		gpus          int
		in, out       float64
		ttft, tpot    float64
		backend, prec string
		inferenceX    bool // the InferenceX harness's client: lengths on [int(0.8 L), L]
	}{
		{"tp8, InferenceX database dump", rs[0], 2, 32, "h100_sxm", "agg", 8, 1, 1, false, 8, 1024, 256, 250.5, 12.25, "vllm", "fp8", true},
		{"attention dp: concurrency x dp, InferenceX export", rs[1], 3, 64, "b200_sxm", "agg", 1, 4, 4, true, 4, 8192, 1024, 1800, 20.5, "sglang", "fp8", true},
		{"disagg: the data source's concurrency, client unknown", rs[2], 4, 128, "gb200", "disagg", 0, 0, 0, false, 0, 1024, 1024, 300, 15, "trtllm", "nvfp4", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			assert.Equal(t, "aiconfigurator", r.Family)
			assert.Equal(t, tc.line, r.Line)
			assert.Equal(t, tc.conc, r.Concurrency)
			assert.Equal(t, 10*tc.conc, r.NumPrompts, "10 x concurrency")
			assert.Equal(t, tc.gpu, r.Layout.GPU)
			assert.Equal(t, tc.mode, r.Layout.Mode)
			assert.Equal(t, tc.tp, r.Layout.TP)
			assert.Equal(t, tc.dp, r.Layout.DP)
			assert.Equal(t, tc.ep, r.Layout.EP)
			assert.Equal(t, tc.dpa, r.Layout.DPAttention)
			assert.Equal(t, tc.gpus, r.Layout.GPUs)
			assert.Equal(t, tc.in, r.InputTokens)
			assert.Equal(t, tc.out, r.OutputTokens)
			assert.Equal(t, tc.ttft, r.Metrics["ttft"].Mean)
			assert.Equal(t, tc.tpot, r.Metrics["tpot"].Mean)
			assert.True(t, math.IsNaN(r.Metrics["tpot"].P99))
			assert.True(t, math.IsInf(r.RequestRate, 1))
			assert.Equal(t, tc.backend, r.Backend)
			assert.Equal(t, tc.prec, r.Layout.Precision)
			assert.Equal(t, "example/MoE-A", r.Model)
			assert.Contains(t, r.Warnings[0], "10 x concurrency")
			if tc.inferenceX {
				assert.Equal(t, 0.8, r.RangeRatio)
				assert.Equal(t, serve.RangeBelow, r.RangeStyle)
				assert.Contains(t, r.Warnings[0], "InferenceX's harness")
			} else {
				assert.Zero(t, r.RangeRatio, "no client known: fixed lengths")
				assert.Contains(t, r.Warnings[0], "fixed lengths")
			}
		})
	}
	assert.Equal(t, "4", rs[2].Layout.Extra["prefill_tp_size"])
	assert.Equal(t, "row-dp4", rs[1].ID)
	assert.Equal(t, "aiconfigurator-rows.csv:3", rs[1].Name())
}

func TestReadInferenceX(t *testing.T) {
	one := readFixture(t, "inferencex-agg.json")
	require.Len(t, one, 1)
	r := one[0]
	assert.Equal(t, "inferencex", r.Family)
	assert.Equal(t, 16, r.Concurrency)
	assert.Equal(t, 160, r.NumPrompts, "10 x conc, warned")
	assert.InDelta(t, 412, r.Metrics["ttft"].Mean, 1e-9, "seconds -> ms")
	assert.InDelta(t, 13.9, r.Metrics["tpot"].P99, 1e-9)
	assert.InDelta(t, 13200, r.Metrics["e2el"].Mean, 1e-9)
	assert.Equal(t, Layout{GPU: "h200", TP: 8, PP: 1, EP: 8, DP: 8, DPAttention: true, Mode: "agg", Precision: "fp8", GPUs: 8}, r.Layout)
	assert.Equal(t, "vllm", r.Backend)
	assert.Equal(t, "inferencex-agg.json", r.Name())
	assert.Equal(t, 0.8, r.RangeRatio, "the harness's client: [int(0.8 L), L]")
	assert.Equal(t, serve.RangeBelow, r.RangeStyle)

	rows := readFixture(t, "inferencex-rows.json")
	require.Len(t, rows, 2)
	assert.Equal(t, 2, rows[1].Line, "the element's index")
	assert.True(t, rows[1].Layout.DPAttention)
	assert.False(t, rows[0].Layout.DPAttention)
	assert.InDelta(t, 21, rows[1].Metrics["tpot"].Mean, 1e-9)

	tp := readFixture(t, "inferencex-tokenpos.json")
	require.Len(t, tp, 1)
	assert.Equal(t, 4, tp[0].Concurrency, "max_concurrency")
	assert.Equal(t, 40, tp[0].NumPrompts)
	assert.InDelta(t, 1024, tp[0].InputTokens, 1e-9, "total / completed")
	assert.InDelta(t, 250, tp[0].Metrics["ttft"].Median, 1e-9)
	assert.True(t, math.IsNaN(tp[0].Metrics["ttft"].Mean))
	assert.Empty(t, tp[0].Warnings)
	assert.Zero(t, tp[0].RangeRatio, "the token-position runs send fixed lengths")
}

func TestReadRequestLog(t *testing.T) {
	rs := readFixture(t, "requests.jsonl")
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Equal(t, "requestlog", r.Family)
	require.Len(t, r.Requests, 3)
	// Sorted by arrival, relative to the first.
	assert.Equal(t, []float64{0, 0.5, 1}, []float64{r.Requests[0].Arrival, r.Requests[1].Arrival, r.Requests[2].Arrival})
	q := r.Requests[1] // r-1: queued 50.5, first 50.7, last 51.7, 21 out
	assert.InDelta(t, 200, q.TTFT, 1e-6)
	assert.InDelta(t, 50, q.TPOT, 1e-6, "(51.7-50.7)/20 s")
	assert.InDelta(t, 1200, q.E2E, 1e-6)
	assert.InDelta(t, 0, q.Queue, 1e-6)
	assert.InDelta(t, 500, r.Requests[2].Queue, 1e-6, "scheduled - queued")
	assert.True(t, math.IsNaN(r.Requests[2].TPOT), "one output token: no TPOT")
	assert.InDelta(t, (100+200+700)/3.0, r.Metrics["ttft"].Mean, 1e-6)
	assert.InDelta(t, 200, r.Metrics["ttft"].Median, 1e-6)
	assert.InDelta(t, 50, r.Metrics["tpot"].Mean, 1e-6, "(50 + 50) / 2")
	assert.Equal(t, 3, r.NumPrompts)
	assert.InDelta(t, 200, r.InputTokens, 1e-9)
	assert.InDelta(t, 2, r.RequestRate, 1e-9, "(n-1) / last arrival")
}

func TestReadMooncake(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "bench", "mooncake.jsonl"))
	require.NoError(t, err)
	_, err = readBenchBytes("mooncake.jsonl", b)
	require.Error(t, err, "nothing measured to compare")
	assert.Contains(t, err.Error(), "no latency figure")

	tr, warns, err := ReadWorkload("mooncake.jsonl", b)
	require.NoError(t, err)
	require.Len(t, tr, 3)
	assert.Equal(t, 1.0, tr[1].Arrival, "ms -> s, sorted")
	assert.Equal(t, 512, tr[1].InputTokens)
	assert.Equal(t, 2.5, tr[2].Arrival)
	assert.Empty(t, warns)
	assert.Equal(t, []int64{46, 47, 48, 49}, tr[0].HashIDs, "hash_ids kept for prefix caching")
	assert.Equal(t, []int64{46, 50}, tr[2].HashIDs)
	assert.Equal(t, []int64{}, tr[1].HashIDs, "empty: known to share nothing")

	_, _, err = ReadWorkload("bad.jsonl", []byte(`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": ["x"]}`+"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.jsonl:1: hash_ids: want an array of integers")

	b, err = os.ReadFile(filepath.Join("testdata", "bench", "requests.jsonl"))
	require.NoError(t, err)
	tr, warns, err = ReadWorkload("requests.jsonl", b)
	require.NoError(t, err)
	assert.Len(t, tr, 3)
	assert.Empty(t, warns)

	b, err = os.ReadFile(filepath.Join("testdata", "bench", "vllm-c16.json"))
	require.NoError(t, err)
	_, _, err = ReadWorkload("vllm-c16.json", b)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "vllm-c16.json: a vllm result holds no per-request arrivals")

	far := `{"timestamp": 0, "input_length": 100, "output_length": 10}` + "\n" + `{"timestamp": 1e300, "input_length": 100, "output_length": 10}` + "\n"
	_, _, err = ReadWorkload("far.jsonl", []byte(far))
	require.Error(t, err, "an arrival past the clock's resolution would time every later step as 0")
	assert.Contains(t, err.Error(), "far.jsonl:2: timestamp: request 2 arrives 1e+297 s after the first")
}

// TestReadWorkloadHostile: a request log or Mooncake trace to replay that
// is empty, or holds a length or a wait no simulation can run, is refused
// at its line and key. Session 11: an empty file read "not a result file
// of a known format", a length beyond the simulator's limit was refused
// without its line, and a turn's delay of 1e300 ms ran (0.0 tok/s, exit 0).
func TestReadWorkloadHostile(t *testing.T) {
	const ok = `{"timestamp": 0, "input_length": 100, "output_length": 10, "request_id": "a"}` + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "w.jsonl: empty: no request to replay"},
		{"blank lines", "\n \n\t\n", "w.jsonl: empty: no request to replay"},
		{"mooncake input too long", ok + `{"timestamp": 5, "input_length": 5000000, "output_length": 10}`, "w.jsonl:2: input_length: 5000000 tokens exceeds the limit of 4194304"},
		{"mooncake output too long", `{"timestamp": 5, "input_length": 5, "output_length": 4194305}`, "w.jsonl:1: output_length: 4194305 tokens exceeds the limit"},
		{"log input too long", `{"arrival_time": 0, "input_toks": 4194305, "output_toks": 1}`, "w.jsonl:1: input_toks: 4194305 tokens exceeds the limit"},
		{"unsorted, far arrival named at its line", `{"timestamp": 1e300, "input_length": 1, "output_length": 1}` + "\n" + ok, "w.jsonl:1: timestamp: request 2 arrives"},
		{"log far arrival", `{"arrival_time": 0, "input_toks": 1, "output_toks": 1}` + "\n" + `{"arrival_time": 1e12, "input_toks": 1, "output_toks": 1}`, "w.jsonl:2: arrival_time: request 2 arrives"},
		{"delay beyond the clock", ok + `{"timestamp": 1, "input_length": 1, "output_length": 1, "wait_for": ["a"], "delay": 1e300}`, "w.jsonl:2: delay: the turn waits 1e+297 s"},
		{"tool wait beyond the clock", ok + `{"timestamp": 1, "input_length": 1, "output_length": 1, "wait_for": ["a"], "tool_wait_ms": 2e10}`, "w.jsonl:2: delay: the turn waits 2e+07 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadWorkload("w.jsonl", []byte(tc.in+"\n"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestReadersBad(t *testing.T) {
	csvHead := "id,isl,osl,batch_size,silicon_ttft_ms,silicon_tpot_ms\n"
	for _, tc := range []struct{ name, in, want string }{
		{"csv missing column", "id,isl,silicon_ttft_ms,silicon_tpot_ms\nx,1,2,3\n", "r.out:1: osl: column missing"},
		{"csv bad number", csvHead + "x,1024,abc,8,1,1\n", `r.out:2: osl: want a finite number >= 0, got "abc"`},
		{"csv negative", csvHead + "x,1024,10,8,-1,1\n", "r.out:2: silicon_ttft_ms: want a finite number"},
		{"csv no concurrency", csvHead + "x,1024,10,0,1,1\n", "r.out:2: batch_size: want a concurrency >= 1"},
		{"csv quote", csvHead + "x,\"1024,10,8,1,1\n", "r.out:"},
		{"inferencex no lengths", `{"mean_ttft": 1, "conc": 4}`, "r.out:1: isl: input or output length unknown"},
		{"inferencex array of numbers", `[{"mean_ttft": 1, "isl": 1, "osl": 1}, 3]`, "r.out:1: [1]: not an object"},
		{"log no arrival", `{"input_toks": 1, "output_toks": 1, "queued_ts": null, "arrival_time": "x"}`, "r.out:1: arrival_time: want a number"},
		{"log disorder", `{"input_toks": 1, "output_toks": 2, "arrival_time": 1, "queued_ts": 5, "first_token_ts": 4, "last_token_ts": 6}`, "r.out:1: first_token_ts: timestamps out of order"},
		{"log zero out", `{"input_toks": 1, "output_toks": 0, "arrival_time": 1}`, "r.out:1: input_toks: want input_toks and output_toks >= 1"},
		{"log no timestamps", `{"input_toks": 1, "output_toks": 2, "arrival_time": 1}`, "r.out:1: no latency figure"},
		{"mooncake negative", `{"timestamp": -5, "input_length": 1, "output_length": 1}`, "r.out:1: timestamp: want a finite number >= 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readBenchBytes("r.out", []byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestReadMooncakeAgentic(t *testing.T) {
	trace := `{"request_id": "a", "session_id": "s", "timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}
{"request_id": "c", "session_id": "s", "timestamp": 900, "input_length": 300, "output_length": 10, "wait_for": ["a", "b"], "delay": 100, "tool_wait_ms": 250}
{"request_id": "b", "session_id": "s", "timestamp": 500, "input_length": 200, "output_length": 10, "wait_for": ["a"]}
`
	tr, _, err := ReadWorkload("agent.jsonl", []byte(trace))
	require.NoError(t, err)
	require.Len(t, tr, 3)
	assert.Empty(t, tr[0].After)
	assert.Equal(t, []int{0}, tr[1].After, "b, sorted second, waits for a")
	assert.Equal(t, []int{0, 1}, tr[2].After)
	assert.InDelta(t, 0.35, tr[2].Wait, 1e-12, "delay + tool_wait_ms, in s")

	for _, tc := range []struct {
		name, trace, msg string
	}{
		{"unknown id", `{"request_id": "a", "timestamp": 0, "input_length": 1, "output_length": 1, "wait_for": ["z"]}`, `agent.jsonl:1: wait_for: no request has request_id "z"`},
		{"later id", `{"request_id": "a", "timestamp": 0, "input_length": 1, "output_length": 1, "wait_for": ["b"]}` + "\n" + `{"request_id": "b", "timestamp": 5, "input_length": 1, "output_length": 1}`, `agent.jsonl:1: wait_for: request_id "b" does not arrive before this turn`},
		{"duplicate id", `{"request_id": "a", "timestamp": 0, "input_length": 1, "output_length": 1}` + "\n" + `{"request_id": "a", "timestamp": 5, "input_length": 1, "output_length": 1}`, `agent.jsonl:2: request_id: "a" appears twice`},
		{"bad wait_for", `{"request_id": "a", "timestamp": 0, "input_length": 1, "output_length": 1, "wait_for": "x"}`, `agent.jsonl:1: wait_for: want an array`},
		{"negative tool wait", `{"timestamp": 0, "input_length": 1, "output_length": 1, "tool_wait_ms": -3}`, `agent.jsonl:1: tool_wait_ms: want a finite number >= 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadWorkload("agent.jsonl", []byte(tc.trace+"\n"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestInferenceXSource(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"db-dump/2026-04-27; config_id=733; silicon_concurrency=128; measured=2026-04-17T00:00:00.000Z; workflow_run_id=758; vllm/vllm-openai:v0.19.0-cu130", true},
		{"source_file=2026-03-25.csv; model=MiniMax-M2.5; silicon_concurrency=16; measured=2026-04-03T17:02:12Z; wip=True; image=vllm/vllm-openai:nightly", true},
		{"source_file=/Users/x/aic-auto-gap-analysis/data/b200_sxm/trtllm/1.3.0rc1/nvidia_DeepSeek-R1-NVFP4.csv; gtl_job_id=1; silicon_concurrency=224", false},
		{"source_file=kimi-k2.5-gap-analysis.csv; silicon_concurrency=4; aic_database_mode=SILICON", false},
		{"source_file=2026-3-25.csv", false},
		{"", false},
	} {
		assert.Equal(t, tc.want, inferenceXSource(tc.src), tc.src)
	}
}
