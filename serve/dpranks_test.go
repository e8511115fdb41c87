package serve

import (
	"fmt"
	"math"
	"testing"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// perGroup is linear over the busiest of g attention groups when the
// sequences spread evenly over them, as sim prices a step: its token and
// context sums are divided by g.
type perGroup struct {
	linear
	g float64
}

func (p perGroup) StepCost(seqs []Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	t, c := p.linear.StepCost(seqs)
	f := unit.Seconds(p.Fixed)
	for i := range c {
		if i != int(cost.Launch) {
			c[i] /= unit.Seconds(p.g)
		}
	}
	return f + (t-f)/unit.Seconds(p.g), c
}

// TestDPRanksPrefillInParallel: G requests sent together go one to each
// DP rank, and each rank prefills its own with its own token budget in
// the same step, where the pooled ranks share one budget and prefill them
// one step after another.
func TestDPRanksPrefillInParallel(t *testing.T) {
	const g = 4
	cfg := point(VLLM, g, g, 8192, 8)
	cfg.Memory.Groups = g
	c := perGroup{realistic, g}
	step := realistic.Fixed + 8192*realistic.PerPrefill // one rank's prefill, every rank padded to it
	en, r := simRun(t, cfg, c)
	for i, q := range en.reqs {
		within(t, q.ttft, step, 1e-9, fmt.Sprintf("request %d TTFT", i))
	}
	assert.Equal(t, 8, r.Steps, "one prefill step and 7 decode steps")

	cfg.PooledDP = true
	pooled, _ := simRun(t, cfg, c)
	for i := 1; i < g; i++ {
		assert.Greater(t, pooled.reqs[i].ttft, pooled.reqs[i-1].ttft, "pooled, one budget: prompt %d is prefilled after prompt %d", i, i-1)
	}
}

// TestDPRanksLockstep: a rank's decode waits for another rank's prefill
// in the same step (the step ends with its slowest rank).
func TestDPRanksLockstep(t *testing.T) {
	trace := func(long bool) Config {
		tr := []TraceRequest{{Arrival: 0, InputTokens: 16, OutputTokens: 100}}
		if long {
			tr = append(tr, TraceRequest{Arrival: 0.05, InputTokens: 8192, OutputTokens: 2})
		}
		cfg := point(VLLM, 0, len(tr), 16, 100)
		cfg.Workload.Trace = tr
		cfg.Memory.Groups = 2
		return cfg
	}
	c := perGroup{realistic, 2}
	alone, _ := simRun(t, trace(false), c)
	with, _ := simRun(t, trace(true), c)
	prefill := 8192 * realistic.PerPrefill
	stall := with.reqs[0].e2e - alone.reqs[0].e2e
	assert.Greater(t, stall, 0.9*prefill, "request 0's decode waits for rank 1's prefill step")
	assert.Less(t, stall, prefill+2*realistic.Fixed)
}

// TestVLLMBalance: the rank with the fewest requests in flight (waiting +
// running) gets the next request; ties go to the first in a scan that
// starts one rank later each time; waiting requests on a rank whose KV
// cache is over half full add waiting x 6 x (usage - 0.5).
func TestVLLMBalance(t *testing.T) {
	reqs := make([]request, 64)
	mk := func() *dpRanks {
		m := Memory{KVBytesPerToken: 1, KVCapacity: 100 * 16, BlockSize: 16, Groups: 1}
		d := &dpRanks{pick: vllmBalance}
		for range 3 {
			d.in = append(d.in, &instance{reqs: reqs, kv: newBlockPool(m, reqs), sched: &vllmScheduler{}})
		}
		return d
	}
	d := mk()
	var got []int
	for range 6 {
		i := vllmBalance(d, 0)
		got = append(got, i)
		d.in[i].enqueue(int32(len(got)))
	}
	assert.Equal(t, []int{0, 1, 2, 0, 1, 2}, got, "even load: round robin")

	d = mk()
	d.in[0].sched.(*vllmScheduler).running = []int32{1, 2}
	d.in[1].sched.(*vllmScheduler).running = []int32{3}
	d.in[2].sched.(*vllmScheduler).running = []int32{4, 5}
	assert.Equal(t, 1, vllmBalance(d, 0), "fewest in flight")

	// Rank 0: 1 waiting, 1 running, KV 90% used: 2 + 6 x 0.4 = 4.4;
	// rank 1: 3 running: 3; rank 2: 4 running: 4.
	d = mk()
	d.in[0].enqueue(10)
	d.in[0].sched.(*vllmScheduler).running = []int32{11}
	require.True(t, d.in[0].kv.grow(11, 90*16))
	d.in[1].sched.(*vllmScheduler).running = []int32{12, 13, 14}
	d.in[2].sched.(*vllmScheduler).running = []int32{15, 16, 17, 18}
	assert.Equal(t, 1, vllmBalance(d, 0), "KV pressure on the waiting queue")
	assert.False(t, math.IsNaN(float64(d.start)))
}

// TestDPRanksMatchOneRank: with one request in flight at a time a DP
// deployment serves it as one rank would (the other ranks idle, their
// dummy batches padded to it).
func TestDPRanksMatchOneRank(t *testing.T) {
	cfg := point(VLLM, 1, 6, 500, 20)
	one, err := Run(cfg, realistic)
	require.NoError(t, err)
	cfg.Memory.Groups = 4
	four, err := Run(cfg, perGroup{realistic, 4})
	require.NoError(t, err)
	within(t, float64(four.TTFT.Mean), float64(one.TTFT.Mean), 1e-9, "TTFT")
	within(t, float64(four.TPOT.Mean), float64(one.TPOT.Mean), 1e-9, "TPOT")
	assert.Equal(t, one.Steps, four.Steps)
}

// TestStepSums: a step's token and context sums, which priceDP reads to
// find the busiest rank, are the sums over its sequences as add builds
// them, and reset empties them with the step.
func TestStepSums(t *testing.T) {
	reqs := []request{{in: 100, out: 10, computed: 40}, {in: 50, out: 10, computed: 7}, {in: 9, out: 3}}
	in := &instance{reqs: reqs}
	for round := range 2 {
		in.step.reset()
		in.add(0, 1, false)
		in.add(1, 43, true)
		in.add(2, 9, true)
		tok, ctx := 0, 0
		for _, s := range in.step.seqs {
			tok, ctx = tok+s.Query, ctx+s.Context
		}
		assert.Equal(t, 53, tok, "round %d", round)
		assert.Equal(t, tok, in.step.tokens, "round %d", round)
		assert.Equal(t, ctx, in.step.context, "round %d", round)
	}
	in.step.reset()
	assert.Zero(t, in.step.tokens)
	assert.Zero(t, in.step.context)
}
