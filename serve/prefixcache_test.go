package serve

import (
	"testing"

	"github.com/moecast/moecast/internal/unit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Prefix caching on a load that shares nothing (hit rate 0) runs exactly
// as without prefix caching: the same blocks allocated and freed, the
// same steps.
func TestPrefixHitRateZeroEqualsNoCache(t *testing.T) {
	open := point(VLLM, 0, 300, 2000, 200)
	open.Workload.RequestRate, open.Workload.RangeRatio = 4, 0.5
	spec := point(VLLM, 32, 128, 1500, 300)
	spec.Spec = Spec{DraftTokens: 3, Acceptance: []float64{0.7}, Lookahead: 3}
	tight := point(VLLM, 16, 32, 200, 57)
	tight.Memory.KVCapacity = unit.Bytes(16*ceilDiv(256, 16)*16) * tight.Memory.KVBytesPerToken
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"vllm closed", point(VLLM, 64, 256, 1024, 128)},
		{"sglang closed", point(SGLang, 64, 256, 1024, 128)},
		{"vllm open ranged", open},
		{"vllm speculative", spec},
		{"vllm KV exactly full", tight},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Workload.Prefix = &PrefixLoad{HitRate: 0}
			with, err := Run(cfg, realistic)
			require.NoError(t, err)
			assert.True(t, with.PrefixCache)
			assert.Zero(t, with.PrefixHitRate)
			cfg.NoPrefixCache = true
			without, err := Run(cfg, realistic)
			require.NoError(t, err)
			assert.False(t, without.PrefixCache)
			with.PrefixCache = false
			assert.Equal(t, without, with)
		})
	}
}

// A shared system prompt or a fixed shared fraction is found cached by
// every request after the first: hit blocks = floor(min(shared, in-1) /
// block) of each later request.
func TestPrefixSharedHitRate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		e        Engine
		prefix   PrefixLoad
		in, n, c int
		shared   int // tokens each later request should find
	}{
		{"system prompt 512", VLLM, PrefixLoad{SystemTokens: 512}, 1024, 200, 32, 512},
		{"system prompt 500 (partial block)", VLLM, PrefixLoad{SystemTokens: 500}, 1024, 200, 32, 496},
		{"system prompt longer than prompt", VLLM, PrefixLoad{SystemTokens: 4000}, 1024, 100, 8, 1008},
		{"hit rate 0.5", VLLM, PrefixLoad{HitRate: 0.5}, 1000, 200, 32, 496},
		{"hit rate 0.9", VLLM, PrefixLoad{HitRate: 0.9}, 2048, 100, 16, 1840},
		{"sglang system prompt", SGLang, PrefixLoad{SystemTokens: 500}, 1024, 200, 32, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(tc.e, tc.c, tc.n, tc.in, 64)
			p := tc.prefix
			cfg.Workload.Prefix = &p
			r, err := Run(cfg, realistic)
			require.NoError(t, err)
			require.True(t, r.PrefixCache)
			want := float64((tc.n-1)*tc.shared) / float64(tc.n*tc.in)
			assert.InDelta(t, want, r.PrefixHitRate, 1e-12)

			cfg.NoPrefixCache = true
			off, err := Run(cfg, realistic)
			require.NoError(t, err)
			assert.Less(t, float64(r.TTFT.Mean), float64(off.TTFT.Mean), "cached prefixes shorten prefills")
		})
	}
}

