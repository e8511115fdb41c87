package serve

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"

	"github.com/moecast/moecast/model"
)

// linear is a fake step coster, affine in the step's tokens and contexts:
//
//	t = Fixed + PerDecode x decode tokens + PerPrefill x prefill tokens
//	    + PerContext x sum of contexts
//
// booked as Launch, GEMM (token terms) and Attention (context term).
type linear struct {
	Fixed, PerDecode, PerPrefill, PerContext float64
}

func (l linear) StepCost(seqs []Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	var tok, ctx float64
	for _, s := range seqs {
		if s.Prefill {
			tok += l.PerPrefill * float64(s.Query)
		} else {
			tok += l.PerDecode * float64(s.Query)
		}
		ctx += l.PerContext * float64(s.Context)
	}
	var c [cost.NumCategories]unit.Seconds
	c[cost.Launch], c[cost.GEMM], c[cost.Attention] = unit.Seconds(l.Fixed), unit.Seconds(tok), unit.Seconds(ctx)
	return unit.Seconds(l.Fixed + tok + ctx), c
}

// decode is the coster's decode step of b sequences of query q at context ctx.
func (l linear) decode(b, q, ctx float64) float64 {
	return l.Fixed + l.PerDecode*b*q + l.PerContext*b*ctx
}

// realistic has H200-like magnitudes: 10 ms fixed, 0.1 ms per decode
// token, 25 us per prefill token (8k prefill ~ 0.2 s), 1 ns per context
// token.
var realistic = linear{Fixed: 10e-3, PerDecode: 1e-4, PerPrefill: 25e-6, PerContext: 1e-9}

// point is a closed loop of engine e with a KV cache large enough for
// anything and no front end (every request reaches the engine at its send,
// the default), so that the scheduler's own behaviour is tested;
// TestFrontEnd* set one.
func point(e Engine, c, requests, in, out int) Config {
	cfg := DefaultConfig(e, "NVIDIA H200", 141e9)
	cfg.Memory.KVBytesPerToken = 1000
	cfg.Memory.KVCapacity = 1e12
	cfg.Workload = Workload{Requests: requests, MaxConcurrency: c, RequestRate: math.Inf(1), Burstiness: 1,
		InputTokens: in, OutputTokens: out}
	return cfg
}

func simRun(t *testing.T, cfg Config, c StepCoster) (*run, *Result) {
	t.Helper()
	e, err := simulate(cfg, c)
	require.NoError(t, err)
	return e, e.result()
}

func within(t *testing.T, got, want, rel float64, msg string) {
	t.Helper()
	assert.InDelta(t, want, got, rel*math.Abs(want)+1e-15, "%s: got %g want %g", msg, got, want)
}

