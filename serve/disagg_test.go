package serve

import (
	"math"
	"testing"

	"github.com/moecast/moecast/internal/unit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/model"
)

// disagg makes cfg disaggregated with both pools equal to cfg's instance.
func disagg(cfg Config, pw, dw int, bw float64, lat unit.Seconds) Config {
	pool := func(w int) Pool { return Pool{Workers: w, GPUs: 8, Memory: cfg.Memory, Coster: realistic} }
	cfg.Disagg = &Disagg{Prefill: pool(pw), Decode: pool(dw), KVBytesPerToken: 70e3, TransferBandwidth: bw, TransferLatency: lat}
	return cfg
}

// A disaggregation whose transfer is free and whose pools are each the
// aggregated instance serves one request at a time as the aggregated
// instance does, plus the decode instance's first step (the last prompt
// token): TPOT and ITL equal, TTFT longer by exactly that step,
// throughput within 1%.
func TestDisaggFreeTransferMatchesAgg(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in, out int
	}{
		{"1k/1k", 1024, 1024},
		{"8k/1k", 8192, 1024},
		{"300/2000", 300, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agg := point(VLLM, 1, 8, tc.in, tc.out)
			a, err := Run(agg, realistic)
			require.NoError(t, err)
			d, err := Run(disagg(agg, 1, 1, math.Inf(1), 0), realistic)
			require.NoError(t, err)
			first, _ := realistic.StepCost([]Seq{{Query: 1, Context: tc.in - 1, Prefill: true}})
			assert.InDelta(t, float64(a.TTFT.Mean+first), float64(d.TTFT.Mean), 1e-9, "TTFT = agg's + the decode instance's first step")
			within(t, float64(d.TPOT.Mean), float64(a.TPOT.Mean), 1e-9, "TPOT")
			within(t, float64(d.ITL.P99), float64(a.ITL.P99), 1e-9, "ITL p99")
			within(t, d.OutputThroughput, a.OutputThroughput, 0.01, "output throughput")
			require.NotNil(t, d.Disagg)
			assert.Zero(t, d.Disagg.KVTransferMean)
			assert.Equal(t, 8, d.Disagg.PrefillGPUs)
			assert.Equal(t, 8, d.Disagg.DecodeGPUs)
			assert.Nil(t, a.Disagg)
		})
	}
}

// The transfer adds latency + bytes / bandwidth to each TTFT.
func TestDisaggTransferPriced(t *testing.T) {
	for _, tc := range []struct {
		name string
		bw   float64
		lat  unit.Seconds
	}{
		{"400 Gb/s NIC", 50e9, 20e-6},
		{"slow link", 1e9, 1e-3},
		{"latency only", math.Inf(1), 5e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agg := point(VLLM, 1, 4, 4096, 64)
			free, err := Run(disagg(agg, 1, 1, math.Inf(1), 0), realistic)
			require.NoError(t, err)
			r, err := Run(disagg(agg, 1, 1, tc.bw, tc.lat), realistic)
			require.NoError(t, err)
			x := float64(tc.lat) + 4096*70e3/tc.bw
			assert.InDelta(t, x, float64(r.Disagg.KVTransferMean), 1e-12)
			assert.InDelta(t, float64(free.TTFT.Mean)+x, float64(r.TTFT.Mean), 1e-9)
			within(t, float64(r.TPOT.Mean), float64(free.TPOT.Mean), 1e-9, "TPOT unchanged")
		})
	}
}

// Pools of several instances under load: every request completes, the
// utilisations are fractions, and the routers spread the work.
func TestDisaggPools(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pw, dw int
		router Router
	}{
		{"1P2D round robin", 1, 2, RoundRobin},
		{"2P3D least loaded", 2, 3, LeastLoaded},
		{"3P1D round robin", 3, 1, RoundRobin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(VLLM, 0, 400, 2000, 200)
			cfg.Workload.RequestRate = 8
			cfg = disagg(cfg, tc.pw, tc.dw, 50e9, 20e-6)
			cfg.Disagg.Router = tc.router
			e, err := simulate(cfg, realistic)
			require.NoError(t, err)
			r := e.result()
			assert.Equal(t, 400, r.Completed)
			assert.Equal(t, 400*200, r.TotalOutputTokens)
			for _, u := range []float64{r.Disagg.PrefillUtilisation, r.Disagg.DecodeUtilisation} {
				assert.Greater(t, u, 0.0)
				assert.LessOrEqual(t, u, 1.0)
			}
			for _, nd := range append(append([]*node(nil), e.cl.prefill...), e.cl.decode...) {
				assert.Positive(t, nd.busyTime, "every instance got work")
			}
			assert.Equal(t, 8*tc.pw, r.Disagg.PrefillGPUs)
		})
	}
}

