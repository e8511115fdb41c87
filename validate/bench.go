package validate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// BenchResult is one measured serving point read from a `vllm bench serve`
// result file (one JSON object per file, written with --save-result) or from
// SGLang's `bench_serving` output (one JSON object per line, appended by
// --output-file). Field names follow vLLM's result keys; SGLang's
// differently named keys are mapped onto them (mean_e2e_latency_ms ->
// E2EL). Latencies are in milliseconds as the files write them.
type BenchResult struct {
	File   string // the file it was read from
	Line   int    // 1-based line of the object (SGLang JSONL), 1 for a vLLM file
	Family string // "vllm" or "sglang": which key family the object uses

	Backend     string
	Model       string
	NumPrompts  int
	Completed   int
	Failed      int
	Duration    float64 // seconds
	Concurrency int     // --max-concurrency; 0 when the run had none
	// RequestRate is the offered rate in requests/s; +Inf for `inf` (all
	// requests sent at t=0), the default of both tools.
	RequestRate float64
	Burstiness  float64 // 1 unless the file says otherwise

	// InputTokens and OutputTokens are the mean lengths per completed
	// request (total / completed); RangeRatio is the random dataset's range
	// ratio when the file records it (SGLang), else 0.
	InputTokens, OutputTokens float64
	RangeRatio                float64

	RequestThroughput    float64 // req/s
	OutputThroughput     float64 // tok/s
	TotalTokenThroughput float64 // tok/s

	// Metrics maps "ttft", "tpot", "itl" and "e2el" to their statistics.
	// A statistic the file does not hold is NaN.
	Metrics map[string]Stats

	// AcceptanceLength is the mean acceptance length with speculative
	// decoding (vLLM spec_decode_acceptance_length, SGLang accept_length);
	// 0 when the run had none.
	AcceptanceLength float64
}

// Stats holds the summary statistics of one latency metric, in ms. Absent
// values are NaN.
type Stats struct {
	Mean, Median, P90, P99 float64
}

// MetricNames lists the latency metrics in output order.
var MetricNames = []string{"ttft", "tpot", "itl", "e2el"}

// BenchError is a positioned error in a benchmark result file.
type BenchError struct {
	File string
	Line int
	Key  string // the key at fault, or "" for a file-level problem
	Msg  string
}

func (e *BenchError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// maxBenchFile bounds what ReadBench reads: a result file with per-request
// arrays of 100k requests is a few tens of MB.
const maxBenchFile = 1 << 30

// ReadBench reads every result object in r. name is used in errors. A file
// that holds one JSON object (vLLM) gives one result; a file of one object
// per line (SGLang JSONL) gives one per non-empty line. Unknown keys are
// ignored; a file that has neither family's required keys is an error.
func ReadBench(name string, r io.Reader) ([]BenchResult, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBenchFile+1))
	if err != nil {
		return nil, &BenchError{File: name, Msg: err.Error()}
	}
	if len(data) > maxBenchFile {
		return nil, &BenchError{File: name, Msg: "larger than 1 GiB: not a benchmark result"}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &BenchError{File: name, Msg: "empty file: not a benchmark result"}
	}
	if trimmed[0] != '{' {
		return nil, &BenchError{File: name, Line: 1, Msg: "not a JSON object: want a `vllm bench serve --save-result` file or SGLang bench_serving JSONL"}
	}
	// One object for the whole file (vLLM, pretty-printed or not) ...
	if obj, err := decodeObject(trimmed); err == nil {
		res, err := fromObject(name, 1, obj)
		if err != nil {
			return nil, err
		}
		return []BenchResult{res}, nil
	}
	// ... else one object per line (SGLang appends to a JSONL file).
	var out []BenchResult
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxBenchFile)
	line := 0
	for sc.Scan() {
		line++
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) == 0 {
			continue
		}
		obj, err := decodeObject(l)
		if err != nil {
			return nil, &BenchError{File: name, Line: line, Msg: "not valid JSON: " + jsonMsg(err)}
		}
		res, err := fromObject(name, line, obj)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return nil, &BenchError{File: name, Line: line + 1, Msg: err.Error()}
	}
	return out, nil
}

