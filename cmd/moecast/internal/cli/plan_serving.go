package cli

import (
	"fmt"
	"math"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
)

// servingRefine is `moecast plan`'s second stage: an Evaluator that runs
// the serving simulation (`moecast simulate`) on the points near the
// screen's front (plan.Options.Refine), so that the front, the SLO
// verdicts and the best deployment carry the other requests' prefill
// chunks, TTFT and the scheduler's token budget.
func servingRefine(sc *scenarios.Scenario) (plan.Evaluator, error) {
	v := sc.Serving
	return &servingEval{engine: v.Engine, seed: v.Seed, maxBatched: v.MaxNumBatchedTokens,
		maxSeqs: v.MaxNumSeqs, mixed: v.MixedChunk, async: v.AsyncScheduling, version: v.EngineVersion}, nil
}

// servingEval prices a candidate at a concurrency with serve.Run: a closed
// loop of max(PlanRequestsPerSlot x concurrency, PlanMinRequests) requests
// of the plan's request shape (fixed lengths, exact output), all sent at
// t = 0 as `vllm bench serve --max-concurrency C --request-rate inf` does.
// The engine is the scenario's (runtime.engine) where the layout runs on
// it, else the first in serve's engine table that runs it (SGLang for
// data-parallel attention).
type servingEval struct {
	engine     serve.Engine
	seed       uint64
	maxBatched int
	maxSeqs    *int
	mixed      *bool
	async      *bool
	version    string // runtime.engine_version ("" = the newest)
}

// Requests per point of the refine stage: fewer than simulate's default
// (10 x concurrency, at least 100), to keep a plan within seconds; the
// closed loop reaches its steady state after the first wave of C prompts.
const (
	PlanRequestsPerSlot = 4
	PlanMinRequests     = 64
)

// Name implements plan.Evaluator.
func (e *servingEval) Name() string {
	return fmt.Sprintf("serving simulation (moecast simulate: closed loop of max(%d x concurrency, %d) requests)",
		PlanRequestsPerSlot, PlanMinRequests)
}

// config is the serve.Config of candidate c at a concurrency: the
// engine's defaults on its simulator, the scenario's engine settings,
// and the defaults that follow its engine version.
func (e *servingEval) config(c *plan.Candidate, concurrency int, w plan.Workload) (serve.Config, error) {
	engine := c.Engine.Pick(e.engine)
	cfg, err := serve.SimConfig(c.Config, c.Sim, engine)
	if err != nil {
		return serve.Config{}, err
	}
	if e.maxBatched > 0 {
		cfg.MaxNumBatchedTokens = e.maxBatched
	}
	if e.maxSeqs != nil {
		cfg.MaxNumSeqs = *e.maxSeqs
	}
	if e.mixed != nil && engine.Info().MixedChunk {
		cfg.MixedChunk = *e.mixed
	}
	e.versionDefaults(&cfg, engine)
	cfg.Seed = e.seed
	cfg.Workload = serve.Workload{Requests: max(PlanRequestsPerSlot*concurrency, PlanMinRequests), MaxConcurrency: concurrency,
		RequestRate: math.Inf(1), Burstiness: 1, InputTokens: max(1, w.Input), OutputTokens: w.Output}
	if cfg.Memory.KVCapacity <= 0 {
		return serve.Config{}, fmt.Errorf("%s: no room for a KV cache", c.Label())
	}
	return cfg, nil
}

// versionDefaults sets cfg's defaults that follow the engine version
// (SimConfig gives the newest's): vLLM's async scheduling from v0.14.0
// (off with n-gram drafting, SimConfig; runtime.async_scheduling wins)
// and its full-ISL admission from v0.19.0.
func (e *servingEval) versionDefaults(cfg *serve.Config, engine serve.Engine) {
	cfg.AsyncScheduling = cfg.AsyncScheduling && serve.AsyncDefault(engine, e.version)
	if e.async != nil {
		cfg.AsyncScheduling = *e.async
	}
	cfg.ReserveFullISL = serve.ReserveFullISLDefault(engine, e.version)
}

// Evaluate implements plan.Evaluator.
func (e *servingEval) Evaluate(c *plan.Candidate, concurrency int, w plan.Workload) (plan.Metrics, error) {
	cfg, err := e.config(c, concurrency, w)
	if err != nil {
		return plan.Metrics{}, err
	}
	coster := serve.NewSimCoster(c.Sim)
	defer coster.Release()
	r, err := serve.Run(cfg, coster)
	if err != nil {
		return plan.Metrics{}, fmt.Errorf("%s at concurrency %d: %w", c.Label(), concurrency, err)
	}
	if err := coster.Err(); err != nil {
		return plan.Metrics{}, fmt.Errorf("%s at concurrency %d: %w", c.Label(), concurrency, err)
	}
	m := plan.Metrics{OutputTokensPerSecond: r.OutputThroughput, TPOTP99: r.TPOT.P99, TTFTP99: r.TTFT.P99, HasTTFT: true}
	if r.TPOT.Mean > 0 {
		m.PerUser = 1 / float64(r.TPOT.Mean)
	}
	return m, nil
}