func TestValidate(t *testing.T) {
	ok := point(VLLM, 4, 10, 100, 10)
	cases := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"engine", func(c *Config) { c.Engine = 7 }, "Engine"},
		{"budget", func(c *Config) { c.MaxNumBatchedTokens = 0 }, "MaxNumBatchedTokens"},
		{"budget below seqs", func(c *Config) { c.MaxNumSeqs = c.MaxNumBatchedTokens + 1 }, "MaxNumBatchedTokens"},
		{"seqs", func(c *Config) { c.MaxNumSeqs = 0 }, "MaxNumSeqs"},
		{"sglang prefill", func(c *Config) { c.Engine = SGLang; c.MaxPrefillTokens = 0 }, "MaxPrefillTokens"},
		{"kv per token", func(c *Config) { c.Memory.KVBytesPerToken = 0 }, "Memory.KVBytesPerToken"},
		{"kv capacity nan", func(c *Config) { c.Memory.KVCapacity = unit.Bytes(math.NaN()) }, "Memory.KVCapacity"},
		{"block", func(c *Config) { c.Memory.BlockSize = 0 }, "Memory.BlockSize"},
		{"groups", func(c *Config) { c.Memory.Groups = 0 }, "Memory.Groups"},
		{"host", func(c *Config) { c.Host.PerStep = -1 }, "Host.PerStep"},
		{"conservativeness", func(c *Config) { c.ScheduleConservativeness = math.NaN() }, "ScheduleConservativeness"},
		{"front end request", func(c *Config) { c.FrontEnd.PerRequest = -1 }, "FrontEnd.PerRequest"},
		{"front end token", func(c *Config) { c.FrontEnd.PerInputToken = unit.Seconds(math.Inf(1)) }, "FrontEnd.PerInputToken"},
		{"draft", func(c *Config) { c.Spec.DraftTokens = 17 }, "Spec.DraftTokens"},
		{"acceptance len", func(c *Config) { c.Spec = Spec{DraftTokens: 3, Acceptance: []float64{.5, .5}} }, "Spec.Acceptance"},
		{"acceptance range", func(c *Config) { c.Spec = Spec{DraftTokens: 1, Acceptance: []float64{1.5}} }, "Spec.Acceptance"},
		{"requests", func(c *Config) { c.Workload.Requests = 0 }, "Workload.Requests"},
		{"concurrency", func(c *Config) { c.Workload.MaxConcurrency = -1 }, "Workload.MaxConcurrency"},
		{"rate zero", func(c *Config) { c.Workload.RequestRate = 0 }, "Workload.RequestRate"},
		{"rate nan", func(c *Config) { c.Workload.RequestRate = math.NaN() }, "Workload.RequestRate"},
		{"burstiness", func(c *Config) { c.Workload.Burstiness = 0 }, "Workload.Burstiness"},
		{"input", func(c *Config) { c.Workload.InputTokens = 0 }, "Workload.InputTokens"},
		{"output", func(c *Config) { c.Workload.OutputTokens = 0 }, "Workload.OutputTokens"},
		{"range ratio", func(c *Config) { c.Workload.RangeRatio = 1 }, "Workload.RangeRatio"},
		{"below range ratio", func(c *Config) { c.Workload.RangeStyle, c.Workload.RangeRatio = RangeBelow, 1.5 }, "Workload.RangeRatio"},
		{"range ratio nan", func(c *Config) { c.Workload.RangeStyle, c.Workload.RangeRatio = RangeBelow, math.NaN() }, "Workload.RangeRatio"},
		{"range style", func(c *Config) { c.Workload.RangeStyle = 7 }, "Workload.RangeStyle"},
	}
	require.NoError(t, ok.Validate())
	below := ok
	below.Workload.RangeStyle, below.Workload.RangeRatio = RangeBelow, 1
	require.NoError(t, below.Validate(), "the one-sided range takes ratio 1 (fixed lengths)")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			_, err := Run(c, realistic)
			var fe *model.FieldError
			require.ErrorAs(t, err, &fe, "edit %s", tc.name)
			assert.Equal(t, tc.field, fe.Field, "error %v", err)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cases := []struct {
		e            Engine
		name         string
		mem          unit.Bytes
		budget, seqs int
	}{
		{VLLM, "NVIDIA H200", 141e9, 8192, 1024},
		{VLLM, "NVIDIA RTX PRO 6000 Blackwell Server Edition", 96e9, 8192, 1024},
		{VLLM, "NVIDIA A100-SXM4-80GB", 80 * GiB, 2048, 256},
		{VLLM, "NVIDIA L40S", 48e9, 2048, 256},
		{SGLang, "NVIDIA H200", 141e9, 8192, 0},
		{SGLang, "NVIDIA B200", 180 * GiB, 16384, 0},
		{SGLang, "NVIDIA L4", 24e9, 2048, 0},
	}
	for _, tc := range cases {
		c := DefaultConfig(tc.e, tc.name, tc.mem)
		assert.Equal(t, tc.budget, c.MaxNumBatchedTokens, "%s %s", tc.e, tc.name)
		assert.Equal(t, tc.seqs, c.MaxNumSeqs, "%s %s", tc.e, tc.name)
		assert.Equal(t, FrontEnd{}, c.FrontEnd, "%s %s: no front end by default", tc.e, tc.name)
	}
}

func TestSameSeedSameOutput(t *testing.T) {
	for _, e := range []Engine{VLLM, SGLang} {
		cfg := point(e, 16, 200, 1024, 64)
		cfg.Workload.RangeRatio = 0.5
		cfg.Workload.RequestRate, cfg.Workload.Burstiness = 20, 0.5
		cfg.Spec = Spec{DraftTokens: 3, Acceptance: []float64{0.8, 0.6, 0.4}, Lookahead: 3}
		cfg.Seed = 7
		a, err := Run(cfg, realistic)
		require.NoError(t, err)
		b, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.True(t, reflect.DeepEqual(a, b), "%s: two runs with seed 7 differ", e)
		cfg.Seed = 8
		c, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.NotEqual(t, a.TTFT, c.TTFT, "%s: seeds 7 and 8 gave the same TTFT", e)
	}
}

