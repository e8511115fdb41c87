package validate

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/moecast/moecast/serve"
)

// `vllm bench serve --save-result` JSON: one object per file (pretty-
// printed or not), the result dict of vllm/benchmarks/serve.py with the
// run's metadata: `{mean,median,p99,...}_{ttft,tpot,itl,e2el}_ms`,
// `completed`, `total_input_tokens`, `max_concurrency`, `request_rate`.
// A file of many such objects, one a line, is read line by line.
func init() {
	RegisterFormat(Format{
		Name:  "vllm",
		Looks: "a JSON object with mean_ttft_ms, median_ttft_ms or mean_tpot_ms: vllm bench serve --save-result",
		Order: 50,
		Detect: func(s *Sniff) bool {
			return !s.IsArray() && s.HasAny("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms")
		},
		Read: func(name string, data []byte) ([]BenchResult, error) { return readVLLMKeyed(name, data, "vllm") },
	})
}

// readVLLMKeyed reads one object for the whole file, else one a line,
// each through vllmKeys. family names the records' format.
func readVLLMKeyed(name string, data []byte, family string) ([]BenchResult, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &BenchError{File: name, Line: 1, Msg: "not a JSON object: want a `vllm bench serve --save-result` file or SGLang bench_serving JSONL"}
	}
	if obj, err := decodeObject(trimmed); err == nil {
		r, err := vllmKeys(name, 1, obj, family)
		if err != nil {
			return nil, err
		}
		return []BenchResult{r}, nil
	}
	var out []BenchResult
	err := jsonLines(name, data, func(line int, obj map[string]json.RawMessage) error {
		r, err := vllmKeys(name, line, obj, family)
		if err != nil {
			return err
		}
		r.Multi = true
		out = append(out, r)
		return nil
	})
	return out, err
}

// vllmKeys maps one object of vLLM's result keys (and SGLang's, which
// share most of them: mean_e2e_latency_ms is E2E, total_input the input
// tokens) onto a record.
func vllmKeys(file string, line int, obj map[string]json.RawMessage, family string) (BenchResult, error) {
	f := &fields{file: file, line: line, obj: obj}
	r := newResult(file, line, family)
	r.Backend = f.str("backend")
	r.Model = f.str("model_id")
	r.NumPrompts = f.count("num_prompts")
	r.Completed = f.count("completed")
	r.Failed = f.count("failed")
	r.Duration = f.nonNeg("duration")
	r.Concurrency = f.count("max_concurrency")
	f.arrivals(&r)
	r.RequestThroughput = f.nonNeg("request_throughput")
	r.OutputThroughput = f.nonNeg("output_throughput")
	r.TotalTokenThroughput = f.nonNeg("total_token_throughput")
	if math.IsNaN(r.TotalTokenThroughput) {
		r.TotalTokenThroughput = f.nonNeg("total_throughput")
	}
	totalIn := f.nonNeg("total_input_tokens")
	if math.IsNaN(totalIn) {
		totalIn = f.nonNeg("total_input")
	}
	totalOut := f.nonNeg("total_output_tokens")
	if math.IsNaN(totalOut) {
		totalOut = f.nonNeg("total_output")
	}
	if r.Completed > 0 {
		r.InputTokens = totalIn / float64(r.Completed)
		r.OutputTokens = totalOut / float64(r.Completed)
	}
	if math.IsNaN(r.InputTokens) || r.InputTokens == 0 {
		r.InputTokens = f.nonNeg("random_input_len")
	}
	if math.IsNaN(r.OutputTokens) || r.OutputTokens == 0 {
		r.OutputTokens = f.nonNeg("random_output_len")
	}
	if f.has("random_range_ratio") {
		r.RangeRatio = f.nonNeg("random_range_ratio")
		if family == "sglang" {
			sglangRange(f, &r)
		}
	}
	for _, m := range MetricNames {
		keys := []string{m}
		if m == "e2el" {
			keys = append(keys, "e2e_latency") // SGLang
		}
		st := NoStats()
		for _, k := range keys {
			for _, s := range []struct {
				dst *float64
				pfx string
			}{{&st.Mean, "mean"}, {&st.Median, "median"}, {&st.P90, "p90"}, {&st.P99, "p99"}} {
				if key := s.pfx + "_" + k + "_ms"; f.has(key) {
					*s.dst = f.nonNeg(key)
				}
			}
		}
		r.Metrics[m] = st
	}
	if f.has("spec_decode_acceptance_length") {
		r.AcceptanceLength = f.nonNeg("spec_decode_acceptance_length")
	} else if f.has("accept_length") {
		r.AcceptanceLength = f.nonNeg("accept_length")
	}
	if math.IsNaN(r.AcceptanceLength) {
		r.AcceptanceLength = 0
	}
	if f.err != nil {
		return r, f.err
	}
	if f.has("completed") && r.Completed == 0 {
		return r, &BenchError{File: file, Line: line, Key: "completed", Msg: "0 requests completed: nothing to compare"}
	}
	if f.has("duration") && !(r.Duration > 0) {
		return r, &BenchError{File: file, Line: line, Key: "duration", Msg: "want a duration > 0 s"}
	}
	if err := r.Check("total_input_tokens"); err != nil {
		if be, ok := err.(*BenchError); ok && be.Key == "total_input_tokens" {
			be.Msg = "input or output length unknown (want total_input_tokens and total_output_tokens, or random_input_len and random_output_len)"
		}
		return r, err
	}
	return r, nil
}

// arrivals reads vllm bench's arrival settings, request_rate (> 0, or inf
// for all at once) and burstiness, where the file holds them.
func (f *fields) arrivals(r *BenchResult) {
	if f.has("request_rate") {
		r.RequestRate = f.num("request_rate")
		if math.IsNaN(r.RequestRate) || r.RequestRate <= 0 {
			f.fail("request_rate", "want a rate > 0 or inf, got %g", r.RequestRate)
		}
	}
	if f.has("burstiness") {
		r.Burstiness = f.nonNeg("burstiness")
	}
}

// sglangRange reads SGLang's random dataset: lengths on
// [max(int(L r), 1), L] (serve.RangeBelow; sgl-project/sglang @ 0ae7bc2
// `python/sglang/benchmark/datasets/common.py` compute_random_lens), so
// L is random_input_len / random_output_len, not the mean. Another
// dataset records the random keys' defaults, unused: its lengths are the
// means, fixed.
func sglangRange(f *fields, r *BenchResult) {
	if ds := f.str("dataset_name"); ds != "" && ds != "random" {
		r.RangeRatio = 0
		return
	}
	r.RangeStyle = serve.RangeBelow
	if in, out := f.nonNeg("random_input_len"), f.nonNeg("random_output_len"); in >= 1 && out >= 1 {
		r.InputTokens, r.OutputTokens = in, out
	}
}
