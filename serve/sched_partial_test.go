package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// stepLog records every step's prefill chunks and whether it held
// decodes.
type stepLog struct {
	linear
	chunks  [][]int
	decodes []int
}

func (f *stepLog) StepCost(seqs []Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	var ch []int
	dec := 0
	for _, q := range seqs {
		if q.Prefill {
			ch = append(ch, q.Query)
		} else {
			dec++
		}
	}
	f.chunks = append(f.chunks, ch)
	f.decodes = append(f.decodes, dec)
	return f.linear.StepCost(seqs)
}

// TestVLLMLongPrefillThreshold: vLLM's V1 scheduler gives a request at
// most long_prefill_token_threshold prefill tokens a step, so two 4096-
// token prompts under a budget of 8192 are prefilled in chunks of 1024,
// both in every step, where without the threshold the first step takes
// both whole; max_num_partial_prefills > 1 with no threshold sets it to
// 4% of max_model_len (32768: 1310); max_num_partial_prefills itself
// limits nothing.
func TestVLLMLongPrefillThreshold(t *testing.T) {
	for _, tc := range []struct {
		name               string
		threshold, partial int
		first              []int
		prefillSteps       int
	}{
		{"off", 0, 1, []int{4096, 4096}, 1},
		{"threshold 1024", 1024, 1, []int{1024, 1024}, 4},
		{"partial prefills 4, threshold from max_model_len", 0, 4, []int{1310, 1310}, 4},
		{"partial prefills 4 with a threshold", 2048, 4, []int{2048, 2048}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(VLLM, 2, 2, 4096, 4)
			cfg.LongPrefillTokenThreshold, cfg.MaxNumPartialPrefills, cfg.MaxModelLen = tc.threshold, tc.partial, 32768
			rec := &stepLog{linear: realistic}
			r, err := Run(cfg, rec)
			require.NoError(t, err)
			assert.Equal(t, tc.first, rec.chunks[0], "first step's chunks")
			n := 0
			for _, ch := range rec.chunks {
				if len(ch) > 0 {
					n++
				}
			}
			assert.Equal(t, tc.prefillSteps, n, "steps with prefill chunks")
			assert.Equal(t, 2, r.Completed)
		})
	}
}

func TestVLLMPartialPrefillValidation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(*Config)
		field string
	}{
		{"long above partial", func(c *Config) { c.MaxNumPartialPrefills, c.MaxLongPartialPrefills = 2, 3 }, "MaxLongPartialPrefills"},
		{"negative threshold", func(c *Config) { c.LongPrefillTokenThreshold = -1 }, "LongPrefillTokenThreshold"},
		{"threshold above max_model_len", func(c *Config) {
			c.MaxNumPartialPrefills, c.LongPrefillTokenThreshold, c.MaxModelLen = 2, 5000, 4096
		}, "LongPrefillTokenThreshold"},
		{"negative interval", func(c *Config) { c.PrefillDecodeInterval = -1 }, "PrefillDecodeInterval"},
		{"negative prefill schedule interval", func(c *Config) { c.PrefillScheduleInterval = -1 }, "PrefillScheduleInterval"},
		{"negative recv interval", func(c *Config) { c.SchedulerRecvInterval = -1 }, "SchedulerRecvInterval"},
		{"recv interval with DP attention", func(c *Config) { *c = point(SGLang, 2, 2, 16, 4); c.SchedulerRecvInterval, c.Memory.Groups = 10, 2 }, "SchedulerRecvInterval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(VLLM, 2, 2, 16, 4)
			tc.set(&cfg)
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}

// TestSGLangPrefillDecodeInterval: with --prefill-decode-interval N,
// after a step with prefill chunks SGLang runs N decode rounds before it
// takes prefill work again (a chunk in progress included); with nothing
// to decode the deferred rounds are idle and cost no step. Four prompts
// of 2048 tokens over chunked_prefill_size 1024: off, the eight chunks of
// the first wave run back to back before the first decode; on, only the
// first prompt's two (nothing decodes yet), then each later prefill step
// comes exactly N decode steps after the one before.
func TestSGLangPrefillDecodeInterval(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		cfg := point(SGLang, 4, 4, 2048, 64)
		cfg.MaxNumBatchedTokens = 1024
		cfg.PrefillDecodeInterval = n
		rec := &stepLog{linear: realistic}
		r, err := Run(cfg, rec)
		require.NoError(t, err)
		assert.Equal(t, 4, r.Completed)
		before, last := 0, -1
		var gaps []int
		decoded := false
		for i, ch := range rec.chunks {
			if len(ch) == 0 {
				decoded = true
				continue
			}
			if !decoded {
				before++
			} else {
				gaps = append(gaps, i-last-1)
			}
			last = i
		}
		if n == 0 {
			assert.Equal(t, 8, before, "off: prefill first")
			assert.Empty(t, gaps)
			continue
		}
		assert.Equal(t, 2, before, "interval %d: prefill steps before the first decode", n)
		require.Len(t, gaps, 6)
		for _, g := range gaps {
			assert.Equal(t, n, g, "interval %d: decode steps between prefill steps", n)
		}
	}
}