// TestTTFTAtLeastIsolatedPrefill: no request's first token comes before
// its prompt's prefill alone would take.
func TestTTFTAtLeastIsolatedPrefill(t *testing.T) {
	for _, e := range []Engine{VLLM, SGLang} {
		for _, c := range []int{1, 8, 64} {
			cfg := point(e, c, 4*c, 4096, 32)
			cfg.Workload.RangeRatio = 0.9
			en, _ := simRun(t, cfg, realistic)
			for i, q := range en.reqs {
				iso, _ := realistic.StepCost([]Seq{{Query: int(q.in), Prefill: true}})
				if q.ttft < float64(iso)*(1-1e-12) {
					t.Errorf("%s C=%d request %d (input %d): TTFT %g below its isolated prefill %g", e, c, i, q.in, q.ttft, iso)
				}
			}
		}
	}
}

// TestTPOTAndThroughputBounds checks, on closed loops with a coster affine
// in tokens, that mean TPOT is at least the decode step at the mean batch,
// that throughput after first tokens is at most the mean batch over that
// step, and Little's law: completed x mean E2E / duration (the mean number
// in flight) is at most C and, with 10 x C requests, close to it.
func TestTPOTAndThroughputBounds(t *testing.T) {
	for _, e := range []Engine{VLLM, SGLang} {
		for _, c := range []int{1, 4, 32, 128} {
			for _, io := range [][2]int{{1024, 256}, {8192, 128}} {
				cfg := point(e, c, 10*c, io[0], io[1])
				r, err := Run(cfg, realistic)
				require.NoError(t, err)
				in := float64(io[0])
				step := realistic.decode(r.MeanBatch, 1, in)
				if float64(r.TPOT.Mean) < step*(1-1e-9) {
					t.Errorf("%s C=%d %v: mean TPOT %g below the decode step %g at the mean batch %.2f", e, c, io, r.TPOT.Mean, step, r.MeanBatch)
				}
				if got, lim := r.OutputThroughput-r.RequestThroughput, r.MeanBatch/step; got > lim*(1+1e-9) {
					t.Errorf("%s C=%d %v: decode throughput %g above the batch's %g", e, c, io, got, lim)
				}
				inFlight := float64(r.Completed) * float64(r.E2EL.Mean) / float64(r.Duration)
				if inFlight > float64(c)*(1+1e-9) || inFlight < 0.85*float64(c) {
					t.Errorf("%s C=%d %v: mean in flight %g, want in [0.85C, C]", e, c, io, inFlight)
				}
				if lim := float64(c*io[1]) / float64(r.E2EL.Mean); r.OutputThroughput > lim*(1+1e-9) {
					t.Errorf("%s C=%d %v: output throughput %g above C x output / E2E = %g", e, c, io, r.OutputThroughput, lim)
				}
			}
		}
	}
}

// TestDecodeOnlyLimit: with one-token prompts every step after the first
// is a decode of the whole batch, so TPOT and every ITL equal the coster's
// decode step at that batch (context-free coster), or its mean over the
// contexts a request passes (context-linear coster: the step at the mean
// context).
func TestDecodeOnlyLimit(t *testing.T) {
	for _, e := range []Engine{VLLM, SGLang} {
		for _, b := range []int{1, 8, 64} {
			out := 65
			free := linear{Fixed: 5e-3, PerDecode: 2e-4, PerPrefill: 1e-5}
			cfg := point(e, b, 3*b, 1, out)
			r, err := Run(cfg, free)
			require.NoError(t, err)
			want := free.decode(float64(b), 1, 0)
			within(t, float64(r.TPOT.Mean), want, 1e-12, "TPOT mean")
			within(t, float64(r.TPOT.P99), want, 1e-12, "TPOT p99")
			within(t, float64(r.ITL.Median), want, 1e-12, "ITL median")
			within(t, float64(r.ITL.P99), want, 1e-12, "ITL p99")
			within(t, r.MeanBatch, float64(b), 0, "mean batch")
			assert.Zero(t, r.MixedSteps)

			ctx := linear{Fixed: 5e-3, PerDecode: 2e-4, PerPrefill: 1e-5, PerContext: 1e-6}
			r, err = Run(cfg, ctx)
			require.NoError(t, err)
			// Decodes run at contexts 1 .. out-1: mean out/2.
			within(t, float64(r.TPOT.Mean), ctx.decode(float64(b), 1, float64(out)/2), 1e-12, "TPOT mean with context")
		}
	}
}

