package serve_test

import (
	"fmt"
	"math"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"

	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// realPoint is a closed-loop point of the embedded default scenario (Kimi-K2.5
// on 8x RTX PRO 6000 with its calibration tables) priced by the real step
// model.
func realPoint(tb testing.TB, name string, c, requests, in, out int) (serve.Config, *sim.Sim) {
	tb.Helper()
	sc, err := scenarios.Embedded(name)
	require.NoError(tb, err)
	sm, err := sc.Sim()
	require.NoError(tb, err)
	cfg, err := serve.SimConfig(sc.Config, sm, serve.VLLM)
	require.NoError(tb, err)
	cfg.Workload = serve.Workload{Requests: requests, MaxConcurrency: c, RequestRate: math.Inf(1), Burstiness: 1,
		InputTokens: in, OutputTokens: out}
	return cfg, sm
}

// BenchmarkSimClosedLoop is issue 9's speed points with the real step
// model (targets on one core: 0.3 s for 640 requests at concurrency 64 with
// 8192/1024 tokens, 3 s for 10,000 requests at concurrency 256):
//
//	go test ./serve -run '^$' -bench SimClosedLoop -cpu 1 -benchtime 3x
func BenchmarkSimClosedLoop(b *testing.B) {
	points := []struct {
		name                 string
		c, requests, in, out int
	}{
		{"C64-640x8192-1024", 64, 640, 8192, 1024},
		{"C256-10000x1024-1024", 256, 10000, 1024, 1024},
		{"C256-10000x8192-1024", 256, 10000, 8192, 1024},
	}
	for _, p := range points {
		b.Run(p.name, func(b *testing.B) {
			cfg, sm := realPoint(b, scenarios.DefaultName, p.c, p.requests, p.in, p.out)
			r := benchRun(b, cfg, sm)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Steps), "ns/step")
		})
	}
}

// benchRun times serve.Run of cfg on a fresh SimCoster per iteration
// and reports the CPU time, memo hit rate and steps per run.
func benchRun(b *testing.B, cfg serve.Config, sm *sim.Sim) *serve.Result {
	b.Helper()
	var r *serve.Result
	var c *serve.SimCoster
	cpu0 := processCPU()
	for b.Loop() {
		c = serve.NewSimCoster(sm)
		var err error
		if r, err = serve.Run(cfg, c); err != nil {
			b.Fatal(err)
		}
		if c.Err() != nil {
			b.Fatal(c.Err())
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(c.Hits)/float64(c.Hits+c.Misses), "memo-hits")
	b.ReportMetric(float64(r.Steps), "steps/op")
	return r
}

// processCPU is the process's user + system CPU time in ns: on a shared
// machine a steadier measure than wall time.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// checking prices every step with the memoised coster and with a direct
// sim.StepBatch and fails on any difference.
type checking struct {
	t    *testing.T
	memo *serve.SimCoster
	sm   *sim.Sim
}

func (c checking) StepCost(seqs []serve.Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	t, cats := c.memo.StepCost(seqs)
	ss := make([]sim.Seq, len(seqs))
	for i, q := range seqs {
		ss[i] = sim.Seq{Query: q.Query, Context: q.Context, Prefill: q.Prefill}
	}
	var r sim.BatchResult
	require.NoError(c.t, c.sm.StepBatch(ss, &r))
	require.Equal(c.t, r.Step.Time, t, "memoised step cost differs from sim's")
	for i := range cats {
		require.Equal(c.t, r.Breakdown[i].Time, cats[i])
	}
	return t, cats
}

func TestSimCosterMemoIsExact(t *testing.T) {
	cfg, sm := realPoint(t, scenarios.DefaultName, 16, 64, 2048, 128)
	cfg.Workload.RangeRatio = 0.5
	c := checking{t: t, memo: serve.NewSimCoster(sm), sm: sm}
	_, err := serve.Run(cfg, c)
	require.NoError(t, err)
	assert.Positive(t, c.memo.Hits, "the cache answers some steps")
	require.NoError(t, c.memo.Err())
}

// TestSimCosterRelease: a coster whose cache storage was given back
// (Release) and taken again prices a run as a fresh coster does, with the
// same cache hits and misses: the storage comes back empty, so no step of
// the earlier run (the same shapes, another workload) answers from it.
func TestSimCosterRelease(t *testing.T) {
	first, sm := realPoint(t, scenarios.DefaultName, 16, 64, 1024, 128)
	second := first
	second.Workload.OutputTokens = 96
	c := serve.NewSimCoster(sm)
	_, err := serve.Run(first, c)
	require.NoError(t, err)
	require.Positive(t, c.Misses)
	c.Release()
	c.Hits, c.Misses = 0, 0
	got, err := serve.Run(second, c)
	require.NoError(t, err)
	fresh := serve.NewSimCoster(sm)
	want, err := serve.Run(second, fresh)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, fresh.Hits, c.Hits, "hits after Release")
	assert.Equal(t, fresh.Misses, c.Misses, "misses after Release")
	c.Release()
	c.Release() // a second Release is a no-op
}

