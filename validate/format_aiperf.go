package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// NVIDIA AIPerf's exports (ai-dynamo/aiperf, docs/tutorials/
// working-with-profile-exports.md and docs/metrics_reference.md; its
// predecessor genai-perf's profile_export_genai_perf.json has the same
// per-metric objects):
//
//   - profile_export_aiperf.json: one object; each metric an object
//     {"unit", "avg", "p50", "p90", "p99", "min", "max", "std", ...}
//     (time_to_first_token, inter_token_latency, inter_chunk_latency,
//     request_latency, input_sequence_length, output_sequence_length,
//     request_throughput, ...), the run's summary the same way
//     (benchmark_duration in "sec", request_count, total_isl, total_osl),
//     and input_config, the user's configuration, with
//     loadgen.concurrency / request_rate / request_count and
//     endpoint.model_names;
//   - profile_export.jsonl: one request a line, {"metadata":
//     {request_start_ns, request_end_ns, ...}, "metrics": {name: {"value",
//     "unit"}}, "error"}.
//
// The metrics by meaning: time_to_first_token is TTFT; inter_token_latency
// is (request_latency - TTFT) / (output tokens - 1), vLLM's TPOT;
// inter_chunk_latency, the gaps between streamed chunks, is ITL;
// request_latency is E2E. Every figure is converted from the unit the file
// states; a unit moecast does not know is an error, and a figure without a
// unit is taken in the unit AIPerf documents for it, with a warning.
func init() {
	RegisterFormat(Format{
		Name:  "aiperf",
		Looks: "a JSON object whose time_to_first_token or inter_token_latency is {unit, avg, p50, ...}: AIPerf profile_export_aiperf.json (or genai-perf's)",
		Order: 35,
		Detect: func(s *Sniff) bool {
			if s.IsArray() {
				return false
			}
			for _, k := range []string{"time_to_first_token", "inter_token_latency", "request_latency"} {
				if v := s.Object()[k]; len(v) > 0 && v[0] == '{' && bytes.Contains(v, []byte(`"avg"`)) {
					return true
				}
			}
			return false
		},
		Read: readAIPerf,
	})
	RegisterFormat(Format{
		Name:  "aiperf-requests",
		Looks: "JSON objects, one a line, with metadata (request_start_ns) and metrics: AIPerf profile_export.jsonl",
		Order: 22,
		Detect: func(s *Sniff) bool {
			return !s.IsArray() && s.Has("metadata", "metrics") && bytes.Contains(s.Object()["metadata"], []byte("request_start_ns"))
		},
		Read: func(name string, data []byte) ([]BenchResult, error) {
			r, err := readAIPerfRequests(name, data)
			if err != nil {
				return nil, err
			}
			return []BenchResult{r}, r.Check("input_sequence_length")
		},
	})
}

// aiperfMetric maps AIPerf's metric tags onto the record's metrics.
var aiperfMetric = map[string]string{
	"time_to_first_token": "ttft",
	"inter_token_latency": "tpot",
	"inter_chunk_latency": "itl",
	"request_latency":     "e2el",
}