func TestDisaggValidate(t *testing.T) {
	base := point(VLLM, 1, 4, 100, 10)
	for _, tc := range []struct {
		name  string
		edit  func(d *Disagg)
		field string
	}{
		{"no prefill workers", func(d *Disagg) { d.Prefill.Workers = 0 }, "Disagg.Prefill.Workers"},
		{"no decode coster", func(d *Disagg) { d.Decode.Coster = nil }, "Disagg.Decode.Coster"},
		{"prefill memory", func(d *Disagg) { d.Prefill.Memory.BlockSize = 0 }, "Disagg.Prefill.Memory.BlockSize"},
		{"zero bandwidth", func(d *Disagg) { d.TransferBandwidth = 0 }, "Disagg.TransferBandwidth"},
		{"NaN latency", func(d *Disagg) { d.TransferLatency = unit.Seconds(math.NaN()) }, "Disagg.TransferLatency"},
		{"router", func(d *Disagg) { d.Router = 9 }, "Disagg.Router"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := disagg(base, 1, 1, 1e9, 0)
			tc.edit(cfg.Disagg)
			_, err := Run(cfg, realistic)
			var fe *model.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
		})
	}
}

// The prefix-aware router keeps each document on the prefill instance
// that holds it; round robin spreads every document over every instance,
// whose caches (about three documents each) then evict them in turn.
func TestDisaggPrefixAwareRouter(t *testing.T) {
	const n = 300
	load := make(listLoad, n)
	for i := range load {
		load[i] = Request{In: 2048, Out: 64, Arrival: unit.Seconds(float64(i) * 0.05),
			Prefix: []Segment{{ID: uint64(1 + i%5), Tokens: 2000}, {ID: segOwn | uint64(i), Tokens: 112}}}
	}
	rate := map[Router]float64{}
	for _, rt := range []Router{RoundRobin, LeastLoaded, PrefixAware} {
		cfg := point(VLLM, 0, n, 1, 1)
		cfg.Load = load
		cfg = disagg(cfg, 3, 2, 50e9, 0)
		cfg.Disagg.Prefill.Memory.KVCapacity = 400 * 16 * cfg.Memory.KVBytesPerToken
		cfg.Disagg.Router = rt
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		require.True(t, r.PrefixCache)
		assert.Equal(t, n, r.Completed)
		rate[rt] = r.PrefixHitRate
	}
	// at best each of the 5 documents misses once, then hits its 2000 tokens (125 blocks) of 2048
	// tokens; a document whose first request has not been admitted yet
	// when its second is routed may miss once more elsewhere.
	best := float64(n-5) * 2000 / (n * 2048)
	assert.LessOrEqual(t, rate[PrefixAware], best+1e-12)
	assert.Greater(t, rate[PrefixAware], best-0.02)
	assert.Greater(t, rate[PrefixAware], rate[RoundRobin]+0.2, "round robin evicts: %v", rate)
}

// TestSGLangPrebuiltDecode: SGLang's decode server admits a transferred
// request without a prefill step (its prebuilt batch), so in a closed
// loop whose requests reach the decode instance one at a time (lengths on
// [0.8 L, L]) no prefill step interrupts the decodes: TPOT is the decode
// steps' own. Computing the last prompt token as a prefill step, as vLLM's
// decode instance does (Config.DecodeRecompute), runs one SGLang prefill
// batch without the decodes at almost every arrival.
func TestSGLangPrebuiltDecode(t *testing.T) {
	cfg := disagg(point(SGLang, 32, 320, 2048, 256), 2, 1, math.Inf(1), 0)
	cfg.Workload.RangeStyle, cfg.Workload.RangeRatio = RangeBelow, 0.8
	pre, err := Run(cfg, realistic)
	require.NoError(t, err)
	cfg.DecodeRecompute = true
	re, err := Run(cfg, realistic)
	require.NoError(t, err)
	// A decode step of at most 32 requests at contexts up to 2.3k tokens.
	maxDecode := realistic.decode(32, 1, 2048+256)
	assert.LessOrEqual(t, float64(pre.TPOT.Mean), maxDecode+1e-12, "prebuilt: TPOT no more than a full decode step")
	// Recompute: ~320 prefill steps of ~10 ms among ~2,300 decode steps
	// of ~13 ms, about +10% per output token.
	assert.Greater(t, float64(re.TPOT.Mean), 1.05*float64(pre.TPOT.Mean), "recompute: prefill steps between the decodes")
	assert.Equal(t, re.Completed, pre.Completed)

	// vLLM's decode instance computes the last prompt token either way.
	v := disagg(point(VLLM, 32, 320, 2048, 256), 2, 1, math.Inf(1), 0)
	v.Workload.RangeStyle, v.Workload.RangeRatio = RangeBelow, 0.8
	a, err := Run(v, realistic)
	require.NoError(t, err)
	v.DecodeRecompute = true
	b, err := Run(v, realistic)
	require.NoError(t, err)
	assert.Equal(t, a.TPOT, b.TPOT)
}