// TestSGLangRadixAdmission: SGLang's admission counts a waiting request's
// prompt less its cached prefix (extend_input_len). Two prompts share a
// 6000-token system prompt (200 tokens each of their own, 400 out) in
// 13,000 KV slots: with the radix cache the second's extend and output
// fit beside the first in the first batch; without it its whole prompt
// does not, and it waits.
func TestSGLangRadixAdmission(t *testing.T) {
	run := func(noCache bool) []int {
		cfg := point(SGLang, 2, 2, 6200, 400)
		cfg.Memory.BlockSize = 1
		cfg.Memory.KVCapacity = 13000 * cfg.Memory.KVBytesPerToken
		cfg.ScheduleConservativeness = 1
		cfg.NoPrefixCache = noCache
		cfg.Workload.Prefix = &PrefixLoad{SystemTokens: 6000}
		rec := &stepLog{linear: realistic}
		r, err := Run(cfg, rec)
		require.NoError(t, err)
		require.Equal(t, 2, r.Completed)
		return rec.chunks[0]
	}
	assert.Equal(t, []int{6200, 200}, run(false), "cached: both in the first batch, the second its extend only")
	assert.Equal(t, []int{6200}, run(true), "no cache: the second prompt does not fit")
}

// TestPrefixPoolUnheld: the tokens a lookup finds in blocks no request
// holds (evictable) are those a grow takes out of the free blocks; blocks
// a running request holds (protected) are not.
func TestPrefixPoolUnheld(t *testing.T) {
	seg := []Segment{{ID: 7, Tokens: 64}}
	reqs := []request{{in: 80, out: 4, prefix: seg}, {in: 80, out: 4, prefix: seg}}
	p := newPrefixPool(Memory{KVBytesPerToken: 1, KVCapacity: 1 << 20, BlockSize: 16, Groups: 1}, reqs)
	require.Zero(t, p.lookup(0))
	require.True(t, p.grow(0, 80))
	assert.Equal(t, 64, p.lookup(1), "four full shared blocks")
	assert.Zero(t, p.unheld(1), "held by request 0: protected")
	p.free(0)
	assert.Equal(t, 64, p.lookup(1))
	assert.Equal(t, 64, p.unheld(1), "request 0 gone: evictable")
	free := p.usage().Total - p.usage().Used
	require.True(t, p.grow(1, 80))
	assert.Equal(t, free-1-4, p.usage().Total-p.usage().Used, "one new block, four taken off the free queue")
}

// TestSGLangRecvInterval: with --scheduler-recv-interval N SGLang's
// scheduler takes new requests only when the SchedulerRecvSkipper's count
// (1 per decode batch, 1000 per extend batch) reaches N. Request 0 is
// prefilled at step 0, so the skipper receives at step 1 and then every N
// decode steps (1, 1+N, 1+2N, ...); request 1, arriving during decode step
// j, is prefilled at the first of those after j (N = 1: at j+1). A request
// that reaches an idle engine is received at once, whatever N.
func TestSGLangRecvInterval(t *testing.T) {
	prefillStep := func(n int, arrival float64) (int, float64) {
		cfg := point(SGLang, 2, 2, 64, 200)
		cfg.SchedulerRecvInterval = n
		cfg.Workload.Trace = []TraceRequest{{Arrival: 0, InputTokens: 64, OutputTokens: 200}, {Arrival: arrival, InputTokens: 64, OutputTokens: 200}}
		rec := &stepLog{linear: realistic}
		e, r := simRun(t, cfg, rec)
		require.Equal(t, 2, r.Completed)
		for i := 1; i < len(rec.chunks); i++ {
			if len(rec.chunks[i]) > 0 {
				return i, e.reqs[1].ttft
			}
		}
		return -1, e.reqs[0].ttft
	}
	// Arrival during the decode of request 0: find its step with N = 1.
	k0, ttft0 := prefillStep(1, 0)
	require.Equal(t, -1, k0, "both prefilled in step 0")
	arrival := 20 * ttft0
	k1, _ := prefillStep(1, arrival)
	j := k1 - 1
	require.Greater(t, j, 1, "request 1 must arrive during decode")
	for _, n := range []int{4, 10, 30} {
		want := 1
		for want <= j {
			want += n
		}
		k, _ := prefillStep(n, arrival)
		assert.Equal(t, want, k, "interval %d: request 1 arrived in step %d", n, j)
		assert.Greater(t, k, j+1, "interval %d: it waits", n)
	}
	// Arrival at an idle engine (request 0 long finished): no wait.
	cfg := point(SGLang, 2, 2, 64, 2)
	cfg.Workload.Trace = []TraceRequest{{Arrival: 0, InputTokens: 64, OutputTokens: 2}, {Arrival: 10, InputTokens: 64, OutputTokens: 2}}
	var ttft [2]float64
	for i, n := range []int{1, 30} {
		cfg.SchedulerRecvInterval = n
		e, r := simRun(t, cfg, &stepLog{linear: realistic})
		require.Equal(t, 2, r.Completed)
		ttft[i] = e.reqs[1].ttft
	}
	assert.Equal(t, ttft[0], ttft[1], "idle engine: received at once")
	assert.Greater(t, ttft[0], 0.0)
}