// jsonMsg turns encoding/json's messages into the user's words.
func jsonMsg(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (byte %d)", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("a %s where an object was expected", te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// decodeObject decodes one JSON object into raw values. Python's json
// module writes Infinity, -Infinity and NaN for non-finite floats (SGLang's
// request_rate = inf); they are accepted here as the strings "inf", "-inf"
// and "nan".
func decodeObject(b []byte) (map[string]json.RawMessage, error) {
	b = pythonFloats(b)
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	if obj == nil {
		return nil, errors.New("null where an object was expected")
	}
	return obj, nil
}

// pythonFloats rewrites the bare tokens Infinity, -Infinity and NaN outside
// strings as JSON strings. It returns b itself when there are none.
func pythonFloats(b []byte) []byte {
	if !bytes.Contains(b, []byte("Infinity")) && !bytes.Contains(b, []byte("NaN")) {
		return b
	}
	var out []byte
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			out = append(out, `"-inf"`...)
			i += len("-Infinity") - 1
			continue
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			out = append(out, `"inf"`...)
			i += len("Infinity") - 1
			continue
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			out = append(out, `"nan"`...)
			i += len("NaN") - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

// fields reads typed values out of a raw object, remembering the first
// error with its key.
type fields struct {
	file string
	line int
	obj  map[string]json.RawMessage
	err  error
}

func (f *fields) fail(key, format string, args ...any) {
	if f.err == nil {
		f.err = &BenchError{File: f.file, Line: f.line, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
}

func (f *fields) has(key string) bool {
	v, ok := f.obj[key]
	return ok && string(v) != "null"
}

// num reads a number (or "inf"/"nan" string) at key; NaN when absent or null.
func (f *fields) num(key string) float64 {
	v, ok := f.obj[key]
	if !ok || string(v) == "null" {
		return math.NaN()
	}
	var x float64
	if err := json.Unmarshal(v, &x); err == nil {
		return x
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "inf", "+inf", "infinity":
			return math.Inf(1)
		case "-inf", "-infinity":
			return math.Inf(-1)
		case "nan":
			return math.NaN()
		}
		if x, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return x
		}
		f.fail(key, "want a number, got the string %q", s)
		return math.NaN()
	}
	f.fail(key, "want a number, got %s", abbrev(v))
	return math.NaN()
}

// count reads a non-negative integer; 0 when absent.
func (f *fields) count(key string) int {
	x := f.num(key)
	if math.IsNaN(x) {
		return 0
	}
	if x < 0 || x != math.Trunc(x) || x > 1e12 {
		f.fail(key, "want a whole number >= 0, got %g", x)
		return 0
	}
	return int(x)
}

// nonNeg reads a finite non-negative number; NaN when absent.
func (f *fields) nonNeg(key string) float64 {
	x := f.num(key)
	if math.IsNaN(x) {
		return x
	}
	if math.IsInf(x, 0) || x < 0 {
		f.fail(key, "want a finite number >= 0, got %g", x)
		return math.NaN()
	}
	return x
}

func (f *fields) str(key string) string {
	v, ok := f.obj[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return ""
}

func abbrev(v json.RawMessage) string {
	s := string(v)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// fromObject maps one result object onto a BenchResult.
func fromObject(file string, line int, obj map[string]json.RawMessage) (BenchResult, error) {
	f := &fields{file: file, line: line, obj: obj}
	r := BenchResult{File: file, Line: line, Metrics: map[string]Stats{}}
	// Family: SGLang writes mean_e2e_latency_ms (and random_input_len);
	// vLLM writes mean_e2el_ms when e2el is asked for, and num_prompts /
	// total_input_tokens always.
	r.Family = "vllm"
	if f.has("mean_e2e_latency_ms") || f.has("random_input_len") || f.has("accept_length") {
		r.Family = "sglang"
	}
	var missing []string
	for _, k := range []string{"duration", "completed", "mean_ttft_ms"} {
		if !f.has(k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return r, &BenchError{File: file, Line: line, Key: missing[0],
			Msg: fmt.Sprintf("missing (also missing: %s); not a vllm bench serve or SGLang bench_serving result", strings.Join(missing, ", "))}
	}
	r.Backend = f.str("backend")
	r.Model = f.str("model_id")
	r.NumPrompts = f.count("num_prompts")
	r.Completed = f.count("completed")
	r.Failed = f.count("failed")
	r.Duration = f.nonNeg("duration")
	r.Concurrency = f.count("max_concurrency")
	r.RequestRate = math.Inf(1)
	if f.has("request_rate") {
		r.RequestRate = f.num("request_rate")
		if math.IsNaN(r.RequestRate) || r.RequestRate <= 0 {
			f.fail("request_rate", "want a rate > 0 or inf, got %g", r.RequestRate)
		}
	}
	r.Burstiness = 1
	if f.has("burstiness") {
		r.Burstiness = f.nonNeg("burstiness")
	}
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
	}
	for _, m := range MetricNames {
		keys := []string{m}
		if m == "e2el" {
			keys = append(keys, "e2e_latency") // SGLang
		}
		st := Stats{Mean: math.NaN(), Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}
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
	if r.Completed == 0 {
		return r, &BenchError{File: file, Line: line, Key: "completed", Msg: "0 requests completed: nothing to compare"}
	}
	if math.IsNaN(r.InputTokens) || r.InputTokens < 1 || math.IsNaN(r.OutputTokens) || r.OutputTokens < 1 {
		return r, &BenchError{File: file, Line: line, Key: "total_input_tokens",
			Msg: "input or output length unknown (want total_input_tokens and total_output_tokens, or random_input_len and random_output_len)"}
	}
	if math.IsNaN(r.Duration) || r.Duration <= 0 {
		return r, &BenchError{File: file, Line: line, Key: "duration", Msg: "want a duration > 0 s"}
	}
	return r, nil
}
