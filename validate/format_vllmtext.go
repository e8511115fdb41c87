package validate

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The result block `vllm bench serve` prints (vllm/benchmarks/serve.py
// benchmark(), vllm-project/vllm @ def9ce8):
//
//	============ Serving Benchmark Result ============
//	Successful requests:                     1000
//	Failed requests:                         0
//	Maximum request concurrency:             64          (with --max-concurrency)
//	Request rate configured (RPS):           8.00        (when not inf)
//	Benchmark duration (s):                  120.50
//	Total input tokens:                      1024000
//	Total generated tokens:                  256000
//	...throughputs...
//	---------------Time to First Token----------------
//	Mean TTFT (ms):                          250.12
//	Median TTFT (ms):                        240.00
//	P99 TTFT (ms):                           480.33      (one line per --metric-percentiles)
//	-----Time per Output Token (excl. 1st token)------
//	Mean TPOT (ms): ...                                  (then ITL, E2EL)
//	==================================================
//
// SGLang's bench_serving prints a block under the same title with a few
// labels of its own ("Backend:", "Traffic request rate:", "Max request
// concurrency:", "Mean E2E Latency (ms):"); they are read too. A log may
// hold many blocks (a sweep run in one shell): each is a record, named by
// the line of its title. Lines may carry a prefix (a log's timestamp, a
// comment's "# "): a label is found after it. Every figure's unit is the
// one the label names; a label without a known unit is not read.
func init() {
	RegisterFormat(Format{
		Name:  "vllm-text",
		Looks: "text with a \"Serving Benchmark Result\" block: the result vllm bench serve (or SGLang bench_serving) prints",
		Order: 30,
		Detect: func(s *Sniff) bool {
			return bytes.Contains(s.Data, []byte("Serving Benchmark Result")) && s.Object() == nil && !s.IsArray()
		},
		Read: readBenchText,
	})
}

// textMetric maps a printed metric name to the record's metric.
var textMetric = map[string]string{"TTFT": "ttft", "TPOT": "tpot", "ITL": "itl", "E2EL": "e2el", "E2E Latency": "e2el"}

// readBenchText reads every result block of a printed benchmark log.
func readBenchText(name string, data []byte) ([]BenchResult, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var (
		out  []BenchResult
		cur  *BenchResult
		vals map[string]float64 // label -> value of the current block
		line int
	)
	finish := func() error {
		if cur == nil {
			return nil
		}
		r, err := textRecord(*cur, vals)
		cur = nil
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	}
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.Contains(l, "Serving Benchmark Result"):
			if err := finish(); err != nil {
				return nil, err
			}
			r := newResult(name, line, "vllm-text")
			cur, vals = &r, map[string]float64{}
			continue
		case cur == nil:
			continue
		case strings.Contains(l, "=========="): // the closing rule
			if err := finish(); err != nil {
				return nil, err
			}
			continue
		}
		label, value, ok := textLine(l)
		if !ok {
			continue
		}
		if label == "Backend" {
			cur.Backend = value
			continue
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			if strings.EqualFold(value, "inf") {
				f = math.Inf(1)
			} else {
				return nil, &BenchError{File: name, Line: line, Key: label, Msg: fmt.Sprintf("%q is not a number", value)}
			}
		}
		vals[label] = f
	}
	if err := sc.Err(); err != nil {
		return nil, &BenchError{File: name, Line: line + 1, Msg: err.Error()}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &BenchError{File: name, Msg: "no \"Serving Benchmark Result\" block"}
	}
	if len(out) > 1 {
		for i := range out {
			out[i].Multi = true
		}
	}
	return out, nil
}

// textLine splits "Label (unit):   value" (after any prefix such as a
// log's timestamp) into the label with its unit and the first word of the
// value.
func textLine(l string) (label, value string, ok bool) {
	i := strings.LastIndex(l, ":")
	if i < 0 {
		return "", "", false
	}
	label, rest := l[:i], strings.TrimSpace(l[i+1:])
	if f := strings.Fields(rest); len(f) > 0 {
		value = f[0]
	}
	if value == "" {
		return "", "", false
	}
	// Drop a prefix before the label: the label is the text after the
	// last run of two or more spaces, a "# ", or a "] ".
	for _, sep := range []string{"] ", "# ", "  "} {
		if j := strings.LastIndex(label, sep); j >= 0 {
			label = label[j+len(sep):]
		}
	}
	return strings.TrimSpace(label), value, true
}

