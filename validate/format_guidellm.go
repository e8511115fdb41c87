package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// GuideLLM v2 reports (vllm-project/guidellm @ ee7a774: benchmarks.json,
// GenerativeBenchmarksReport in src/guidellm/benchmark/schemas/report.py):
// {"metadata", "args", "benchmarks": [...]}, each benchmark with
// config.strategy (the load: {"type_": "concurrent", "streams": N},
// "synchronous", "throughput", {"type_": "constant"|"poisson", "rate": r}),
// duration (s), and metrics (GenerativeMetrics in
// src/guidellm/benchmark/schemas/metrics.py): request_totals {successful,
// errored, incomplete, total} and, per metric, a StatusDistributionSummary
// whose "successful" member is {mean, median, percentiles: {p90, p99, ...},
// ...}. Each benchmark is a record.
//
// The metrics by meaning (src/guidellm/schemas/request_stats.py):
// time_to_first_token_ms is TTFT; inter_token_latency_ms is
// (last token - first token) / (output tokens - 1), vLLM's TPOT;
// time_per_output_token_ms divides by every output token and counts the
// first token's wait, so it is not TPOT and is not read; request_latency is
// E2E in seconds (its name has no unit; GuideLLM defines it in seconds);
// prompt_token_count and output_token_count are the request lengths.
func init() {
	RegisterFormat(Format{
		Name:  "guidellm",
		Looks: "a JSON object with benchmarks[].metrics.time_to_first_token_ms: a GuideLLM report (benchmarks.json)",
		Order: 36,
		Detect: func(s *Sniff) bool {
			b := s.Object()["benchmarks"]
			return len(b) > 0 && b[0] == '[' && bytes.Contains(b, []byte(`"metrics"`)) &&
				(bytes.Contains(b, []byte(`"time_to_first_token_ms"`)) || bytes.Contains(b, []byte(`"inter_token_latency_ms"`)))
		},
		Read: readGuideLLM,
	})
}

// guideDist is a DistributionSummary.
type guideDist struct {
	Mean        *float64            `json:"mean"`
	Median      *float64            `json:"median"`
	Count       *float64            `json:"count"`
	Percentiles map[string]*float64 `json:"percentiles"`
}

// guideStatus is a StatusDistributionSummary: the successful requests' is
// read.
type guideStatus struct {
	Successful *guideDist `json:"successful"`
}

type guideBenchmark struct {
	Config struct {
		Strategy struct {
			Type           string   `json:"type_"`
			Streams        *float64 `json:"streams"`
			Rate           *float64 `json:"rate"`
			MaxConcurrency *float64 `json:"max_concurrency"`
		} `json:"strategy"`
		Backend map[string]json.RawMessage `json:"backend"`
	} `json:"config"`
	Duration *float64 `json:"duration"`
	Metrics  struct {
		RequestTotals struct {
			Successful *float64 `json:"successful"`
			Errored    *float64 `json:"errored"`
			Incomplete *float64 `json:"incomplete"`
			Total      *float64 `json:"total"`
		} `json:"request_totals"`
		TTFT       *guideStatus `json:"time_to_first_token_ms"`
		ITL        *guideStatus `json:"inter_token_latency_ms"`
		Latency    *guideStatus `json:"request_latency"`
		Prompt     *guideStatus `json:"prompt_token_count"`
		Output     *guideStatus `json:"output_token_count"`
		RPS        *guideStatus `json:"requests_per_second"`
		OutputTPS  *guideStatus `json:"output_tokens_per_second"`
		TotalTPS   *guideStatus `json:"tokens_per_second"`
		TPOTWithT1 *guideStatus `json:"time_per_output_token_ms"`
	} `json:"metrics"`
}

func readGuideLLM(name string, data []byte) ([]BenchResult, error) {
	var rep struct {
		Benchmarks []json.RawMessage `json:"benchmarks"`
	}
	if err := json.Unmarshal(pythonFloats(bytes.TrimSpace(data)), &rep); err != nil {
		return nil, &BenchError{File: name, Line: 1, Msg: "not a GuideLLM report: " + jsonMsg(err)}
	}
	if len(rep.Benchmarks) == 0 {
		return nil, &BenchError{File: name, Line: 1, Key: "benchmarks", Msg: "no benchmark in the report"}
	}
	var out []BenchResult
	for i, raw := range rep.Benchmarks {
		key := "benchmarks[" + strconv.Itoa(i) + "]"
		var b guideBenchmark
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, &BenchError{File: name, Line: i + 1, Key: key, Msg: "not a GuideLLM benchmark: " + jsonMsg(err)}
		}
		r, err := guideRecord(name, i, key, &b)
		if err != nil {
			return nil, err
		}
		r.Multi = len(rep.Benchmarks) > 1
		out = append(out, r)
	}
	return out, nil
}

