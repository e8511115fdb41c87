package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
	"github.com/moecast/moecast/trace"
)

// Request logs: one JSON object per request, with its arrival and lengths
// and, when the engine measured them, its timestamps. The keys are
// LLMServingSim's `requests.jsonl` (casys-kaist/LLMServingSim
// `bench/examples/*/requests.jsonl`, written by its vLLM runner):
// arrival_time (Unix s, the client's clock), input_toks, output_toks, and
// queued_ts, scheduled_ts, first_token_ts, last_token_ts (the engine's
// monotonic clock, s). Measured per request, on the engine's clock:
//
//	TTFT = first_token_ts - queued_ts (the engine's queue time included)
//	E2E  = last_token_ts - queued_ts
//	TPOT = (last_token_ts - first_token_ts) / (output_toks - 1)
//	queue = scheduled_ts - queued_ts
//
// Arrivals are replayed from arrival_time (else queued_ts), relative to
// the first.
func init() {
	RegisterFormat(Format{
		Name:  "requestlog",
		Looks: "JSON objects, one a line, with arrival_time, input_toks and output_toks: a request log (LLMServingSim requests.jsonl)",
		Order: 20,
		Detect: func(s *Sniff) bool {
			return !s.IsArray() && s.HasAny("arrival_time", "queued_ts") && s.Has("input_toks", "output_toks")
		},
		Read: func(name string, data []byte) ([]BenchResult, error) {
			r, err := readRequestLog(name, data)
			if err != nil {
				return nil, err
			}
			return []BenchResult{r}, r.Check("input_toks")
		},
	})
	// Mooncake traces (kvcache-ai/Mooncake `FAST25-release/traces/*.jsonl`):
	// timestamp (ms from the trace's start), input_length, output_length,
	// hash_ids (the prompt's prefix blocks). Arrivals and lengths only: a
	// workload to replay, with nothing measured to compare.
	RegisterFormat(Format{
		Name:  "mooncake",
		Looks: "JSON objects, one a line, with timestamp, input_length and output_length: a Mooncake trace",
		Order: 21,
		Detect: func(s *Sniff) bool {
			return !s.IsArray() && s.Has("timestamp", "input_length", "output_length")
		},
		Read: func(name string, data []byte) ([]BenchResult, error) {
			r, err := readMooncake(name, data)
			if err != nil {
				return nil, err
			}
			return []BenchResult{r}, r.Check("input_length")
		},
	})
}

// MaxReplayTokens bounds a replayed request's prompt and output: the
// scenarios' limit on a request's lengths (scenarios.CheckTokens).
const MaxReplayTokens = sim.MaxContext / 4

// maxLogRequests bounds a replayed log (serve's request limit).
const maxLogRequests = 1 << 24

// readRequestLog reads an LLMServingSim-style log into one record whose
// Requests are the log's, sorted by arrival, and whose Metrics are their
// statistics.
func readRequestLog(name string, data []byte) (BenchResult, error) {
	r := newResult(name, 1, "requestlog")
	type raw struct {
		line                    int
		arrival, queued         float64
		sched, first, last      float64
		in, out                 int
		hasArrival, hasEngineTS bool
	}
	var rows []raw
	err := jsonLines(name, data, func(line int, obj map[string]json.RawMessage) error {
		f := &fields{file: name, line: line, obj: obj}
		x := raw{line: line, in: f.count("input_toks"), out: f.count("output_toks"),
			arrival: f.num("arrival_time"), queued: f.num("queued_ts"), sched: f.num("scheduled_ts"),
			first: f.num("first_token_ts"), last: f.num("last_token_ts")}
		if f.err != nil {
			return f.err
		}
		x.hasArrival = finiteNum(x.arrival)
		x.hasEngineTS = finiteNum(x.queued) && finiteNum(x.first) && finiteNum(x.last)
		if !x.hasArrival && !finiteNum(x.queued) {
			return &BenchError{File: name, Line: line, Key: "arrival_time", Msg: "missing (and no queued_ts): the request's arrival is unknown"}
		}
		if x.in < 1 || x.out < 1 {
			return &BenchError{File: name, Line: line, Key: "input_toks", Msg: fmt.Sprintf("want input_toks and output_toks >= 1, got %d and %d", x.in, x.out)}
		}
		if x.hasEngineTS && !(x.first >= x.queued && x.last >= x.first) {
			return &BenchError{File: name, Line: line, Key: "first_token_ts", Msg: "timestamps out of order (want queued_ts <= first_token_ts <= last_token_ts)"}
		}
		if len(rows) >= maxLogRequests {
			return &BenchError{File: name, Line: line, Msg: fmt.Sprintf("more than %d requests", maxLogRequests)}
		}
		rows = append(rows, x)
		return nil
	})
	if err != nil {
		return r, err
	}
	if len(rows) == 0 {
		return r, &BenchError{File: name, Msg: "no request in the log"}
	}
	useArrival := true
	for _, x := range rows {
		useArrival = useArrival && x.hasArrival
	}
	at := func(x raw) float64 {
		if useArrival {
			return x.arrival
		}
		return x.queued
	}
	if !useArrival {
		r.warn("not every request has arrival_time: arrivals taken from the engine's queued_ts")
	}
	sort.SliceStable(rows, func(a, b int) bool { return at(rows[a]) < at(rows[b]) })
	t0 := at(rows[0])
	measured := 0
	for _, x := range rows {
		q := Request{Arrival: at(x) - t0, InputTokens: x.in, OutputTokens: x.out,
			Queue: math.NaN(), TTFT: math.NaN(), TPOT: math.NaN(), E2E: math.NaN(), Line: x.line}
		if x.hasEngineTS {
			measured++
			q.TTFT = (x.first - x.queued) * 1000
			q.E2E = (x.last - x.queued) * 1000
			if x.out > 1 {
				q.TPOT = (x.last - x.first) / float64(x.out-1) * 1000
			}
			if finiteNum(x.sched) && x.sched >= x.queued {
				q.Queue = (x.sched - x.queued) * 1000
			}
		}
		r.Requests = append(r.Requests, q)
	}
	if measured > 0 && measured < len(rows) {
		r.warn("%d of %d requests have the engine's timestamps: the statistics are of those", measured, len(rows))
	}
	r.finishLog()
	return r, nil
}