// Mooncake hash IDs: requests sharing leading hash IDs share those blocks
// of 512 tokens (the last cut to the prompt).
func TestPrefixTraceHashIDs(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  [][]int64
		in   []int
		hit  int // tokens found over the run
	}{
		{"same prompt", [][]int64{{1, 2}, {1, 2}}, []int{1024, 1024}, 1008},
		{"first block shared", [][]int64{{1, 2}, {1, 3}}, []int{1024, 1024}, 512},
		{"nothing shared", [][]int64{{1, 2}, {4, 2}}, []int{1024, 1024}, 0},
		{"shorter last block", [][]int64{{7, 8}, {7, 8, 9}}, []int{700, 1300}, 688},
		{"no hash ids", [][]int64{nil, {1}}, []int{100, 100}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := make([]TraceRequest, len(tc.ids))
			total := 0
			for i := range tr {
				tr[i] = TraceRequest{Arrival: float64(i) * 100, InputTokens: tc.in[i], OutputTokens: 10, HashIDs: tc.ids[i]}
				total += tc.in[i]
			}
			cfg := replay(tr)
			r, err := Run(cfg, realistic)
			require.NoError(t, err)
			assert.True(t, r.PrefixCache)
			assert.InDelta(t, float64(tc.hit)/float64(total), r.PrefixHitRate, 1e-12)
		})
	}
}

// The pool's eviction: freed blocks stay cached until allocation takes
// them from the free queue's head, a freed request's tail first.
func TestPrefixPoolLRU(t *testing.T) {
	seg := func(id uint64, n int) []Segment { return []Segment{{ID: id, Tokens: n}} }
	reqs := []request{
		{in: 4, out: 1, prefix: seg(1, 5)}, // A: 4 blocks of doc 1
		{in: 4, out: 1, prefix: seg(2, 5)}, // B: 4 blocks of doc 2
		{in: 4, out: 1, prefix: seg(1, 5)}, // C: doc 1 again
	}
	p := newPrefixPool(Memory{KVBytesPerToken: 1, KVCapacity: 6, BlockSize: 1, Groups: 1}, reqs)
	run := func(r int32) int {
		hit := p.lookup(r)
		require.True(t, p.grow(r, int(reqs[r].in)))
		reqs[r].computed = reqs[r].in
		reqs[r].gen = reqs[r].out
		p.free(r)
		return hit
	}
	assert.Equal(t, 0, run(0))
	assert.Equal(t, 0, p.usage().Used, "freed blocks are free (but cached)")
	// B takes the 2 never-used blocks, then 2 of A's from the LRU head:
	// A's tail (freed first) is evicted before its head.
	assert.Equal(t, 0, run(1))
	assert.Equal(t, 2, run(2), "A's 2 leading blocks are still cached")
	u := p.usage()
	assert.Equal(t, 6, u.Total)
	assert.Equal(t, 12, u.Queries)
	assert.Equal(t, 2, u.Hits)

	// Too few free blocks: grow reports false and changes nothing.
	q := []request{{in: 7, out: 1, prefix: seg(3, 8)}}
	p2 := newPrefixPool(Memory{KVBytesPerToken: 1, KVCapacity: 6, BlockSize: 1, Groups: 1}, q)
	assert.Zero(t, p2.lookup(0))
	assert.False(t, p2.grow(0, 7))
	assert.Equal(t, 0, p2.usage().Used)
	assert.True(t, p2.grow(0, 6))
	assert.Equal(t, 6, p2.usage().Used)
	assert.Equal(t, 6, p2.usage().Peak)
}

// Models with per-request fixed state (Memory.SeqBlocks) too: prefix
// caching over a load that shares nothing runs as without it.
func TestPrefixSeqBlocksHitRateZero(t *testing.T) {
	cfg := point(VLLM, 16, 32, 200, 57)
	cfg.Memory.SeqBlocks = 3
	cfg.Memory.KVCapacity = unit.Bytes(16*(ceilDiv(256, 16)+3)*16) * cfg.Memory.KVBytesPerToken
	cfg.Workload.Prefix = &PrefixLoad{}
	with, err := Run(cfg, realistic)
	require.NoError(t, err)
	cfg.NoPrefixCache = true
	without, err := Run(cfg, realistic)
	require.NoError(t, err)
	with.PrefixCache = false
	assert.Equal(t, without, with)
}