// isolatedPrefill is the step of one prompt alone.
func isolatedPrefill(t *testing.T, sm *sim.Sim, in int) unit.Seconds {
	var r sim.BatchResult
	require.NoError(t, sm.StepBatch([]sim.Seq{{Query: in, Prefill: true}}, &r))
	return r.Step.Time
}

func run(t *testing.T, cfg serve.Config, sm *sim.Sim) *serve.Result {
	t.Helper()
	c := serve.NewSimCoster(sm)
	r, err := serve.Run(cfg, c)
	require.NoError(t, err)
	require.NoError(t, c.Err())
	return r
}

// TestSimInvariants holds the serving simulation with the real step model
// to what must be true at any load: no TTFT below the prompt's isolated
// prefill, no TPOT below the decode step at the mean batch (at the
// shortest context), Little's law on the closed loop.
func TestSimInvariants(t *testing.T) {
	for _, name := range []string{scenarios.DefaultName, "deepseek-v3-fp8-h200-tp8-mtp"} {
		for _, c := range []int{1, 8, 64} {
			for _, in := range []int{1024, 8192} {
				cfg, sm := realPoint(t, name, c, max(2*c, 16), in, 128)
				r := run(t, cfg, sm)
				iso := isolatedPrefill(t, sm, in)
				label := fmt.Sprintf("%s C%d in %d", name, c, in)
				for _, v := range []unit.Seconds{r.TTFT.Mean, r.TTFT.Median, r.TTFT.P90, r.TTFT.P99} {
					assert.GreaterOrEqual(t, float64(v), float64(iso)*(1-1e-12), "%s: TTFT %v below the isolated prefill %v", label, v, iso)
				}
				if c == 1 && in <= cfg.MaxNumBatchedTokens {
					fe := float64(cfg.FrontEnd.PerRequest) + float64(cfg.FrontEnd.PerInputToken)*float64(in)
					// vLLM's host work adds to a prefill step, async
					// scheduling or not (serve.EngineHost).
					host := float64(cfg.Host.PerStep) + float64(cfg.Host.PerSeq)
					require.Positive(t, host, "SimConfig puts the engine's host work on")
					assert.InDelta(t, float64(iso)+fe+host, float64(r.TTFT.Mean), 1e-12, "%s: alone, TTFT is the front end's processing, the host work and the prefill step", label)
				}
				if cfg.Spec.DraftTokens == 0 {
					p, err := sm.Step(max(1, int(math.Floor(r.MeanBatch))), in)
					require.NoError(t, err)
					assert.GreaterOrEqual(t, float64(r.TPOT.Mean), float64(p.Step.Time)*(1-1e-9), "%s: TPOT below the decode step at the mean batch", label)
				}
				// Little's law: requests in flight = throughput x latency
				// (all C in flight but at the tail).
				inFlight := r.RequestThroughput * float64(r.E2EL.Mean)
				assert.LessOrEqual(t, inFlight, float64(c)*(1+1e-9), "%s: Little's law", label)
				assert.Greater(t, inFlight, 0.5*float64(c), "%s: Little's law", label)
			}
		}
	}
}

