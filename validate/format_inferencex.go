package validate

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/moecast/moecast/serve"
)

// InferenceX result rows (SemiAnalysisAI/InferenceX `utils/process_result.py`
// writes agg_<result>.json): the `vllm bench serve` result with every `_ms`
// key renamed without it and its value divided by 1000 (latencies in
// **seconds**: mean_ttft, p99_tpot, ...), plus the run's setup: hw, conc,
// model, framework, precision, spec_decoding, isl, osl, tp, pp, ep,
// dp_attention ("true"/"false"), disagg. Its experimental token-position
// runs write the same seconds-valued keys beside vLLM's metadata
// (max_concurrency, total_input_tokens, ...). One object a file, a JSON
// array of them, or one a line.
func init() {
	RegisterFormat(Format{
		Name:  "inferencex",
		Looks: "JSON objects with mean_ttft, median_ttft or p99_tpot in seconds (no _ms): InferenceX agg_*.json rows",
		Order: 45,
		Detect: func(s *Sniff) bool {
			return s.HasAny("mean_ttft", "median_ttft", "p99_ttft", "mean_tpot", "median_tpot", "p99_tpot") &&
				!s.HasAny("mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms")
		},
		Read: readInferenceX,
	})
}

func readInferenceX(name string, data []byte) ([]BenchResult, error) {
	trimmed := bytes.TrimSpace(data)
	var out []BenchResult
	add := func(line int, multi bool, obj map[string]json.RawMessage) error {
		r, err := inferenceXRow(name, line, obj)
		if err != nil {
			return err
		}
		r.Multi = multi
		out = append(out, r)
		return nil
	}
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(pythonFloats(trimmed), &arr); err != nil {
			return nil, &BenchError{File: name, Line: 1, Msg: "not a JSON array of objects: " + jsonMsg(err)}
		}
		for i, raw := range arr {
			obj, err := decodeObject(raw)
			if err != nil {
				return nil, &BenchError{File: name, Line: 1, Key: "[" + strconv.Itoa(i) + "]", Msg: "not an object: " + jsonMsg(err)}
			}
			// Line is the element's 1-based index in the array.
			if err := add(i+1, true, obj); err != nil {
				return nil, err
			}
		}
		return out, nil
	default:
		if obj, err := decodeObject(trimmed); err == nil {
			return out, add(1, false, obj)
		}
		return out, jsonLines(name, data, func(line int, obj map[string]json.RawMessage) error { return add(line, true, obj) })
	}
}

// inferenceXRow maps one row; latencies are seconds.
func inferenceXRow(file string, line int, obj map[string]json.RawMessage) (BenchResult, error) {
	f := &fields{file: file, line: line, obj: obj}
	r := newResult(file, line, "inferencex")
	r.Model = f.str("model")
	if r.Model == "" {
		r.Model = f.str("model_id")
	}
	r.Backend = f.str("framework")
	r.Concurrency = f.count("conc")
	if r.Concurrency == 0 {
		r.Concurrency = f.count("max_concurrency")
	}
	f.arrivals(&r)
	r.NumPrompts = f.count("num_prompts")
	r.Completed = f.count("completed")
	r.Duration = f.nonNeg("duration")
	r.RequestThroughput = f.nonNeg("request_throughput")
	r.OutputThroughput = f.nonNeg("output_throughput")
	r.TotalTokenThroughput = f.nonNeg("total_token_throughput")
	r.InputTokens, r.OutputTokens = f.nonNeg("isl"), f.nonNeg("osl")
	// A row of the harness (process_result.py writes hw and isl) ran
	// its client: lengths on [int(0.8 isl), isl]; isl and osl are the
	// nominal lengths the range is drawn below. The token-position runs
	// send fixed lengths (their benchmark_serving_random.py: "Use fixed
	// lengths (no range variation)"), measured by the totals.
	if harness := f.has("isl") && f.has("hw"); harness {
		r.RangeRatio, r.RangeStyle = inferenceXRangeRatio, serve.RangeBelow
		r.warn("the row does not record the client's range: InferenceX's harness taken, lengths uniform on [int(%g isl), isl]", inferenceXRangeRatio)
	} else if r.Completed > 0 {
		if in := f.nonNeg("total_input_tokens"); in > 0 {
			r.InputTokens = in / float64(r.Completed)
		}
		if out := f.nonNeg("total_output_tokens"); out > 0 {
			r.OutputTokens = out / float64(r.Completed)
		}
	}
	for _, m := range MetricNames {
		st := NoStats()
		for _, s := range []struct {
			dst *float64
			pfx string
		}{{&st.Mean, "mean"}, {&st.Median, "median"}, {&st.P90, "p90"}, {&st.P99, "p99"}} {
			if key := s.pfx + "_" + m; f.has(key) {
				*s.dst = f.nonNeg(key) * 1000 // seconds -> ms
			}
		}
		r.Metrics[m] = st
	}
	l := &r.Layout
	l.GPU = f.str("hw")
	l.TP, l.PP, l.EP = f.count("tp"), f.count("pp"), f.count("ep")
	l.Precision = f.str("precision")
	if dpa := strings.ToLower(f.str("dp_attention")); dpa == "true" {
		l.DPAttention = true
	} else if f.has("dp_attention") && string(obj["dp_attention"]) == "true" {
		l.DPAttention = true
	}
	if l.DPAttention {
		l.DP = l.TP
	}
	if d := f.str("disagg"); strings.EqualFold(d, "true") || string(obj["disagg"]) == "true" {
		l.Mode = "disagg"
	} else if f.has("disagg") {
		l.Mode = "agg"
	}
	if l.TP > 0 {
		l.GPUs = l.TP * max(l.PP, 1)
	}
	if sd := f.str("spec_decoding"); sd != "" && sd != "none" {
		l.Extra = map[string]string{"spec_decoding": sd}
	}
	if f.err != nil {
		return r, f.err
	}
	if r.NumPrompts == 0 && r.Completed == 0 && r.Concurrency > 0 {
		r.NumPrompts = 10 * r.Concurrency
		r.warn("the row does not record the request count: 10 x conc = %d assumed (the InferenceX harness)", r.NumPrompts)
	}
	return r, r.Check("isl")
}