// msPer is the number of milliseconds in one of each time unit.
var msPer = map[string]float64{"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1, "s": 1000, "sec": 1000, "secs": 1000, "seconds": 1000}

// aiperfStat is one {unit, avg, p50, ...} object.
type aiperfStat struct {
	Unit *string  `json:"unit"`
	Avg  *float64 `json:"avg"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P99  *float64 `json:"p99"`
}

// aiperfInput is the part of input_config that gives the load.
type aiperfInput struct {
	Endpoint struct {
		ModelNames []string `json:"model_names"`
	} `json:"endpoint"`
	Loadgen struct {
		Concurrency  *float64 `json:"concurrency"`
		RequestRate  *float64 `json:"request_rate"`
		RequestCount *float64 `json:"request_count"`
	} `json:"loadgen"`
}

func readAIPerf(name string, data []byte) ([]BenchResult, error) {
	obj, err := decodeObject(bytes.TrimSpace(data))
	if err != nil {
		return nil, &BenchError{File: name, Line: 1, Msg: "not a JSON object: " + jsonMsg(err)}
	}
	r := newResult(name, 1, "aiperf")
	// stat decodes the metric key, nil when absent.
	stat := func(key string) (*aiperfStat, error) {
		raw, ok := obj[key]
		if !ok || string(raw) == "null" {
			return nil, nil
		}
		var st aiperfStat
		if err := json.Unmarshal(pythonFloats(raw), &st); err != nil {
			return nil, &BenchError{File: name, Line: 1, Key: key, Msg: "want {\"unit\", \"avg\", ...}: " + jsonMsg(err)}
		}
		return &st, nil
	}
	// value is the metric's avg in the unit want ("ms" for times: scaled
	// from the file's unit; another unit must match), NaN when absent.
	value := func(key, want string) (float64, error) {
		st, err := stat(key)
		if err != nil || st == nil || st.Avg == nil {
			return math.NaN(), err
		}
		k, err := r.aiperfScale(key, st.Unit, want)
		return *st.Avg * k, err
	}
	for key, m := range aiperfMetric {
		st, err := stat(key)
		if err != nil {
			return nil, err
		}
		if st == nil {
			continue
		}
		k, err := r.aiperfScale(key, st.Unit, "ms")
		if err != nil {
			return nil, err
		}
		s := NoStats()
		for _, f := range []struct {
			src *float64
			dst *float64
		}{{st.Avg, &s.Mean}, {st.P50, &s.Median}, {st.P90, &s.P90}, {st.P99, &s.P99}} {
			if f.src == nil {
				continue
			}
			if v := *f.src * k; v >= 0 && !math.IsInf(v, 0) {
				*f.dst = v
			} else {
				return nil, &BenchError{File: name, Line: 1, Key: key, Msg: fmt.Sprintf("want a latency >= 0, got %g", *f.src)}
			}
		}
		r.Metrics[m] = s
	}
	var nums = []struct {
		key, unit string
		dst       *float64
	}{
		{"input_sequence_length", "tokens", &r.InputTokens},
		{"output_sequence_length", "tokens", &r.OutputTokens},
		{"request_throughput", "requests/sec", &r.RequestThroughput},
		{"output_token_throughput", "tokens/sec", &r.OutputThroughput},
	}
	for _, n := range nums {
		v, err := value(n.key, n.unit)
		if err != nil {
			return nil, err
		}
		if !math.IsNaN(v) && (v < 0 || math.IsInf(v, 0)) {
			return nil, &BenchError{File: name, Line: 1, Key: n.key, Msg: fmt.Sprintf("want a finite number >= 0, got %g", v)}
		}
		*n.dst = v
	}
	dur, err := value("benchmark_duration", "ms")
	if err != nil {
		return nil, err
	}
	if !math.IsNaN(dur) {
		if !(dur > 0) || math.IsInf(dur, 0) {
			return nil, &BenchError{File: name, Line: 1, Key: "benchmark_duration", Msg: fmt.Sprintf("want a duration > 0, got %g ms", dur)}
		}
		r.Duration = dur / 1000
	}
	for _, c := range []struct {
		key string
		dst *int
	}{{"request_count", &r.Completed}, {"error_request_count", &r.Failed}} {
		v, err := value(c.key, "requests")
		if err != nil {
			return nil, err
		}
		if !math.IsNaN(v) {
			if v < 0 || v != math.Trunc(v) || v > 1e12 {
				return nil, &BenchError{File: name, Line: 1, Key: c.key, Msg: fmt.Sprintf("want a whole number >= 0, got %g", v)}
			}
			*c.dst = int(v)
		}
	}
	if raw, ok := obj["input_config"]; ok && string(raw) != "null" {
		var in aiperfInput
		if err := json.Unmarshal(pythonFloats(raw), &in); err != nil {
			r.warn("input_config not read (%s): the load is unknown", jsonMsg(err))
		} else {
			if len(in.Endpoint.ModelNames) > 0 {
				r.Model = in.Endpoint.ModelNames[0]
			}
			lg := in.Loadgen
			if c := lg.Concurrency; c != nil {
				if *c < 1 || *c != math.Trunc(*c) || *c > 1e9 {
					return nil, &BenchError{File: name, Line: 1, Key: "input_config.loadgen.concurrency", Msg: fmt.Sprintf("want a whole number >= 1, got %g", *c)}
				}
				r.Concurrency = int(*c)
			}
			if q := lg.RequestRate; q != nil {
				if !(*q > 0) {
					return nil, &BenchError{File: name, Line: 1, Key: "input_config.loadgen.request_rate", Msg: fmt.Sprintf("want a rate > 0, got %g", *q)}
				}
				r.RequestRate = *q
			}
			if n := lg.RequestCount; n != nil && *n >= 1 && *n <= 1e9 && *n == math.Trunc(*n) {
				r.NumPrompts = int(*n)
			}
		}
	} else {
		r.warn("no input_config: the client's concurrency and request rate are unknown")
	}
	if _, ok := obj["input_config"]; ok && r.Concurrency == 0 && math.IsInf(r.RequestRate, 1) {
		r.warn("input_config gives neither loadgen.concurrency nor loadgen.request_rate: the load is unknown")
	}
	if r.NumPrompts > 0 && r.Completed > 0 && r.NumPrompts > 10*r.Completed {
		// AIPerf's documented example runs a duration-bounded benchmark
		// with request_count = 1e9: the configured count is no count.
		r.NumPrompts = 0
	}
	if err := r.Check("input_sequence_length"); err != nil {
		return nil, err
	}
	return []BenchResult{r}, nil
}

// aiperfScale is the factor from the metric's stated unit to want: for a
// time, want is "ms" and the unit one of msPer; otherwise the unit must be
// want. A missing unit is taken as want with a warning.
func (r *BenchResult) aiperfScale(key string, unit *string, want string) (float64, error) {
	if unit == nil || *unit == "" {
		r.warn("%s has no unit: taken in %s, the unit AIPerf documents for it", key, want)
		return 1, nil
	}
	u := strings.ToLower(strings.TrimSpace(*unit))
	if want == "ms" {
		if k, ok := msPer[u]; ok {
			return k, nil
		}
	} else if u == want || u+"s" == want || u == want+"s" {
		return 1, nil
	}
	return 0, &BenchError{File: r.File, Line: r.Line, Key: key, Msg: fmt.Sprintf("unit %q: want %s", *unit, unitWords(want))}
}

func unitWords(want string) string {
	if want == "ms" {
		return "a time unit (ns, us, ms, s, sec)"
	}
	return fmt.Sprintf("%q", want)
}

// aiperfRecord is one line of profile_export.jsonl.
type aiperfRecord struct {
	Metadata struct {
		RequestStartNs *float64 `json:"request_start_ns"`
		WasCancelled   bool     `json:"was_cancelled"`
		BenchmarkPhase string   `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  *string         `json:"unit"`
	} `json:"metrics"`
	Error json.RawMessage `json:"error"`
}