// TestPreemptionExactlyWhenKVShort: C requests prefilled in one step decode
// in lockstep and all reach input + output - 1 tokens together; a cache of
// exactly C times their blocks never preempts, one block less does.
func TestPreemptionExactlyWhenKVShort(t *testing.T) {
	for _, e := range []Engine{VLLM, SGLang} {
		const c, in, out = 16, 200, 57
		cfg := point(e, c, 2*c, in, out)
		bs := cfg.Memory.BlockSize
		blocks := c * ceilDiv(in+out-1, bs)
		cfg.Memory.KVCapacity = unit.Bytes(blocks*bs) * cfg.Memory.KVBytesPerToken
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.Zero(t, r.Preemptions, "%s: capacity %d blocks for %d requests", e, blocks, c)
		assert.Equal(t, unit.Bytes(blocks*bs)*cfg.Memory.KVBytesPerToken, r.KVPeakPerGPU, "%s: peak KV", e)

		cfg.Memory.KVCapacity = unit.Bytes((blocks-1)*bs) * cfg.Memory.KVBytesPerToken
		r, err = Run(cfg, realistic)
		require.NoError(t, err)
		assert.Positive(t, r.Preemptions, "%s: capacity %d blocks", e, blocks-1)
		assert.Equal(t, 2*c, r.Completed)
		assert.Equal(t, 2*c*out, r.TotalOutputTokens, "%s: every request still generates exactly its output", e)
	}
}

func TestUnservable(t *testing.T) {
	cfg := point(VLLM, 4, 10, 1000, 100)
	cfg.Memory.KVCapacity = 1000 * 1000 // 1000 tokens < 1099
	_, err := Run(cfg, realistic)
	var ue *UnservableError
	require.True(t, errors.As(err, &ue), "got %v", err)
	assert.Equal(t, 1099, ue.Tokens)
	cfg.Memory.KVCapacity = 1104 * 1000 // 69 blocks of 16
	_, err = Run(cfg, realistic)
	require.NoError(t, err)
}

// TestVLLMChunking: two 8192-token prompts at a budget of 8192: the first
// prefills alone; the second gets 8191 tokens next to the first's decode
// and its last token in the third step (vllm-project/vllm
// `vllm/v1/core/sched/scheduler.py` @ b4622cf).
func TestVLLMChunking(t *testing.T) {
	cfg := point(VLLM, 2, 2, 8192, 4)
	l := realistic
	en, r := simRun(t, cfg, l)
	s1, _ := l.StepCost([]Seq{{Query: 8192, Prefill: true}})
	s2, _ := l.StepCost([]Seq{{Query: 1, Context: 8192}, {Query: 8191, Prefill: true}})
	s3, _ := l.StepCost([]Seq{{Query: 1, Context: 8193}, {Query: 1, Context: 8191, Prefill: true}})
	within(t, en.reqs[0].ttft, float64(s1), 1e-12, "first TTFT")
	within(t, en.reqs[1].ttft, float64(s1+s2+s3), 1e-12, "second TTFT")
	assert.Equal(t, 2, r.MixedSteps)
}

// TestSGLangPrefillSeparate: without mixed chunks no step holds both a
// prefill and decodes; with them some do.
func TestSGLangPrefillSeparate(t *testing.T) {
	cfg := point(SGLang, 16, 64, 2048, 64)
	r, err := Run(cfg, realistic)
	require.NoError(t, err)
	assert.Zero(t, r.MixedSteps)
	cfg.MixedChunk = true
	m, err := Run(cfg, realistic)
	require.NoError(t, err)
	assert.Positive(t, m.MixedSteps)
	assert.Less(t, float64(m.ITL.P99), float64(r.ITL.P99), "mixing should shorten the decode stalls")
	v, err := Run(point(VLLM, 16, 64, 2048, 64), realistic)
	require.NoError(t, err)
	assert.Positive(t, v.MixedSteps)
}