// The decode instance's pull (vLLM's NixlConnector): an idle instance
// polls at once, so a request arriving at an idle decode instance starts
// as when the KV is pushed; under load the read starts at the instance's
// next step and the request is admitted at the step after, about one
// decode step later than a pushed KV.
func TestDisaggPull(t *testing.T) {
	t.Run("idle decode instance: nothing added", func(t *testing.T) {
		cfg := disagg(point(VLLM, 1, 8, 1024, 64), 1, 1, 50e9, 20e-6)
		push, err := Run(cfg, realistic)
		require.NoError(t, err)
		cfg.Disagg.Pull = true
		pull, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.InDelta(t, float64(push.TTFT.Mean), float64(pull.TTFT.Mean), 1e-12)
		assert.InDelta(t, float64(push.TPOT.Mean), float64(pull.TPOT.Mean), 1e-12)
		assert.InDelta(t, float64(push.Disagg.KVTransferMean), float64(pull.Disagg.KVTransferMean), 1e-15)
	})
	t.Run("busy decode instance: about one step more", func(t *testing.T) {
		cfg := point(VLLM, 0, 400, 2000, 200)
		cfg.Workload.RequestRate = 8
		cfg = disagg(cfg, 1, 1, 50e9, 20e-6)
		push, err := Run(cfg, realistic)
		require.NoError(t, err)
		cfg.Disagg.Pull = true
		pull, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.Equal(t, 400, pull.Completed)
		assert.Equal(t, 400*200, pull.TotalOutputTokens)
		d := float64(pull.TTFT.Mean - push.TTFT.Mean)
		t.Logf("TTFT push %g pull %g (+%g), TPOT %g, ITL p99 %g", float64(push.TTFT.Mean), float64(pull.TTFT.Mean), d, float64(push.TPOT.Mean), float64(push.ITL.P99))
		assert.Greater(t, d, 0.3*float64(push.TPOT.Mean), "the read waits for the instance's next step")
		assert.Less(t, d, 2*float64(push.ITL.P99), "and the request for the step after")
	})
}

// Each pool runs under its own max_num_seqs: a decode pool limited to 16
// never decodes more than 16 sequences at a step (the rest wait with
// their KV transferred, so TTFT grows and TPOT falls), while the same
// limit on the prefill pool leaves the decode batch above it; 0 keeps
// the config's limit.
func TestDisaggPoolMaxNumSeqs(t *testing.T) {
	run := func(pre, dec int) *Result {
		t.Helper()
		cfg := disagg(point(VLLM, 64, 640, 2000, 200), 1, 1, 50e9, 20e-6)
		cfg.Disagg.Prefill.MaxNumSeqs, cfg.Disagg.Decode.MaxNumSeqs = pre, dec
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.Equal(t, 640, r.Completed)
		return r
	}
	base, dec16, pre16 := run(0, 0), run(0, 16), run(16, 0)
	assert.Greater(t, base.MeanBatch, 16.0, "the config's limit (1024) lets the decode batch pass 16")
	assert.LessOrEqual(t, dec16.MeanBatch, 16.0, "decode pool limited to 16")
	assert.Greater(t, float64(dec16.TTFT.Mean), 2*float64(base.TTFT.Mean), "requests wait for a decode slot")
	assert.Less(t, float64(dec16.TPOT.Mean), float64(base.TPOT.Mean), "smaller decode steps")
	assert.Greater(t, pre16.MeanBatch, 16.0, "a prefill pool's limit does not bind the decode pool")

	cfg := disagg(point(VLLM, 1, 4, 100, 10), 1, 1, 1e9, 0)
	cfg.Disagg.Decode.MaxNumSeqs = -1
	_, err := Run(cfg, realistic)
	var fe *model.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Disagg.Decode.MaxNumSeqs", fe.Field)
}