// readMooncake reads a Mooncake trace: arrivals and lengths only.
func readMooncake(name string, data []byte) (BenchResult, error) {
	r := newResult(name, 1, "mooncake")
	hashes := false
	// Agentic variants: request_id, wait_for (the request_ids a turn waits
	// for), delay and tool_wait_ms (ms from the last one's finish to the
	// turn's send); session_id groups turns and is not needed to replay.
	var ids []string
	var waits [][]string
	var lines []int
	idOf := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	err := jsonLines(name, data, func(line int, obj map[string]json.RawMessage) error {
		f := &fields{file: name, line: line, obj: obj}
		ts := f.nonNeg("timestamp")
		var wf []json.RawMessage
		if f.has("wait_for") {
			if err := json.Unmarshal(obj["wait_for"], &wf); err != nil {
				return &BenchError{File: name, Line: line, Key: "wait_for", Msg: "want an array of request_id values"}
			}
		}
		wait := 0.0
		for _, k := range []string{"delay", "tool_wait_ms"} {
			if v := f.nonNeg(k); !math.IsNaN(v) {
				wait += v / 1000
			}
		}
		id := ""
		if f.has("request_id") {
			id = idOf(obj["request_id"])
		}
		w := make([]string, len(wf))
		for i, x := range wf {
			w[i] = idOf(x)
		}
		q := Request{Arrival: ts / 1000, InputTokens: f.count("input_length"), OutputTokens: f.count("output_length"),
			Queue: math.NaN(), TTFT: math.NaN(), TPOT: math.NaN(), E2E: math.NaN()}
		if f.err != nil {
			return f.err
		}
		if math.IsNaN(ts) {
			return &BenchError{File: name, Line: line, Key: "timestamp", Msg: "missing: the request's arrival (ms) is unknown"}
		}
		if q.InputTokens < 1 || q.OutputTokens < 1 {
			return &BenchError{File: name, Line: line, Key: "input_length", Msg: fmt.Sprintf("want input_length and output_length >= 1, got %d and %d", q.InputTokens, q.OutputTokens)}
		}
		if len(r.Requests) >= maxLogRequests {
			return &BenchError{File: name, Line: line, Msg: fmt.Sprintf("more than %d requests", maxLogRequests)}
		}
		if f.has("hash_ids") {
			if err := json.Unmarshal(obj["hash_ids"], &q.HashIDs); err != nil {
				return &BenchError{File: name, Line: line, Key: "hash_ids", Msg: "want an array of integers"}
			}
			if q.HashIDs == nil {
				q.HashIDs = []int64{}
			}
			hashes = true
		}
		q.Wait, q.Line = wait, line
		r.Requests = append(r.Requests, q)
		ids, waits, lines = append(ids, id), append(waits, w), append(lines, line)
		return nil
	})
	if err != nil {
		return r, err
	}
	if len(r.Requests) == 0 {
		return r, &BenchError{File: name, Msg: "no request in the trace"}
	}
	perm := make([]int, len(r.Requests))
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(a, b int) bool { return r.Requests[perm[a]].Arrival < r.Requests[perm[b]].Arrival })
	sorted := make([]Request, len(perm))
	index := make(map[string]int, len(perm))
	for i, p := range perm {
		sorted[i] = r.Requests[p]
		if ids[p] != "" {
			if _, dup := index[ids[p]]; dup {
				return r, &BenchError{File: name, Line: lines[p], Key: "request_id", Msg: fmt.Sprintf("%q appears twice", ids[p])}
			}
			index[ids[p]] = i
		}
	}
	for i, p := range perm {
		for _, w := range waits[p] {
			j, ok := index[w]
			switch {
			case !ok:
				return r, &BenchError{File: name, Line: lines[p], Key: "wait_for", Msg: fmt.Sprintf("no request has request_id %q", w)}
			case j >= i:
				return r, &BenchError{File: name, Line: lines[p], Key: "wait_for", Msg: fmt.Sprintf("request_id %q does not arrive before this turn", w)}
			}
			sorted[i].After = append(sorted[i].After, j)
		}
	}
	r.Requests = sorted
	t0 := r.Requests[0].Arrival
	for i := range r.Requests {
		r.Requests[i].Arrival -= t0
	}
	if !hashes {
		r.warn("no hash_ids: prompts share nothing, so prefix caching finds nothing")
	}
	r.finishLog()
	return r, nil
}