func TestSpeculativeAcceptance(t *testing.T) {
	cases := []struct {
		acc  []float64
		want float64
	}{
		{[]float64{1}, 4},
		{[]float64{0}, 1},
		{[]float64{0.8, 0.6, 0.5}, 1 + 0.8 + 0.8*0.6 + 0.8*0.6*0.5},
	}
	for _, tc := range cases {
		cfg := point(VLLM, 32, 320, 512, 256)
		cfg.Spec = Spec{DraftTokens: 3, Acceptance: tc.acc, Lookahead: 3}
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		within(t, r.MeanAcceptanceLength, tc.want, 0.02, "mean acceptance length")
		assert.Equal(t, 320*256, r.TotalOutputTokens, "output is exact")
		if tc.acc[0] == 1 {
			// Every verify streams 4 tokens: TPOT is a quarter of the
			// verify step's share of the gaps.
			assert.Less(t, float64(r.TPOT.Mean), float64(r.ITL.Mean)/3.5)
		}
	}
}

func TestAsyncSchedulingHidesDecodeHostTime(t *testing.T) {
	free := linear{Fixed: 5e-3, PerDecode: 1e-5, PerPrefill: 1e-5}
	cfg := point(VLLM, 8, 8, 1, 33)
	cfg.Host = HostOverhead{PerStep: 2e-3}
	cfg.AsyncScheduling = false
	sync, err := Run(cfg, free)
	require.NoError(t, err)
	cfg.AsyncScheduling = true
	async, err := Run(cfg, free)
	require.NoError(t, err)
	g := free.decode(8, 1, 0)
	within(t, float64(sync.TPOT.Mean), g+2e-3, 1e-12, "sync TPOT")
	within(t, float64(async.TPOT.Mean), g, 1e-12, "async TPOT")
	assert.Greater(t, float64(sync.Breakdown[cost.Other]), 0.0)
}

func TestBreakdownShares(t *testing.T) {
	r, err := Run(point(VLLM, 8, 40, 1000, 50), realistic)
	require.NoError(t, err)
	s := r.BreakdownShare()
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	within(t, sum, 1, 1e-12, "shares sum")
	launch := float64(r.Breakdown[cost.Launch])
	within(t, launch, float64(r.Steps)*realistic.Fixed, 1e-9, "launch time = steps x fixed")
}

// TestOverload: an open loop far above what the engine can serve is
// flagged; one well below it is not.
func TestOverload(t *testing.T) {
	// Decode capacity of the realistic coster at 256 tokens out: about
	// 1/(fixed x 256) x batch; prefill of 1024 tokens ~ 26 ms alone.
	for _, tc := range []struct {
		rate float64
		want bool
	}{{0.5, false}, {2, false}, {500, true}} {
		cfg := point(VLLM, 0, 400, 1024, 256)
		cfg.Workload.RequestRate = tc.rate
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.Equal(t, tc.want, r.Overloaded, "rate %g: served %g/s", tc.rate, r.ServedRate)
		assert.Equal(t, tc.want, len(r.Warnings()) > 0)
	}
}

func TestArrivals(t *testing.T) {
	for _, b := range []float64{0.25, 1, 4, math.Inf(1)} {
		w := Workload{Requests: 20000, RequestRate: 10, Burstiness: b}
		reqs := make([]Request, w.Requests)
		arrivals(w, newRand(3), reqs)
		at := make([]float64, len(reqs))
		for i, r := range reqs {
			at[i] = float64(r.Arrival)
		}
		within(t, at[len(at)-1], 2000, 1e-12, "last arrival at n/rate")
		// Coefficient of variation of the gaps: 1/sqrt(burstiness).
		var s, ss float64
		prev := 0.0
		for _, a := range at {
			d := a - prev
			prev = a
			s += d
			ss += d * d
		}
		m := s / float64(len(at))
		cv := math.Sqrt(ss/float64(len(at))-m*m) / m
		want := 1 / math.Sqrt(b)
		assert.InDelta(t, want, cv, 0.05*want+1e-6, "burstiness %g", b)
	}
}

