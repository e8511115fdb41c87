package plan

import (
	"fmt"
	"math"

	"github.com/moecast/moecast/internal/unit"
)

// Metrics is what an Evaluator predicts for one replica at one concurrency.
type Metrics struct {
	// OutputTokensPerSecond is the replica's output (generated) tokens/s.
	OutputTokensPerSecond float64
	// PerUser is the tokens/s one request sees while it decodes.
	PerUser float64
	// TPOTP99 is the 99th percentile of time per output token.
	TPOTP99 unit.Seconds
	// TTFTP99 is the 99th percentile of time to first token; meaningful
	// only when HasTTFT.
	TTFTP99 unit.Seconds
	HasTTFT bool
}

func (m *Metrics) finite() bool {
	for _, v := range []float64{m.OutputTokensPerSecond, m.PerUser, float64(m.TPOTP99), float64(m.TTFTP99)} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return false
		}
	}
	return true
}

// Evaluator prices a candidate at a concurrency (requests in flight on one
// replica, at most c.MaxConcurrency). It must be safe for concurrent use
// and deterministic. A serving simulation implements it as well as Screen.
type Evaluator interface {
	Evaluate(c *Candidate, concurrency int, w Workload) (Metrics, error)
	// Name says what the figures come from, for reports.
	Name() string
}

// Screen is the fast Evaluator: one sim decode step of concurrency
// sequences at the mean decode context w.DecodeContext().
//
//	output tok/s = concurrency x tokens per step / step time
//	tok/s/user   = tokens per step / step time
//	TPOT p99     = step time / tokens per step (every steady decode step
//	               is the same step, so its p99 is its value)
//
// It prices no prefill: no TTFT (HasTTFT false), and the throughput leaves
// out the step time prefill chunks take.
type Screen struct{}

// Name implements Evaluator.
func (Screen) Name() string {
	return "screen: sim decode step at the mean decode context (no prefill, no TTFT)"
}

// Evaluate implements Evaluator.
func (Screen) Evaluate(c *Candidate, concurrency int, w Workload) (Metrics, error) {
	pt, err := c.Sim.Step(concurrency, w.DecodeContext())
	if err != nil {
		return Metrics{}, err
	}
	if !(pt.Step.Time > 0) {
		return Metrics{}, fmt.Errorf("decode step of %s at batch %d has no time", c.Label(), concurrency)
	}
	return Metrics{OutputTokensPerSecond: pt.TokensPerSecond, PerUser: pt.PerUser, TPOTP99: pt.TPOT}, nil
}