// finishLog sets the record's load and statistics from its Requests.
func (r *BenchResult) finishLog() {
	n := len(r.Requests)
	r.NumPrompts, r.Completed = n, n
	var in, out float64
	for _, q := range r.Requests {
		in += float64(q.InputTokens)
		out += float64(q.OutputTokens)
	}
	r.InputTokens, r.OutputTokens = in/float64(n), out/float64(n)
	if last := r.Requests[n-1].Arrival; last > 0 {
		r.RequestRate = float64(n-1) / last
	}
	for m, get := range map[string]func(Request) float64{
		"ttft": func(q Request) float64 { return q.TTFT },
		"tpot": func(q Request) float64 { return q.TPOT },
		"e2el": func(q Request) float64 { return q.E2E },
	} {
		var xs []float64
		for _, q := range r.Requests {
			if v := get(q); !math.IsNaN(v) {
				xs = append(xs, v)
			}
		}
		r.Metrics[m] = statsOf(xs)
	}
}

// statsOf is the mean, median, p90 and p99 of xs (numpy's linear
// percentiles, as vllm bench serve computes them); NaN for none.
func statsOf(xs []float64) Stats {
	if len(xs) == 0 {
		return NoStats()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	return Stats{Mean: sum / float64(len(s)), Median: trace.Quantile(s, 0.5), P90: trace.Quantile(s, 0.9), P99: trace.Quantile(s, 0.99)}
}

func finiteNum(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// ReadWorkload reads a request log or trace (any format whose record
// carries per-request arrivals and lengths: request logs, Mooncake traces)
// as a workload to replay. The warnings say what was ignored.
func ReadWorkload(name string, data []byte) (_ []serve.TraceRequest, _ []string, err error) {
	defer asRead(&err)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &BenchError{File: name, Msg: "empty: no request to replay"}
	}
	s := newSniff(name, data)
	var r BenchResult
	format := ""
	switch f := detect(s); {
	case f == nil:
		return nil, nil, unknownShape(name, false)
	case f.Name == "requestlog":
		r, err = readRequestLog(name, s.Data)
	case f.Name == "mooncake":
		r, err = readMooncake(name, s.Data)
	default:
		format = f.Name
		var rs []BenchResult
		rs, err = f.Read(name, s.Data)
		if err == nil && (len(rs) != 1 || len(rs[0].Requests) == 0) {
			err = &BenchError{File: name, Msg: fmt.Sprintf("a %s result holds no per-request arrivals and lengths to replay: want a request log", f.Name)}
		}
		if err == nil {
			r = rs[0]
		}
	}
	if err != nil {
		return nil, nil, err
	}
	// The keys of the format's lengths and send delay, for messages.
	inKey, outKey, arrKey, waitKey := "input_length", "output_length", "timestamp", "delay"
	switch {
	case r.Family == "requestlog":
		inKey, outKey, arrKey = "input_toks", "output_toks", "arrival_time"
	case format == "aiperf-requests":
		inKey, outKey, arrKey = "metrics.input_sequence_length", "metrics.output_sequence_length", "metadata.request_start_ns"
	case format != "":
		// Another format's per-request records: name what is wrong, not
		// a key the file does not have.
		inKey, outKey, arrKey = "", "", ""
	}
	out := make([]serve.TraceRequest, len(r.Requests))
	for i, q := range r.Requests {
		if !(q.Arrival <= serve.MaxArrival) {
			return nil, nil, &BenchError{File: name, Line: q.Line, Key: arrKey, Msg: fmt.Sprintf("request %d arrives %g s after the first: more than the %g s a replay can time (float64 seconds lose the step's resolution)", i+1, q.Arrival, float64(serve.MaxArrival))}
		}
		if !(q.Wait <= serve.MaxArrival) {
			return nil, nil, &BenchError{File: name, Line: q.Line, Key: waitKey, Msg: fmt.Sprintf("the turn waits %g s (delay + tool_wait_ms) after the one it waits for: more than the %g s a replay can time", q.Wait, float64(serve.MaxArrival))}
		}
		for _, l := range []struct {
			key string
			n   int
		}{{inKey, q.InputTokens}, {outKey, q.OutputTokens}} {
			if l.n > MaxReplayTokens {
				return nil, nil, &BenchError{File: name, Line: q.Line, Key: l.key, Msg: fmt.Sprintf("%d tokens exceeds the limit of %d tokens a simulated request may have", l.n, MaxReplayTokens)}
			}
		}
		out[i] = serve.TraceRequest{Arrival: q.Arrival, InputTokens: q.InputTokens, OutputTokens: q.OutputTokens, HashIDs: q.HashIDs,
			After: q.After, Wait: q.Wait}
	}
	return out, r.Warnings, nil
}