// Each pool runs under its own --scheduler-recv-interval: on a busy
// decode pool a transferred request waits for the skipper's count (up to
// N-1 decode steps), so TTFT grows and TPOT stays; on a prefill pool,
// whose iterations all run extend batches (weight 1000), every iteration
// receives and nothing changes. A pool with DP attention refuses it.
func TestDisaggPoolRecvInterval(t *testing.T) {
	run := func(pre, dec int) *Result {
		t.Helper()
		cfg := disagg(point(SGLang, 32, 320, 1000, 200), 1, 1, 50e9, 20e-6)
		cfg.Disagg.Prefill.SchedulerRecvInterval, cfg.Disagg.Decode.SchedulerRecvInterval = pre, dec
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.Equal(t, 320, r.Completed)
		return r
	}
	base, dec10, pre10 := run(0, 0), run(0, 10), run(10, 0)
	t.Logf("TTFT base %g, decode recv 10 %g, prefill recv 10 %g; TPOT %g %g", float64(base.TTFT.Mean), float64(dec10.TTFT.Mean),
		float64(pre10.TTFT.Mean), float64(base.TPOT.Mean), float64(dec10.TPOT.Mean))
	assert.Greater(t, float64(dec10.TTFT.Mean), float64(base.TTFT.Mean)+float64(base.TPOT.Mean), "transferred requests wait for the decode scheduler's receive")
	assert.Less(t, float64(dec10.TTFT.Mean), float64(base.TTFT.Mean)+10*float64(base.ITL.P99), "at most N-1 decode steps more")
	within(t, float64(pre10.TTFT.Mean), float64(base.TTFT.Mean), 0.01, "prefill pool: every iteration receives")

	cfg := disagg(point(SGLang, 1, 4, 100, 10), 1, 1, 1e9, 0)
	cfg.Disagg.Decode.Memory.Groups = 8
	cfg.Disagg.Decode.SchedulerRecvInterval = 10
	_, err := Run(cfg, realistic)
	var fe *model.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Disagg.Decode.SchedulerRecvInterval", fe.Field)
}

// A prefill instance whose KV cache is all held by prefilled requests in
// transfer idles until a transfer ends (SGLang --max-total-tokens small
// against the prompts): every request completes, and TTFT grows against
// an instance with room.
func TestDisaggPrefillWaitsForTransfers(t *testing.T) {
	for _, e := range []Engine{SGLang, VLLM} {
		t.Run(e.String(), func(t *testing.T) {
			run := func(tokens int) *Result {
				t.Helper()
				cfg := disagg(point(e, 16, 64, 1000, 50), 1, 1, 0.5e9, 20e-6)
				cfg.Disagg.Prefill.Memory.KVCapacity = unit.Bytes(tokens) * cfg.Disagg.Prefill.Memory.KVBytesPerToken
				r, err := Run(cfg, realistic)
				require.NoError(t, err)
				assert.Equal(t, 64, r.Completed)
				return r
			}
			roomy, tight := run(1<<20), run(2600)
			assert.Greater(t, float64(tight.TTFT.Mean), float64(roomy.TTFT.Mean), "prefills wait for transfers to free the cache")
		})
	}
}

// Each pool's scheduler runs with the pool's own attention DP ranks: a
// prefill pool without DP attention in front of a decode pool of 32
// ranks chunks one prompt at a time with the whole chunked_prefill_size,
// as its one SGLang scheduler does, not 32 ranks' chunks (which, in a
// cache of 16 prompts, would each hold half a prompt and wait on each
// other).
func TestDisaggPoolSchedulerRanks(t *testing.T) {
	cfg := disagg(point(SGLang, 64, 128, 8192, 20), 1, 1, 50e9, 20e-6)
	cfg.Disagg.Prefill.Memory.KVCapacity = unit.Bytes(16*8192) * cfg.Disagg.Prefill.Memory.KVBytesPerToken
	cfg.Disagg.Decode.Memory.Groups = 32
	r, err := Run(cfg, realistic)
	require.NoError(t, err)
	assert.Equal(t, 128, r.Completed)
}