// TestSimDecodeOnlyLimit: with one-token prompts and a closed loop whose
// requests all start together, the run is one step of B one-token prefills
// and then decode steps at contexts 1..N-1 in lockstep, so TPOT is the mean
// of predict's steps at batch B over those contexts.
func TestSimDecodeOnlyLimit(t *testing.T) {
	const b, n = 8, 64
	cfg, sm := realPoint(t, scenarios.DefaultName, b, b, 1, n)
	r := run(t, cfg, sm)
	sum := 0.0
	for c := 1; c < n; c++ {
		p, err := sm.Step(b, c)
		require.NoError(t, err)
		sum += float64(p.Step.Time)
	}
	assert.InEpsilon(t, sum/(n-1), float64(r.TPOT.Mean), 1e-9)
	assert.InEpsilon(t, float64(b), r.MeanBatch, 1e-12)
}

func TestSimSameSeedSameOutput(t *testing.T) {
	cfg, sm := realPoint(t, "deepseek-v3-fp8-h200-tp8-mtp", 16, 64, 1024, 128)
	cfg.Workload.RangeRatio = 0.5
	a, b := run(t, cfg, sm), run(t, cfg, sm)
	assert.Equal(t, a, b)
	cfg.Seed = 7
	c := run(t, cfg, sm)
	assert.NotEqual(t, a.TTFT, c.TTFT, "another seed draws other lengths")
}

// TestSimPreemption: with prompts that all prefill in the first step the
// requests run in lockstep, so they all need their peak KV at once:
// preemption appears exactly when C x blocks per request exceeds the
// cache's blocks.
func TestSimPreemption(t *testing.T) {
	const in, out = 64, 1648
	cfg, sm := realPoint(t, scenarios.DefaultName, 1, 1, in, out)
	m := cfg.Memory
	blocks := int(math.Floor(float64(m.KVCapacity) / (float64(m.BlockSize) * float64(m.KVBytesPerToken))))
	per := (in + out - 1 + m.BlockSize - 1) / m.BlockSize
	cmax := blocks / per
	require.Less(t, cmax*in, cfg.MaxNumBatchedTokens, "all prompts prefill in one step")
	for _, c := range []int{cmax - 1, cmax, cmax + 1} {
		cfg.Workload.MaxConcurrency, cfg.Workload.Requests = c, c
		r := run(t, cfg, sm)
		if c <= cmax {
			assert.Zero(t, r.Preemptions, "C=%d fits (%d blocks of %d per request, %d blocks)", c, per, m.BlockSize, blocks)
		} else {
			assert.Positive(t, r.Preemptions, "C=%d does not fit (max %d)", c, cmax)
		}
	}
}

func TestSimMemory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		engine serve.Engine
		block  int
	}{
		{scenarios.DefaultName, serve.VLLM, 16},       // MLA on sm_120: no FlashMLA
		{"kimi-k2.5-h200-nvlink-tp8", serve.VLLM, 64}, // FlashMLA on sm_90
		{"qwen3-235b-h100-tp4", serve.VLLM, 16},       // GQA
		{"kimi-k2.5-h200-nvlink-tp8", serve.SGLang, 1},
	} {
		sc, err := scenarios.Embedded(tc.name)
		require.NoError(t, err)
		sm, err := sc.Sim()
		require.NoError(t, err)
		m, err := serve.SimMemory(sc.Config, sm, tc.engine)
		require.NoError(t, err)
		p, err := sm.Step(1, 1)
		require.NoError(t, err)
		assert.Equal(t, tc.block, m.BlockSize, tc.name)
		assert.Equal(t, p.Memory.Usable, m.KVCapacity)
		assert.Equal(t, p.Memory.KVPerToken, m.KVBytesPerToken)
	}
	sc, err := scenarios.Embedded("deepseek-v3-fp8-h200-dp8-ep8")
	require.NoError(t, err)
	sm, err := sc.Sim()
	require.NoError(t, err)
	m, err := serve.SimMemory(sc.Config, sm, serve.VLLM)
	require.NoError(t, err)
	assert.Equal(t, 8, m.Groups, "DP attention: one group per GPU")
}