func TestLengths(t *testing.T) {
	w := Workload{Requests: 5000, InputTokens: 1000, OutputTokens: 3, RangeRatio: 0.5}
	reqs := make([]Request, w.Requests)
	drawLengths(w, newRand(1), reqs)
	lo, hi := 1<<30, 0
	for _, r := range reqs {
		lo, hi = min(lo, r.In), max(hi, r.In)
	}
	assert.Equal(t, [2]int{500, 1500}, [2]int{lo, hi})
	lo, hi = 1<<30, 0
	for _, r := range reqs {
		lo, hi = min(lo, r.Out), max(hi, r.Out)
	}
	assert.Equal(t, [2]int{1, 5}, [2]int{lo, hi}, "floor(1.5) .. ceil(4.5)")
}

func TestWeightedStatsMatchNumpy(t *testing.T) {
	// numpy: mean 2.5, median 2.5, std 1.118034, p90 3.7, p99 3.97.
	s := statsOf([]float64{4, 1, 3, 2})
	within(t, float64(s.Mean), 2.5, 1e-12, "mean")
	within(t, float64(s.Median), 2.5, 1e-12, "median")
	within(t, float64(s.Std), math.Sqrt(1.25), 1e-12, "std")
	within(t, float64(s.P90), 3.7, 1e-12, "p90")
	within(t, float64(s.P99), 3.97, 1e-12, "p99")
	w := weightedStats([]weighted{{v: 2, n: 3}, {v: 1, n: 1}})
	e := statsOf([]float64{2, 1, 2, 2})
	assert.Equal(t, e, w)
	assert.Equal(t, Stats{}, statsOf(nil))
}

// TestClientSideQueueExcluded: with --max-concurrency 1 and a rate far
// above what one slot serves, requests queue in the client, whose wait
// TTFT excludes: every TTFT is the isolated prefill.
func TestClientSideQueueExcluded(t *testing.T) {
	cfg := point(VLLM, 1, 50, 2000, 20)
	cfg.Workload.RequestRate = 1000
	en, r := simRun(t, cfg, realistic)
	iso, _ := realistic.StepCost([]Seq{{Query: 2000, Prefill: true}})
	for i, q := range en.reqs {
		within(t, q.ttft, float64(iso), 1e-12, fmt.Sprintf("request %d TTFT", i))
	}
	assert.True(t, r.Overloaded, "the offered rate is not served")
}

// TestGroupsPoolBlocks: two attention groups of half the capacity each
// behave as one cache of the whole, and the peak per GPU halves.
func TestGroupsPoolBlocks(t *testing.T) {
	cfg := point(VLLM, 16, 48, 300, 40)
	cfg.PooledDP = true // the pooled model (per-rank DP: dpranks_test.go)
	blocks := 16 * ceilDiv(339, 16)
	cfg.Memory.KVCapacity = unit.Bytes((blocks-8)*16) * cfg.Memory.KVBytesPerToken
	one, err := Run(cfg, realistic)
	require.NoError(t, err)
	cfg.Memory.Groups = 2
	cfg.Memory.KVCapacity /= 2
	two, err := Run(cfg, realistic)
	require.NoError(t, err)
	assert.Positive(t, one.Preemptions)
	assert.Equal(t, one.TTFT, two.TTFT)
	assert.Equal(t, one.Preemptions, two.Preemptions)
	assert.Equal(t, one.KVPeakPerGPU/2, two.KVPeakPerGPU)
}

// TestMaxNumSeqsCapsBatch: no step decodes more than max_num_seqs
// (vLLM) / max_running_requests (SGLang), and the excess waits in the
// server queue, which TTFT includes.
func TestMaxNumSeqsCapsBatch(t *testing.T) {
	for _, e := range []Engine{VLLM, SGLang} {
		cfg := point(e, 32, 96, 256, 64)
		free, err := Run(cfg, realistic)
		require.NoError(t, err)
		cfg.MaxNumSeqs = 8
		capped, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.LessOrEqual(t, capped.MeanBatch, 8.0, "%s", e)
		assert.Greater(t, free.MeanBatch, 16.0, "%s", e)
		assert.Greater(t, float64(capped.TTFT.Mean), 3*float64(free.TTFT.Mean), "%s: queued requests wait", e)
	}
}

// checker wraps a coster and checks every step the scheduler builds.
type checker struct {
	linear
	t      *testing.T
	cfg    Config
	steps  int
	failed bool
}