// readAIPerfRequests reads AIPerf's per-request export into a request log.
func readAIPerfRequests(name string, data []byte) (BenchResult, error) {
	r := newResult(name, 1, "aiperf-requests")
	type row struct {
		start float64
		q     Request
	}
	var rows []row
	failed, warmup := 0, 0
	err := jsonLines(name, data, func(line int, obj map[string]json.RawMessage) error {
		b, _ := json.Marshal(obj)
		var rec aiperfRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return &BenchError{File: name, Line: line, Msg: "not an AIPerf record: " + jsonMsg(err)}
		}
		if rec.Metadata.BenchmarkPhase != "" && rec.Metadata.BenchmarkPhase != "profiling" {
			warmup++
			return nil
		}
		if (len(rec.Error) > 0 && string(rec.Error) != "null") || rec.Metadata.WasCancelled {
			failed++
			return nil
		}
		if rec.Metadata.RequestStartNs == nil {
			return &BenchError{File: name, Line: line, Key: "metadata.request_start_ns", Msg: "missing: the request's start is unknown"}
		}
		q := Request{Queue: math.NaN(), TTFT: math.NaN(), TPOT: math.NaN(), E2E: math.NaN(), Line: line}
		num := func(key, want string) (float64, error) {
			m, ok := rec.Metrics[key]
			if !ok || len(m.Value) == 0 || string(m.Value) == "null" {
				return math.NaN(), nil
			}
			var v float64
			if err := json.Unmarshal(m.Value, &v); err != nil {
				return 0, &BenchError{File: name, Line: line, Key: "metrics." + key, Msg: "want a number, got " + abbrev(m.Value)}
			}
			k, err := aiperfLineScale(name, line, key, m.Unit, want)
			if err != nil {
				return 0, err
			}
			if v < 0 || math.IsInf(v, 0) {
				return 0, &BenchError{File: name, Line: line, Key: "metrics." + key, Msg: fmt.Sprintf("want a number >= 0, got %g", v)}
			}
			return v * k, nil
		}
		for key, dst := range map[string]*float64{"time_to_first_token": &q.TTFT, "inter_token_latency": &q.TPOT, "request_latency": &q.E2E} {
			v, err := num(key, "ms")
			if err != nil {
				return err
			}
			*dst = v
		}
		for key, dst := range map[string]*int{"input_sequence_length": &q.InputTokens, "output_sequence_length": &q.OutputTokens} {
			v, err := num(key, "tokens")
			if err != nil {
				return err
			}
			if !(v >= 1) || v > 1e9 || v != math.Trunc(v) {
				return &BenchError{File: name, Line: line, Key: "metrics." + key, Msg: fmt.Sprintf("want a whole number of tokens >= 1, got %g", v)}
			}
			*dst = int(v)
		}
		if len(rows) >= maxLogRequests {
			return &BenchError{File: name, Line: line, Msg: fmt.Sprintf("more than %d requests", maxLogRequests)}
		}
		rows = append(rows, row{start: *rec.Metadata.RequestStartNs, q: q})
		return nil
	})
	if err != nil {
		return r, err
	}
	if len(rows) == 0 {
		return r, &BenchError{File: name, Msg: fmt.Sprintf("no successful request in the export (%d failed or cancelled, %d outside the profiling phase)", failed, warmup)}
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].start < rows[b].start })
	t0 := rows[0].start
	for _, x := range rows {
		x.q.Arrival = (x.start - t0) / 1e9
		r.Requests = append(r.Requests, x.q)
	}
	r.finishLog()
	r.Failed = failed
	r.NumPrompts += failed
	if failed > 0 {
		r.warn("%d failed or cancelled requests left out of the statistics", failed)
	}
	if warmup > 0 {
		r.warn("%d warm-up requests left out", warmup)
	}
	r.warn("arrivals are the client's send times (request_start_ns): under a concurrency limit they follow completions, so a replay reproduces that run's pacing, not its limit")
	return r, nil
}

// aiperfLineScale is aiperfScale for one line of the per-request export
// (a missing unit is an error there: a line has no other place to warn).
func aiperfLineScale(name string, line int, key string, unit *string, want string) (float64, error) {
	r := BenchResult{File: name, Line: line}
	if unit == nil || *unit == "" {
		return 0, &BenchError{File: name, Line: line, Key: "metrics." + key, Msg: "no unit (AIPerf writes one with every value)"}
	}
	k, err := r.aiperfScale(key, unit, want)
	if be, ok := err.(*BenchError); ok {
		be.Key = "metrics." + key
	}
	return k, err
}