// Each pool runs under its own token budget: a prefill pool limited to
// 1024 tokens a step prefills an 8192-token prompt in 8 chunks, so TTFT
// grows, and SGLang's max_prefill_tokens caps the budget the same way;
// the decode pool's budget leaves the prefill pool's alone.
func TestDisaggPoolBudget(t *testing.T) {
	for _, e := range []Engine{SGLang, VLLM} {
		t.Run(e.String(), func(t *testing.T) {
			run := func(f func(d *Disagg)) *Result {
				t.Helper()
				cfg := disagg(point(e, 1, 20, 8192, 20), 1, 1, 50e9, 20e-6)
				f(cfg.Disagg)
				r, err := Run(cfg, realistic)
				require.NoError(t, err)
				assert.Equal(t, 20, r.Completed)
				return r
			}
			base := run(func(*Disagg) {})
			small := run(func(d *Disagg) { d.Prefill.MaxNumBatchedTokens = 1024 })
			dec := run(func(d *Disagg) { d.Decode.MaxNumBatchedTokens = 1024 })
			assert.Greater(t, float64(small.TTFT.Mean), 1.2*float64(base.TTFT.Mean), "8 chunks, each a step")
			within(t, float64(dec.TTFT.Mean), float64(base.TTFT.Mean), 0.05, "the decode pool's budget")
			if e == SGLang {
				capped := run(func(d *Disagg) { d.Prefill.MaxPrefillTokens = 1024 })
				within(t, float64(capped.TTFT.Mean), float64(small.TTFT.Mean), 1e-9, "min(max_prefill_tokens, chunked_prefill_size)")
			}
		})
	}
}

// TestDisaggPoolBudgetDrafts: a pool's own token budget must hold one
// sequence's decode of 1 + K tokens, as the config's must
// (Config.MaxNumBatchedTokens); below it the pool's scheduler could not
// schedule a verify step, so the config is refused at the pool's field.
func TestDisaggPoolBudgetDrafts(t *testing.T) {
	for _, e := range []Engine{SGLang, VLLM} {
		for _, pool := range []string{"Prefill", "Decode"} {
			for _, n := range []int{1, 3} {
				cfg := disagg(point(e, 1, 20, 8192, 20), 1, 1, 50e9, 20e-6)
				cfg.Spec = Spec{DraftTokens: 3, Acceptance: []float64{0.8}, Lookahead: 3}
				if pool == "Prefill" {
					cfg.Disagg.Prefill.MaxNumBatchedTokens = n
				} else {
					cfg.Disagg.Decode.MaxNumBatchedTokens = n
				}
				_, err := Run(cfg, realistic)
				var fe *model.FieldError
				require.ErrorAs(t, err, &fe, "%s %s %d", e, pool, n)
				assert.Equal(t, "Disagg."+pool+".MaxNumBatchedTokens", fe.Field)
				assert.Contains(t, fe.Msg, "one sequence's decode of 1 + 3 draft tokens (want at least 4)")
			}
			cfg := disagg(point(e, 1, 20, 8192, 20), 1, 1, 50e9, 20e-6)
			cfg.Spec = Spec{DraftTokens: 3, Acceptance: []float64{0.8}, Lookahead: 3}
			cfg.Disagg.Decode.MaxNumBatchedTokens, cfg.Disagg.Prefill.MaxNumBatchedTokens = 4, 4
			_, err := Run(cfg, realistic)
			require.NoError(t, err, "%s: 1 + K tokens is enough", e)
		}
	}
}

// A disaggregated deployment's front end (Dynamo's frontend) tokenises
// each request on its own before routing it: one request's TTFT grows by
// exactly its tokenisation, and requests sent together are tokenised side
// by side (the whole run shifts by one request's tokenisation, where an
// API server taking them one at a time would hold the second for two).
func TestDisaggFrontEndParallel(t *testing.T) {
	const in, perTok = 4096, 10e-6
	for _, c := range []int{1, 2, 4} {
		base := disagg(point(VLLM, c, c, in, 64), 1, 1, math.Inf(1), 0)
		b, err := Run(base, realistic)
		require.NoError(t, err)
		fe := base
		fe.FrontEnd = FrontEnd{PerInputToken: perTok}
		f, err := Run(fe, realistic)
		require.NoError(t, err)
		assert.InDelta(t, float64(b.TTFT.Mean)+in*perTok, float64(f.TTFT.Mean), 1e-9, "C=%d: TTFT + one request's tokenisation", c)
		assert.InDelta(t, float64(b.TTFT.P99)+in*perTok, float64(f.TTFT.P99), 1e-9, "C=%d: the last request waits for no other's tokenisation", c)
		within(t, float64(f.TPOT.Mean), float64(b.TPOT.Mean), 1e-9, "TPOT unchanged")
	}
}