func (c *checker) StepCost(seqs []Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	c.steps++
	tokens, prefill, decode := 0, 0, 0
	for _, s := range seqs {
		tokens += s.Query
		if s.Prefill {
			prefill += s.Query
		} else {
			decode++
			if s.Query < 1 || s.Query > 1+c.cfg.Spec.DraftTokens {
				c.fail("decode query %d", s.Query)
			}
		}
		if s.Query < 1 || s.Context < 0 {
			c.fail("seq %+v", s)
		}
	}
	switch c.cfg.Engine {
	case VLLM:
		if tokens > c.cfg.MaxNumBatchedTokens {
			c.fail("step of %d tokens above the budget %d", tokens, c.cfg.MaxNumBatchedTokens)
		}
		if len(seqs) > c.cfg.MaxNumSeqs {
			c.fail("step of %d seqs above max_num_seqs %d", len(seqs), c.cfg.MaxNumSeqs)
		}
	case SGLang:
		if prefill > min(c.cfg.MaxNumBatchedTokens, c.cfg.MaxPrefillTokens) {
			c.fail("prefill batch of %d tokens", prefill)
		}
		if !c.cfg.MixedChunk && prefill > 0 && decode > 0 {
			c.fail("prefill and %d decodes in one step without mixed chunks", decode)
		}
	}
	return c.linear.StepCost(seqs)
}

func (c *checker) fail(format string, args ...any) {
	if !c.failed {
		c.t.Errorf("%s step %d: "+format, append([]any{c.cfg.Engine, c.steps}, args...)...)
		c.failed = true
	}
}

// TestStepsRespectLimits runs varied points through the checker.
func TestStepsRespectLimits(t *testing.T) {
	for _, e := range []Engine{VLLM, SGLang} {
		for _, mixed := range []bool{false, true} {
			cfg := point(e, 48, 150, 3000, 80)
			cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs, cfg.MixedChunk = 2048, 40, mixed
			cfg.Workload.RangeRatio = 0.8
			cfg.Spec = Spec{DraftTokens: 2, Acceptance: []float64{0.7}, Lookahead: 2}
			cfg.Memory.KVCapacity = 20 * 3000 * 1000 // forces preemptions
			// SGLang's ratio admission avoids them (TestSGLangAdmitsByRatio):
			// admit by the chunk's KV alone here.
			cfg.ScheduleConservativeness = 0
			c := &checker{linear: realistic, t: t, cfg: cfg}
			r, err := Run(cfg, c)
			require.NoError(t, err)
			assert.Equal(t, r.Steps, c.steps)
			assert.Positive(t, r.Preemptions, "%s mixed=%v", e, mixed)
		}
	}
}

// listLoad is a fixed list of requests (a request log).
type listLoad []Request

func (l listLoad) Generate(*rand.Rand) []Request { return l }

// TestLoadSeam: a caller's Load that generates what Workload does gives the
// same run (Workload's rate is the exact n/last arrival here), and bad
// generated requests are field errors naming the request.
func TestLoadSeam(t *testing.T) {
	for _, e := range []Engine{VLLM, SGLang} {
		cfg := point(e, 8, 200, 1500, 40)
		cfg.Workload.RangeRatio = 0.5
		cfg.Workload.RequestRate = 4
		cfg.Seed = 7
		want, err := Run(cfg, realistic)
		require.NoError(t, err)
		reqs := cfg.Workload.Generate(newRand(cfg.Seed))
		withLoad := cfg
		withLoad.Load = listLoad(reqs)
		withLoad.Workload = Workload{MaxConcurrency: cfg.Workload.MaxConcurrency}
		got, err := Run(withLoad, realistic)
		require.NoError(t, err)
		within(t, got.RequestRate, want.RequestRate, 1e-12, "offered rate")
		got.RequestRate = want.RequestRate
		assert.Equal(t, want, got, "%s", e)
	}
	cases := []struct {
		name string
		load listLoad
		msg  string
	}{
		{"empty", listLoad{}, "generated 0 requests"},
		{"input", listLoad{{In: 0, Out: 1}}, "request 0: input 0 tokens"},
		{"output", listLoad{{In: 1, Out: 1}, {In: 1, Out: -1}}, "request 1: output -1 tokens"},
		{"order", listLoad{{In: 1, Out: 1, Arrival: 2}, {In: 1, Out: 1, Arrival: 1}}, "request 1: arrival 1 s"},
		{"nan", listLoad{{In: 1, Out: 1, Arrival: unit.Seconds(math.NaN())}}, "request 0: arrival NaN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(VLLM, 1, 1, 1, 1)
			cfg.Load = tc.load
			_, err := Run(cfg, realistic)
			var fe *model.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "Load", fe.Field)
			assert.Contains(t, fe.Msg, tc.msg)
		})
	}
}