// textRecord maps one block's labels onto the record.
func textRecord(r BenchResult, vals map[string]float64) (BenchResult, error) {
	get := func(labels ...string) (float64, bool) {
		for _, l := range labels {
			if v, ok := vals[l]; ok {
				return v, true
			}
		}
		return math.NaN(), false
	}
	count := func(key string, v float64) (int, error) {
		if v < 0 || v != math.Trunc(v) || v > 1e12 {
			return 0, &BenchError{File: r.File, Line: r.Line, Key: key, Msg: fmt.Sprintf("want a whole number >= 0, got %g", v)}
		}
		return int(v), nil
	}
	var err error
	if v, ok := get("Successful requests"); ok {
		if r.Completed, err = count("Successful requests", v); err != nil {
			return r, err
		}
	}
	if v, ok := get("Failed requests"); ok {
		if r.Failed, err = count("Failed requests", v); err != nil {
			return r, err
		}
	}
	if v, ok := get("Maximum request concurrency", "Max request concurrency", "Max reqeuest concurrency"); ok && !math.IsInf(v, 1) {
		if r.Concurrency, err = count("Maximum request concurrency", v); err != nil {
			return r, err
		}
	}
	if v, ok := get("Request rate configured (RPS)", "Traffic request rate"); ok {
		if !(v > 0) {
			return r, &BenchError{File: r.File, Line: r.Line, Key: "Request rate configured (RPS)", Msg: fmt.Sprintf("want a rate > 0 or inf, got %g", v)}
		}
		r.RequestRate = v
	}
	if v, ok := get("Benchmark duration (s)"); ok {
		if !(v > 0) || math.IsInf(v, 0) {
			return r, &BenchError{File: r.File, Line: r.Line, Key: "Benchmark duration (s)", Msg: fmt.Sprintf("want a duration > 0 s, got %g", v)}
		}
		r.Duration = v
	}
	in, _ := get("Total input tokens")
	out, _ := get("Total generated tokens")
	if r.Completed > 0 {
		r.InputTokens, r.OutputTokens = in/float64(r.Completed), out/float64(r.Completed)
	}
	r.RequestThroughput, _ = get("Request throughput (req/s)")
	r.OutputThroughput, _ = get("Output token throughput (tok/s)")
	r.TotalTokenThroughput, _ = get("Total token throughput (tok/s)", "Total Token throughput (tok/s)", "Total throughput (tok/s)")
	if v, ok := get("Acceptance length", "Accept length"); ok && v > 0 {
		r.AcceptanceLength = v
	}
	for label, v := range vals {
		stat, metric, ok := textStat(label)
		if !ok {
			continue
		}
		if v < 0 || math.IsInf(v, 0) {
			// SGLang prints "-0.00" for a median of nothing; a negative
			// latency is no measurement.
			if v > -0.005 {
				v = 0
			} else {
				return r, &BenchError{File: r.File, Line: r.Line, Key: label, Msg: fmt.Sprintf("want a latency >= 0 ms, got %g", v)}
			}
		}
		st := r.Metrics[metric]
		switch stat {
		case "Mean":
			st.Mean = v
		case "Median":
			st.Median = v
		case "P90":
			st.P90 = v
		case "P99":
			st.P99 = v
		case "P50":
			if math.IsNaN(st.Median) {
				st.Median = v
			}
		}
		r.Metrics[metric] = st
	}
	if err := r.Check("Total input tokens"); err != nil {
		if be, ok := err.(*BenchError); ok && be.Key == "Total input tokens" {
			be.Msg = "input or output length unknown (want Successful requests, Total input tokens and Total generated tokens)"
		}
		return r, err
	}
	return r, nil
}

// textStat splits "Mean TPOT (ms)" into its statistic and metric; only
// labels in milliseconds are statistics.
func textStat(label string) (stat, metric string, ok bool) {
	rest, found := strings.CutSuffix(label, " (ms)")
	if !found {
		return "", "", false
	}
	stat, name, found := strings.Cut(rest, " ")
	if !found {
		return "", "", false
	}
	metric, ok = textMetric[name]
	return stat, metric, ok
}
