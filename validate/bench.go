package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/moecast/moecast/serve"
)

// BenchResult is the common measured-result record: one measured serving
// point (or one request log) as any registered Format reads it. Every
// format maps its own keys and units onto these fields by their meaning,
// not their names: latencies are in milliseconds, TPOT is vLLM's (the
// first token excluded), lengths are tokens per request. A field the file
// does not hold is 0 (counts, lengths, layout) or NaN (figures); Warnings
// name what a partial record lacks that the comparison would use.
type BenchResult struct {
	File   string // the file it was read from
	Line   int    // 1-based line or row of the record in the file; 1 for a one-record file
	Family string // the format that read it (Format.Name): "vllm", "sglang", ...
	// Multi says the file holds many records (JSONL, CSV, an array), so
	// messages name File:Line.
	Multi bool
	// ID is the record's own name when the file gives one (a CSV row's id).
	ID string

	Backend     string
	Model       string
	NumPrompts  int
	Completed   int
	Failed      int
	Duration    float64 // seconds; NaN when absent
	Concurrency int     // --max-concurrency (the client's, all ranks); 0 when the run had none
	// RequestRate is the offered rate in requests/s; +Inf for `inf` (all
	// requests sent at t=0), the default of both tools.
	RequestRate float64
	Burstiness  float64 // 1 unless the file says otherwise

	// InputTokens and OutputTokens are the mean lengths per completed
	// request (total / completed), or the nominal lengths a range is
	// drawn around; RangeRatio is the random dataset's range ratio when
	// the file records it (SGLang) or the client that measured it is
	// known (aiconfigurator's and InferenceX's rows of InferenceX's
	// harness), else 0, and RangeStyle how that client reads it.
	InputTokens, OutputTokens float64
	RangeRatio                float64
	RangeStyle                serve.RangeStyle
	// ServerInputScale is how many tokens the server's tokeniser made of
	// each token the client counted in its prompts, where the two are
	// known to disagree (clientTokenizerMismatch); 0 where they agree.
	// InputTokens stays the client's figure.
	ServerInputScale float64
	// MaxNumBatchedTokens is the engine's token budget per step where the
	// reader knows how the deployment was configured without the file
	// recording it (aiconfigurator's gap-analysis vLLM rows:
	// aicGeneratorBudget); 0 where it is unknown (the engine's default).
	MaxNumBatchedTokens int

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

	// Layout is the deployment when the file records it (zero otherwise).
	Layout Layout
	// Requests is the per-request log when the file is one (request logs,
	// per-request exports); Metrics then hold its statistics.
	Requests []Request

	// Warnings name what a partial record lacks ("no request count: ..."),
	// and every assumption the reader made (units, counts). They do not
	// name the record: prefix Name() where records mix.
	Warnings []string
}

// Name names the record in messages: the file, and the line for a file of
// many records.
func (r BenchResult) Name() string {
	if r.Multi || r.Line > 1 {
		return fmt.Sprintf("%s:%d", r.File, r.Line)
	}
	return r.File
}

// Layout is a deployment as a result file records it. Zero fields are not
// in the file. Names (GPU, Precision) are the file's own, unmapped.
type Layout struct {
	GPU     string // the file's name for the GPU ("b200_sxm", "NVIDIA H200")
	GPUs    int    // GPUs of one replica
	TP, PP  int
	DP      int // data-parallel (attention-DP with DPAttention) ranks
	EP      int // expert-parallel ranks
	MoETP   int // tensor-parallel ranks of the experts
	Replica int // replicas (workers) behind the load
	// DPAttention: attention runs data-parallel over DP ranks while the
	// experts are split over them.
	DPAttention bool
	Mode        string // "agg", "disagg", or "" when unknown
	Precision   string // the checkpoint's quantization as the file names it
	// Extra keeps format-specific attributes for partitions and reports
	// (backend_version, gemm_quant_mode, ...).
	Extra map[string]string
}

// Request is one request of a request log. Times are in seconds from the
// log's first arrival; latencies in ms; NaN when the log lacks them.
type Request struct {
	Arrival                   float64 // s since the first request's arrival
	InputTokens, OutputTokens int
	// Queue is the time the engine held the request before scheduling it;
	// TTFT, TPOT (first token excluded) and E2E are the measured latencies.
	Queue, TTFT, TPOT, E2E float64
	// HashIDs are the prompt's blocks by content (a Mooncake trace's
	// hash_ids), for prefix caching; nil when the log has none.
	HashIDs []int64
	// After lists the earlier requests (indices into Requests) this one
	// waits for, and Wait the seconds from the last one's finish to its
	// send (a Mooncake agentic trace's wait_for, delay + tool_wait_ms).
	After []int
	Wait  float64
	// Line is the line of the request log the request was read from (0
	// where the format has no line per request), for messages.
	Line int
}

// warn adds a warning.
func (r *BenchResult) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// newResult is a record with every figure absent.
func newResult(file string, line int, family string) BenchResult {
	r := BenchResult{File: file, Line: line, Family: family, Metrics: map[string]Stats{},
		Duration: math.NaN(), RequestRate: math.Inf(1), Burstiness: 1,
		RequestThroughput: math.NaN(), OutputThroughput: math.NaN(), TotalTokenThroughput: math.NaN()}
	for _, m := range MetricNames {
		r.Metrics[m] = NoStats()
	}
	return r
}

// NoStats is a Stats with every figure absent.
func NoStats() Stats {
	return Stats{Mean: math.NaN(), Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}
}

// Check is the common acceptance of every format's record: the comparison
// needs the request lengths and one latency figure; what else it would use
// and the record lacks becomes a warning (a partial record, a row copied
// from a blog with TTFT, TPOT and its concurrency, is accepted). key names
// the format's key for the lengths in the error.
func (r *BenchResult) Check(lengthKey string) error {
	if r.Completed == 0 && r.NumPrompts == 0 && r.Failed > 0 {
		return &BenchError{File: r.File, Line: r.Line, Key: "completed", Msg: "0 requests completed: nothing to compare"}
	}
	if !(r.InputTokens >= 1) || !(r.OutputTokens >= 1) || math.IsInf(r.InputTokens, 0) || math.IsInf(r.OutputTokens, 0) {
		return &BenchError{File: r.File, Line: r.Line, Key: lengthKey,
			Msg: "input or output length unknown: the comparison needs the request lengths"}
	}
	any := false
	for _, m := range MetricNames {
		st := r.Metrics[m]
		if !math.IsNaN(st.Mean) || !math.IsNaN(st.Median) || !math.IsNaN(st.P90) || !math.IsNaN(st.P99) {
			any = true
		}
	}
	if !any {
		return &BenchError{File: r.File, Line: r.Line, Msg: "no latency figure (TTFT, TPOT, ITL or E2E): nothing to compare"}
	}
	if r.NumPrompts == 0 && r.Completed == 0 && len(r.Requests) == 0 {
		r.warn("no request count (num_prompts or completed): the scenario's request count is simulated")
	}
	if r.Concurrency == 0 && math.IsInf(r.RequestRate, 1) && r.NumPrompts == 0 && r.Completed == 0 && len(r.Requests) == 0 {
		r.warn("no load (max_concurrency or request_rate) and no request count: simulated as the scenario's load")
	}
	for _, m := range []string{"ttft", "tpot"} {
		if st := r.Metrics[m]; math.IsNaN(st.Mean) && math.IsNaN(st.Median) && math.IsNaN(st.P90) && math.IsNaN(st.P99) {
			r.warn("no %s figure in the record", strings.ToUpper(m))
		}
	}
	return nil
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