// TestBlockPool: grow takes whole blocks and refuses (changing nothing)
// beyond the free ones; free returns them; the peak stays.
func TestBlockPool(t *testing.T) {
	reqs := make([]request, 3)
	p := newBlockPool(Memory{KVBytesPerToken: 1, KVCapacity: 80, BlockSize: 16, Groups: 2}, reqs)
	steps := []struct {
		name       string
		op         func() bool
		ok         bool
		used, peak int
	}{
		{"one slot takes a block", func() bool { return p.grow(0, 1) }, true, 1, 1},
		{"within the block", func() bool { return p.grow(0, 16) }, true, 1, 1},
		{"next block", func() bool { return p.grow(0, 17) }, true, 2, 2},
		{"eight more", func() bool { return p.grow(1, 128) }, true, 10, 10},
		{"none left", func() bool { return p.grow(2, 1) }, false, 10, 10},
		{"free", func() bool { p.free(1); return true }, true, 2, 10},
		{"after free", func() bool { return p.grow(2, 33) }, true, 5, 10},
	}
	for _, s := range steps {
		assert.Equal(t, s.ok, s.op(), s.name)
		u := p.usage()
		assert.Equal(t, kvUsage{Used: s.used, Peak: s.peak, Total: 10, BlockSize: 16}, u, s.name)
	}
	assert.Equal(t, [3]int32{32, 0, 48}, [3]int32{reqs[0].held, reqs[1].held, reqs[2].held})
}

// acceptThresholds' integer test on the 53-bit draw decides as the float
// test rand.Float64() < p did, for every p (the edges 0 and 1, values
// next to the draw and random ones).
func TestAcceptThresholdsMatchFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ps := []float64{0, 1, 0.5, 0.8, 0.6, 0.45, 1.0 / 3, math.Nextafter(1, 0), math.SmallestNonzeroFloat64, 0x1p-53, 0x1.8p-53}
	for range 200 {
		ps = append(ps, r.Float64())
	}
	thr := acceptThresholds(ps)
	for i, p := range ps {
		us := []uint64{0, 1, 1<<53 - 1, thr[i], thr[i] - min(thr[i], 1), min(thr[i]+1, 1<<53-1)}
		for range 200 {
			us = append(us, r.Uint64()>>11)
		}
		for _, u := range us {
			float := float64(u)/(1<<53) < p
			require.Equal(t, float, u < thr[i], "p %v u %d thr %d", p, u, thr[i])
		}
	}
}

// acceptance.draw, with its draws taken ahead, gives the counts of the
// sequential test (one rand.Float64() per position, stopping at the
// first rejected) and leaves the stream where it would: the next draws
// after every call agree, over verify steps of every width up to K and
// past the buffer (K above acceptBuf), for thresholds 0, 1 and between.
func TestAcceptanceDrawSequential(t *testing.T) {
	for _, tc := range []struct {
		name string
		ps   []float64
	}{
		{"eagle K3", []float64{0.8, 0.6, 0.45}},
		{"always", []float64{1, 1, 1, 1}},
		{"never", []float64{0, 0.5}},
		{"mixed edges", []float64{0.9, 0, 1, 0.3}},
		{"one", []float64{0.7}},
		{"past the buffer", slices.Repeat([]float64{0.999}, acceptBuf+37)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := rand.New(rand.NewPCG(7, 1))
			c := acceptance{pcg: rand.NewPCG(7, 1), thr: acceptThresholds(tc.ps)}
			widths := rand.New(rand.NewPCG(3, 4))
			drafts, accepted := 0, 0
			for i := range 5000 {
				d := 1 + widths.IntN(len(tc.ps))
				want := 0
				for want < d && ref.Float64() < tc.ps[want] {
					want++
				}
				got := c.draw(d)
				require.Equal(t, want, got, "call %d, %d drafts", i, d)
				drafts++
				accepted += want
			}
			assert.Equal(t, drafts, c.drafts)
			assert.Equal(t, accepted, c.accepted)
			// the next draw of each stream is the same
			c.fill(1)
			assert.Equal(t, ref.Uint64(), c.buf[c.pos])
		})
	}
}
