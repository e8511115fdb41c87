package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// prefillCount wraps a coster and counts the prefill tokens it prices.
type prefillCount struct {
	StepCoster
	tokens int
}

func (p *prefillCount) StepCost(seqs []Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	for _, s := range seqs {
		if s.Prefill {
			p.tokens += s.Query
		}
	}
	return p.StepCoster.StepCost(seqs)
}

// TestFullISLAdmission: two 4000-token prompts, a 2048-token budget and a
// cache of 5000 tokens. Admitted by its first chunk, the second request
// enters while the first is still prefilling, and its later chunks run
// the cache dry: a preemption. With vLLM's scheduler_reserve_full_isl it
// waits until its whole prompt fits, and nothing is preempted; every
// request still finishes with its output.
func TestFullISLAdmission(t *testing.T) {
	for _, tc := range []struct {
		full    bool
		preempt bool
	}{{false, true}, {true, false}} {
		const in, out = 4000, 8
		cfg := point(VLLM, 2, 2, in, out)
		cfg.MaxNumBatchedTokens = 2048
		cfg.Memory.KVCapacity = unit.Bytes(5000) * cfg.Memory.KVBytesPerToken
		cfg.ReserveFullISL = tc.full
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		assert.Equal(t, tc.preempt, r.Preemptions > 0, "full ISL %v: %d preemptions", tc.full, r.Preemptions)
		assert.Equal(t, 2, r.Completed)
		assert.Equal(t, 2*out, r.TotalOutputTokens)
	}
	// SGLang's admission is its own (new-token ratio): the setting is
	// vLLM's and changes nothing there.
	cfg := point(SGLang, 2, 2, 4000, 8)
	cfg.Memory.KVCapacity = unit.Bytes(5000) * cfg.Memory.KVBytesPerToken
	want, err := Run(cfg, realistic)
	require.NoError(t, err)
	cfg.ReserveFullISL = true
	got, err := Run(cfg, realistic)
	require.NoError(t, err)
	assert.Equal(t, want, got, "SGLang")
}

// TestFullISLFitsMatchesGrow: kvCache.fits says what grow would do, for
// both caches, on a fresh request, one holding blocks, and one whose
// prompt hits blocks nobody holds (they count as taken from the free
// ones).
func TestFullISLFitsMatchesGrow(t *testing.T) {
	m := Memory{KVBytesPerToken: 1, BlockSize: 16, KVCapacity: 10 * 16, Groups: 1}
	for _, prefix := range []bool{false, true} {
		reqs := make([]request, 3)
		for i := range reqs {
			reqs[i] = request{in: 64, out: 8}
			if prefix {
				reqs[i].prefix = []Segment{{ID: 7, Tokens: 72}}
			}
		}
		var kv kvCache = newBlockPool(m, reqs)
		if prefix {
			kv = newPrefixPool(m, reqs)
		}
		for _, slots := range []int{1, 160, 161} {
			kv.lookup(0)
			f := kv.fits(0, slots)
			assert.Equal(t, slots <= 160, f, "prefix %v: fresh request, %d slots", prefix, slots)
		}
		kv.lookup(0)
		require.True(t, kv.grow(0, 64)) // 4 blocks held, 6 free
		kv.free(0)                      // with prefix caching, 4 cached blocks nobody holds
		n := kv.lookup(1)
		for _, slots := range []int{64, 160, 161} {
			f := kv.fits(1, slots)
			g := kv.grow(1, slots)
			assert.Equal(t, g, f, "prefix %v: hits %d, %d slots", prefix, n, slots)
			if g {
				kv.free(1)
				kv.lookup(1)
			}
		}
	}
}