// guideRecord maps one benchmark; Line is its 1-based index in benchmarks.
func guideRecord(name string, i int, key string, b *guideBenchmark) (BenchResult, error) {
	r := newResult(name, i+1, "guidellm")
	r.ID = key
	bad := func(k, format string, args ...any) error {
		return &BenchError{File: name, Line: i + 1, Key: key + "." + k, Msg: fmt.Sprintf(format, args...)}
	}
	count := func(k string, p *float64) (int, error) {
		if p == nil {
			return 0, nil
		}
		if *p < 0 || *p != math.Trunc(*p) || *p > 1e12 {
			return 0, bad(k, "want a whole number >= 0, got %g", *p)
		}
		return int(*p), nil
	}
	var err error
	rt := b.Metrics.RequestTotals
	if r.Completed, err = count("metrics.request_totals.successful", rt.Successful); err != nil {
		return r, err
	}
	if r.Failed, err = count("metrics.request_totals.errored", rt.Errored); err != nil {
		return r, err
	}
	if r.NumPrompts, err = count("metrics.request_totals.total", rt.Total); err != nil {
		return r, err
	}
	if n, err := count("metrics.request_totals.incomplete", rt.Incomplete); err != nil {
		return r, err
	} else if n > 0 {
		r.warn("%d incomplete requests (cut off at the benchmark's end) left out of the statistics", n)
	}
	for _, m := range []struct {
		k     string
		st    *guideStatus
		dst   string
		scale float64
	}{
		{"time_to_first_token_ms", b.Metrics.TTFT, "ttft", 1},
		{"inter_token_latency_ms", b.Metrics.ITL, "tpot", 1},
		{"request_latency", b.Metrics.Latency, "e2el", 1000}, // seconds
	} {
		if m.st == nil || m.st.Successful == nil {
			continue
		}
		d := m.st.Successful
		s := NoStats()
		for _, f := range []struct {
			src *float64
			dst *float64
			k   string
		}{{d.Mean, &s.Mean, "mean"}, {d.Median, &s.Median, "median"}, {d.Percentiles["p90"], &s.P90, "percentiles.p90"}, {d.Percentiles["p99"], &s.P99, "percentiles.p99"}} {
			if f.src == nil {
				continue
			}
			if *f.src < 0 || math.IsInf(*f.src, 0) {
				return r, bad("metrics."+m.k+".successful."+f.k, "want a latency >= 0, got %g", *f.src)
			}
			*f.dst = *f.src * m.scale
		}
		r.Metrics[m.dst] = s
	}
	if b.Metrics.ITL == nil && b.Metrics.TPOTWithT1 != nil {
		r.warn("no inter_token_latency_ms: time_per_output_token_ms counts the first token's wait, so it is not TPOT and was not read")
	}
	for _, l := range []struct {
		k   string
		st  *guideStatus
		dst *float64
	}{
		{"prompt_token_count", b.Metrics.Prompt, &r.InputTokens},
		{"output_token_count", b.Metrics.Output, &r.OutputTokens},
		{"requests_per_second", b.Metrics.RPS, &r.RequestThroughput},
		{"output_tokens_per_second", b.Metrics.OutputTPS, &r.OutputThroughput},
		{"tokens_per_second", b.Metrics.TotalTPS, &r.TotalTokenThroughput},
	} {
		if l.st == nil || l.st.Successful == nil || l.st.Successful.Mean == nil {
			continue
		}
		if v := *l.st.Successful.Mean; v >= 0 && !math.IsInf(v, 0) {
			*l.dst = v
		} else {
			return r, bad("metrics."+l.k+".successful.mean", "want a finite number >= 0, got %g", v)
		}
	}
	if d := b.Duration; d != nil {
		if !(*d > 0) || math.IsInf(*d, 0) {
			return r, bad("duration", "want a duration > 0 s, got %g", *d)
		}
		r.Duration = *d
	}
	if err := guideLoad(&r, b, bad); err != nil {
		return r, err
	}
	if m, ok := b.Config.Backend["model"]; ok {
		var s string
		if json.Unmarshal(m, &s) == nil {
			r.Model = s
		}
	}
	if err := r.Check(key + ".metrics.prompt_token_count"); err != nil {
		return r, err
	}
	return r, nil
}

// guideLoad maps the benchmark's scheduling strategy onto the load.
func guideLoad(r *BenchResult, b *guideBenchmark, bad func(k, format string, args ...any) error) error {
	st := b.Config.Strategy
	conc := func(p *float64, k string) error {
		if p == nil {
			return nil
		}
		if *p < 1 || *p != math.Trunc(*p) || *p > 1e9 {
			return bad("config.strategy."+k, "want a whole number >= 1, got %g", *p)
		}
		r.Concurrency = int(*p)
		return nil
	}
	rate := func() error {
		if st.Rate == nil || !(*st.Rate > 0) || math.IsInf(*st.Rate, 0) {
			return bad("config.strategy.rate", "want a rate > 0 requests/s")
		}
		r.RequestRate = *st.Rate
		return conc(st.MaxConcurrency, "max_concurrency")
	}
	switch strings.ToLower(st.Type) {
	case "concurrent":
		return conc(st.Streams, "streams")
	case "synchronous":
		r.Concurrency = 1
	case "throughput":
		return conc(st.MaxConcurrency, "max_concurrency")
	case "constant":
		r.Burstiness = math.Inf(1) // evenly spaced arrivals
		return rate()
	case "poisson":
		return rate()
	case "":
		r.warn("no config.strategy: the load is unknown")
	default:
		r.warn("scheduling strategy %q not known: the load is unknown", st.Type)
	}
	return nil
}
