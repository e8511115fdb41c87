package serve

import (
	"fmt"
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// stepHost is the host work of a step under cfg (most: the sequences of
// the host loop that schedules the most) and whether the engine hides it
// behind the GPU: cfg.Host per step and per sequence, once per forward
// under synchronous speculative decoding (SpecSyncForwards), overlapped
// with async scheduling when the step has no prefill or the engine
// overlaps prefill too (SGLang).
func stepHost(cfg *Config, prefill bool, most int) (host float64, overlap bool) {
	host = float64(cfg.Host.PerStep) + float64(cfg.Host.PerSeq)*float64(most)
	if cfg.Spec.Sync {
		host *= float64(SpecSyncForwards(prefill))
	}
	overlap = cfg.AsyncScheduling && (!prefill || engines[cfg.Engine].overlapPrefill)
	return host, overlap
}

// stepWall is the wall time of a step of GPU time g under cfg and the host
// work it pays (hostWall with stepHost's terms), with the host preparation
// of a speculative decode step behind the draft passes alone under
// Spec.PrepBubble: g + max(0, host - DraftShare x g).
func stepWall(cfg *Config, g float64, prefill bool, most int) (wall, host float64, overlap bool) {
	host, overlap = stepHost(cfg, prefill, most)
	if overlap && !prefill && cfg.Spec.PrepBubble {
		return g + max(0, host-cfg.Spec.DraftShare*g), host, false
	}
	return hostWall(g, host, overlap), host, overlap
}

// LoneStep is one engine step priced as Run prices it (run.book): the
// coster's GPU time for the batch Run gives it, plus the host work per
// step, added or hidden behind the GPU.
type LoneStep struct {
	// Seqs is the batch the coster priced: the lone sequence, once per
	// DP rank when the engine (or a disaggregated prefill pool: SGLang's
	// DP-attention ranks) runs its DP ranks in lockstep (priceDP: every
	// rank padded to the busiest).
	Seqs []Seq
	// Ranks is the copies in Seqs (1 without lockstep DP ranks).
	Ranks int
	GPU   unit.Seconds // the coster's step time (launch costs included)
	// Host is the engine's host work for the step; Overlap says it is
	// hidden behind the GPU (wall = max(GPU, Host)) rather than added.
	Host    unit.Seconds
	Overlap bool
	// Wall is the step's wall time, what Run advances its clock by;
	// Cats its breakdown, the visible host time in cost.Other.
	Wall unit.Seconds
	Cats [cost.NumCategories]unit.Seconds
}

// PriceLonePrefill prices one step that runs a single request's prefill
// chunk of tokens new tokens against prefix cached tokens, alone (no other
// request in the engine), with coster c under cfg: the step Run takes for
// a lone request whose chunk fits the token budget. A disaggregated
// deployment's prefill pool takes c as its coster and cfg's host terms, as
// Run prices its steps.
func PriceLonePrefill(cfg Config, c StepCoster, tokens, prefix int) (LoneStep, error) {
	q := Seq{Query: tokens, Context: prefix, Prefill: true}
	ranks := 1
	if cfg.Disagg != nil {
		pc := cfg
		pc.Memory = cfg.Disagg.Prefill.Memory
		ranks = poolRanks(&pc)
	} else if cfg.perRankDP() {
		ranks = cfg.Memory.Groups
	}
	out := LoneStep{Ranks: ranks}
	for range ranks {
		out.Seqs = append(out.Seqs, q)
	}
	gpu, cats := c.StepCost(out.Seqs)
	if ec, ok := c.(interface{ Err() error }); ok && ec.Err() != nil {
		return out, ec.Err()
	}
	g := float64(gpu)
	if !(g > 0) || math.IsInf(g, 0) {
		return out, fmt.Errorf("serve: step cost of a %d-token prefill chunk is %g s (want finite and > 0)", tokens, g)
	}
	wall, host, overlap := stepWall(&cfg, g, true, 1)
	cats[cost.Other] += unit.Seconds(wall - g)
	out.GPU, out.Host, out.Overlap, out.Wall, out.Cats = gpu, unit.Seconds(host), overlap, unit.Seconds(wall), cats
	return out, nil
}