// TestSimCosterCollisions: with every key's hash made equal (one chain),
// the cache answers as with distinct hashes: the same result, hits and
// misses.
func TestSimCosterCollisions(t *testing.T) {
	cfg, sm := realPoint(t, scenarios.DefaultName, 8, 40, 2048, 64)
	cfg.Workload.RangeRatio, cfg.Workload.RangeStyle = 0.8, serve.RangeBelow
	run := func() (*serve.Result, *serve.SimCoster) {
		c := serve.NewSimCoster(sm)
		r, err := serve.Run(cfg, c)
		require.NoError(t, err)
		require.NoError(t, c.Err())
		return r, c
	}
	want, wc := run()
	restore := serve.SetMemoHashMask(0)
	defer restore()
	got, gc := run()
	require.Equal(t, want, got)
	assert.Equal(t, wc.Hits, gc.Hits)
	assert.Equal(t, wc.Misses, gc.Misses)
	assert.Positive(t, gc.Hits)
	assert.Greater(t, gc.Misses, 10)
}

// hidden is a StepCoster with nothing but StepCost: the run writes every
// DP rank's copy of the busiest rank's batch out (priceDP without
// SimCoster.StepCostN).
type hidden struct{ serve.StepCoster }

// TestSimCosterRepeatIsExact: a run over DP ranks priced through
// SimCoster.StepCostN (the busiest rank's batch, times the ranks, never
// written out) gives the run priced with the batch written out, field for
// field, with prefill chunks (varied prompt lengths) and speculative
// decoding, and its cache answers the same steps.
func TestSimCosterRepeatIsExact(t *testing.T) {
	for _, name := range []string{scenarios.DefaultName, "deepseek-v3-fp8-h200-tp8-mtp"} {
		for _, g := range []int{2, 8} {
			cfg, sm := realPoint(t, name, 32, 96, 2048, 64)
			cfg.Workload.RangeRatio = 0.5
			cfg.Memory.Groups = g
			direct := serve.NewSimCoster(sm)
			want, err := serve.Run(cfg, hidden{direct})
			require.NoError(t, err)
			repeat := serve.NewSimCoster(sm)
			got, err := serve.Run(cfg, repeat)
			require.NoError(t, err)
			require.Equal(t, want, got, "%s G=%d", name, g)
			assert.Equal(t, direct.Hits, repeat.Hits, "%s G=%d", name, g)
			assert.Equal(t, direct.Misses, repeat.Misses, "%s G=%d", name, g)
			assert.Positive(t, repeat.Misses, "%s G=%d", name, g)
		}
	}
}

// TestSimCosterRepeatPoolCoster: in a disaggregation with DP-attention
// ranks in each pool (SGLang), each pool's lockstep steps are priced by
// the pool's own coster whether it repeats the busiest rank's batch
// (StepCostN) or has it written out, never by the run's coster (here
// another model's, so that using it shows).
func TestSimCosterRepeatPoolCoster(t *testing.T) {
	sc, err := scenarios.Embedded(scenarios.DefaultName)
	require.NoError(t, err)
	sm, err := sc.Sim()
	require.NoError(t, err)
	cfg, err := serve.SimConfig(sc.Config, sm, serve.SGLang)
	require.NoError(t, err)
	cfg.Workload = serve.Workload{Requests: 48, MaxConcurrency: 16, RequestRate: math.Inf(1), Burstiness: 1,
		InputTokens: 1024, OutputTokens: 32, RangeRatio: 0.5}
	_, other := realPoint(t, "deepseek-v3-fp8-h200-tp8-mtp", 16, 48, 1024, 32)
	run := func(wrap func(serve.StepCoster) serve.StepCoster) *serve.Result {
		c := cfg
		mem := c.Memory
		mem.Groups = 4
		pool := func() serve.Pool {
			return serve.Pool{Workers: 1, GPUs: 8, Memory: mem, Coster: wrap(serve.NewSimCoster(sm))}
		}
		c.Disagg = &serve.Disagg{Prefill: pool(), Decode: pool(), KVBytesPerToken: 70e3, TransferBandwidth: 50e9, TransferLatency: 20e-6}
		r, err := serve.Run(c, wrap(serve.NewSimCoster(other)))
		require.NoError(t, err)
		return r
	}
	want := run(func(c serve.StepCoster) serve.StepCoster { return hidden{c} })
	got := run(func(c serve.StepCoster) serve.StepCoster { return c })
	require.Equal(t, want, got)
}