// TestPreemptRecovery: a preempted request's re-admission with vLLM's
// prefix cache over its own blocks recomputes only what was evicted, so
// fewer prefill tokens are priced than when the whole sequence is
// recomputed; without preemption the two runs are the same.
func TestPreemptRecovery(t *testing.T) {
	const c, in, out = 16, 200, 57
	cfg := point(VLLM, c, 2*c, in, out)
	bs := cfg.Memory.BlockSize
	blocks := c * ceilDiv(in+out-1, bs)
	run := func(capacity int, recover bool) (*Result, int) {
		cfg.Memory.KVCapacity = unit.Bytes(capacity*bs) * cfg.Memory.KVBytesPerToken
		cfg.RecoverPreempted = recover
		pc := &prefillCount{StepCoster: realistic}
		r, err := Run(cfg, pc)
		require.NoError(t, err)
		return r, pc.tokens
	}
	off, offTok := run(blocks-8, false)
	on, onTok := run(blocks-8, true)
	require.Positive(t, off.Preemptions)
	require.Positive(t, on.Preemptions)
	assert.Greater(t, offTok, 2*c*in, "recompute without recovery")
	assert.Less(t, onTok, offTok, "recovered blocks are not recomputed")
	assert.GreaterOrEqual(t, onTok, 2*c*in, "every prompt is computed once")
	assert.Equal(t, 2*c*out, on.TotalOutputTokens)

	a, aTok := run(blocks, false)
	b, bTok := run(blocks, true)
	assert.Zero(t, a.Preemptions)
	assert.Equal(t, aTok, bTok)
	assert.Equal(t, a.TTFT, b.TTFT)
	assert.Equal(t, a.TPOT, b.TPOT)
}

func TestReserveFullISLDefault(t *testing.T) {
	for _, tc := range []struct {
		e    Engine
		v    string
		want bool
	}{
		{VLLM, "", true}, {VLLM, "0.19.0", true}, {VLLM, "v0.20.1", true}, {VLLM, "1.0", true}, {VLLM, "nightly", true},
		{VLLM, "0.18.1", false}, {VLLM, "0.12.0", false},
		{SGLang, "", false}, {SGLang, "0.5.10", false},
	} {
		assert.Equal(t, tc.want, ReserveFullISLDefault(tc.e, tc.v), "%s %q", tc.e, tc.v)
	}
}

// TestRecoveryQueuePositions: vLLM's free queue by position. A request
// holding 4 blocks is preempted while 3 never-used blocks lead the queue;
// its blocks join behind them, last block first. Taking 5 fresh blocks
// consumes the 3 and its last 2 blocks, leaving its first 2 to be found;
// a lookup never returns the whole sequence (the last token is
// recomputed), the cached blocks count among the free ones, and without
// recovery nothing is found.
func TestRecoveryQueuePositions(t *testing.T) {
	m := Memory{KVBytesPerToken: 1, BlockSize: 16, KVCapacity: 10 * 16, Groups: 1}
	for _, recover := range []bool{false, true} {
		reqs := []request{{in: 64, out: 8}, {in: 48, out: 8}, {in: 80, out: 8}}
		p := newBlockPool(m, reqs).recovering(recover)
		require.True(t, p.grow(0, 64))
		require.True(t, p.grow(1, 48))
		p.preempt(0)
		reqs[0].computed = 0
		assert.Equal(t, 7, p.usage().Total-p.usage().Used, "free blocks")
		want := func(n int) int {
			if recover {
				return n
			}
			return 0
		}
		assert.Equal(t, want(48), p.lookup(0), "recover %v: 4 blocks cached, at most in-1 tokens", recover)
		assert.Equal(t, want(48), p.unheld(0))
		require.True(t, p.grow(2, 80))
		assert.Equal(t, want(32), p.lookup(0), "recover %v: the first 2 blocks survive", recover)
		p.free(1) // 3 more free blocks, behind its own in the queue
		assert.Equal(t, want(32), p.lookup(0))
		require.True(t, p.grow(0, 64), "re-admission takes its 2 cached and 2 fresh blocks")
		assert.Equal(t, 1, p.usage().Total-p.usage().Used)
		p.free(0)
		assert.Equal(t, 0, p.lookup(0), "recover %v: a freed (not preempted) request's run is gone", recover)
	}
}
