package serve

import (
	"math"
	"slices"

	"github.com/moecast/moecast/internal/unit"
)

// SLO is goodput's latency objectives, as `vllm bench serve --goodput
// ttft:MS tpot:MS e2el:MS` takes them (vllm-project/vllm
// `vllm/benchmarks/serve.py` @ def9ce8: a request is good when every
// objective given holds). Zero: not checked.
type SLO struct {
	TTFT, TPOT, E2EL unit.Seconds
}

func (s SLO) set() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2EL > 0 }

func (s SLO) validate() error {
	for _, f := range []struct {
		name string
		v    unit.Seconds
	}{{"SLO.TTFT", s.TTFT}, {"SLO.TPOT", s.TPOT}, {"SLO.E2EL", s.E2EL}} {
		if !finiteNonNeg(float64(f.v)) {
			return fieldErrorf(f.name, "must be finite and >= 0 (0: not checked), got %g", float64(f.v))
		}
	}
	return nil
}

// sloMetrics sets r's Interactivity and, with objectives, its goodput.
//
// Interactivity is InferenceX's E2E interactivity (SemiAnalysis
// InferenceX: tokens per second per user from end to end): the 90th
// percentile over requests of E2E latency / output tokens, inverted, so
// that 90% of requests saw at least this many tokens/s from send to last
// token.
func (e *run) sloMetrics(r *Result) {
	per := make([]float64, 0, len(e.reqs))
	slo := e.cfg.SLO
	good := 0
	for i := range e.reqs {
		q := &e.reqs[i]
		if q.gen == 0 {
			continue
		}
		per = append(per, q.e2e/float64(q.gen))
		tpot := 0.0
		if q.gen > 1 {
			tpot = (q.e2e - q.ttft) / float64(q.gen-1)
		}
		if (slo.TTFT == 0 || q.ttft <= float64(slo.TTFT)) && (slo.TPOT == 0 || tpot <= float64(slo.TPOT)) &&
			(slo.E2EL == 0 || q.e2e <= float64(slo.E2EL)) {
			good++
		}
	}
	if len(per) > 0 {
		slices.Sort(per)
		if p90 := quantile(per, 0.9); p90 > 0 {
			r.Interactivity = 1 / p90
		}
	}
	if slo.set() {
		r.GoodRequests = good
		if d := float64(r.Duration); d > 0 {
			r.Goodput = float64(good) / d
		}
	}
}

// quantile is numpy's linear interpolation on sorted x.
func quantile(x []float64, p float64) float64 {
	h := p * float64(len(x)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(x) {
		return x[len(x)-1]
	}
	return x[lo] + (h-float64(lo))*(x[lo+1]-x[lo])
}
