package cli

import (
	"fmt"
	"math"
	"slices"

	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// parsePrefillFlag parses --prefill "1024,4096" with --prefix L: each
// chunk in [1, sim.MaxChunk] tokens and given once, L >= 0 and L + chunk within
// sim.MaxContext (the model's own limit is checked once it is loaded).
func parsePrefillFlag(v string, prefix int) ([]int, error) {
	if prefix < 0 {
		return nil, inputErrf("--prefix: %d must be a number of cached tokens >= 0", prefix)
	}
	out, err := parseIntList("prefill", v, "1024,4096")
	if err != nil {
		return nil, err
	}
	for i, n := range out {
		if n <= 0 {
			return nil, inputErrf("--prefill: chunk %d (item %d) must be a positive number of tokens", n, i+1)
		}
		if n > sim.MaxChunk {
			return nil, inputErrf("--prefill: chunk %d (item %d) exceeds the limit of %d tokens", n, i+1, sim.MaxChunk)
		}
		if j := slices.Index(out[:i], n); j >= 0 {
			return nil, inputErrf("--prefill: chunk %d (item %d) repeats item %d", n, i+1, j+1)
		}
		if prefix+n > sim.MaxContext {
			return nil, inputErrf("--prefill: --prefix %d + chunk %d (item %d) = %d exceeds the limit of %d tokens", prefix, n, i+1, prefix+n, sim.MaxContext)
		}
	}
	return out, nil
}

// runPrefill is `predict --prefill`: one step per chunk size running a
// single request's chunk of that many tokens against opts.Prefix cached
// ones, alone in the engine, priced as simulate prices it
// (serve.PriceLonePrefill with the scenario's serve.Config and the
// simulator of the instance that runs prefill: the prefill pool's when
// disaggregated).
func runPrefill(s *streams, sc *scenarios.Scenario, opts *predictOptions) error {
	pr, err := predictPrefill(sc, opts.Prefill, opts.Prefix, opts.Explain)
	if err != nil {
		return err
	}
	return output{views: pr.Views(), inputs: scenarioInputs(sc)}.write(s, opts.Format)
}

// prefillPricer is what a lone prefill is priced with: the serve.Config
// and simulator simulate would use for the scenario's first point.
func prefillPricer(sc *scenarios.Scenario) (serve.Config, *sim.Sim, string, error) {
	sm, err := sc.Sim()
	if err != nil {
		return serve.Config{}, nil, "", err
	}
	var p scenarios.ServePoint
	if ps := sc.Serving.Points(); len(ps) > 0 {
		p = ps[0]
	}
	cfg, err := sc.ServeConfig(sm, p)
	if err != nil {
		return cfg, nil, "", err
	}
	if sc.Disagg == nil {
		return cfg, sm, "", nil
	}
	psm, dsm, err := sc.DisaggSims()
	if err != nil {
		return cfg, nil, "", err
	}
	if err := sc.DisaggConfig(&cfg, psm, dsm); err != nil {
		return cfg, nil, "", err
	}
	return cfg, psm, "prefill pool", nil
}

func predictPrefill(sc *scenarios.Scenario, chunks []int, prefix int, explain bool) (*view.PrefillPrediction, error) {
	if prefix < 0 || prefix > sim.MaxContext {
		return nil, inputErrf("--prefix: %d cached tokens: want 0 to %d", prefix, sim.MaxContext)
	}
	if m := sc.Config.Model; m != nil && m.MaxPosition > 0 {
		for i, n := range chunks {
			if prefix+n > m.MaxPosition {
				return nil, inputErrf("--prefill: --prefix %d + chunk %d (item %d) = %d exceeds the model's context, max_position_embeddings %d",
					prefix, n, i+1, prefix+n, m.MaxPosition)
			}
		}
	}
	cfg, sm, pool, err := prefillPricer(sc)
	if err != nil {
		return nil, err
	}
	pr := &view.PrefillPrediction{Scenario: sc, Engine: cfg.Engine.Info().Title, Pool: pool, Explain: explain,
		Warnings: append([]string{}, sc.Warnings...)}
	budget := cfg.MaxNumBatchedTokens
	if budget <= 0 {
		budget = cfg.MaxPrefillTokens
	}
	mem := cfg.Memory
	if cfg.Disagg != nil {
		mem = cfg.Disagg.Prefill.Memory
	}
	for _, n := range chunks {
		if why := prefillFit(mem, prefix+n); why != "" {
			pr.Warnings = append(pr.Warnings, fmt.Sprintf("prefill %d after %d cached tokens: does not fit: %s (simulate cannot serve such a request); priced as asked", n, prefix, why))
		}
		st, err := serve.PriceLonePrefill(cfg, serve.NewSimCoster(sm), n, prefix)
		if err != nil {
			return nil, sc.KeyError(err)
		}
		if budget > 0 && n > budget {
			pr.Warnings = append(pr.Warnings, fmt.Sprintf("prefill %d: above the engine's token budget per step (%d): simulate splits such a prompt into chunks of at most %d; priced as one step as asked", n, budget, budget))
		}
		seqs := make([]sim.Seq, len(st.Seqs))
		for i, q := range st.Seqs {
			seqs[i] = sim.Seq{Query: q.Query, Context: q.Context, Prefill: q.Prefill}
		}
		launch, err := sm.LaunchMode(seqs)
		if err != nil {
			return nil, sc.KeyError(err)
		}
		pt := view.PrefillPoint{Tokens: n, Prefix: prefix, Step: st, Launch: launch}
		if explain {
			if pt.Ops, err = sm.ExplainBatch(seqs); err != nil {
				return nil, sc.KeyError(err)
			}
		}
		pr.Points = append(pr.Points, pt)
	}
	pr.Warnings = collapseWarnings(pr.Warnings)
	return pr, nil
}

// prefillFit says why a request of tokens (cached prefix and chunk) does
// not fit in one attention group's KV cache of m, as serve's admission
// counts it (whole blocks plus the blocks every sequence holds), or "".
func prefillFit(m serve.Memory, tokens int) string {
	if m.KVBytesPerToken <= 0 || m.BlockSize <= 0 {
		return ""
	}
	if m.KVCapacity <= 0 {
		return "the weights and reserve leave no room for a KV cache"
	}
	have := int(math.Min(math.Floor(float64(m.KVCapacity)/(float64(m.BlockSize)*float64(m.KVBytesPerToken))), math.MaxInt32))
	if need := (tokens+m.BlockSize-1)/m.BlockSize + m.SeqBlocks; need <= have {
		return ""
	}
	return fmt.Sprintf("the KV cache holds %d tokens, the request needs %d", max(have-m.SeqBlocks, 0)*m.BlockSize, tokens)
}
