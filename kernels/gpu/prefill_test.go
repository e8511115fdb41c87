package gpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cuda"
)

func TestPlanPrefill(t *testing.T) {
	// A module whose prefill kernels are all "loaded" (no GPU needed to
	// plan).
	m := &AttentionModule{prefill: map[[3]int]cuda.Function{}}
	for _, st := range prefillStages {
		for _, d := range prefillDims {
			m.prefill[[3]int{d[0], d[1], st}] = 1
		}
	}
	ok := PrefillCase{Batch: 1, Chunk: 1000, Prefix: 0, Heads: 64, KVHeads: 8, QKDim: 128, VDim: 128, Paged: true}
	tests := []struct {
		name string
		edit func(*PrefillCase)
		want string
	}{
		{"gqa d128, paged", func(*PrefillCase) {}, ""},
		{"mla q192 v128, 3 stages", func(c *PrefillCase) { c.QKDim, c.VDim, c.KVHeads, c.Stages = 192, 128, 64, 3 }, ""},
		{"window", func(c *PrefillCase) { c.QKDim, c.VDim, c.Window = 64, 64, 128 }, ""},
		{"no chunk", func(c *PrefillCase) { c.Chunk = 0 }, "want positive sizes"},
		{"negative prefix", func(c *PrefillCase) { c.Prefix = -1 }, "prefix and window >= 0"},
		{"heads not a multiple", func(c *PrefillCase) { c.KVHeads = 7 }, "want a multiple"},
		{"dims not compiled", func(c *PrefillCase) { c.QKDim, c.VDim = 96, 96 }, "q/k dim 96, v dim 96"},
		{"stages not compiled", func(c *PrefillCase) { c.Stages = 5 }, "no kernel moecast_prefill_q128_v128_s5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			p, err := m.PlanPrefill(c)
			if tt.want != "" {
				assert.ErrorContains(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, ceilDiv(c.Chunk, prefillRows)*c.Heads, p.Blocks())
			assert.Equal(t, ceilDiv(c.KVLen(), pageSize), p.MaxPages)
			assert.Equal(t, prefillSmem(c.QKDim, c.VDim, max(c.Stages, defaultPrefillStages)), p.Smem)
		})
	}
}

// Pairs is the causal count of (query, key) pairs: by brute force over
// every query and key.
func TestPrefillPairs(t *testing.T) {
	for _, c := range []PrefillCase{
		{Batch: 1, Chunk: 5, Prefix: 0}, {Batch: 2, Chunk: 7, Prefix: 11}, {Batch: 1, Chunk: 9, Prefix: 3, Window: 4},
		{Batch: 1, Chunk: 3, Prefix: 100, Window: 8},
	} {
		want := 0
		for i := range c.Chunk {
			for j := range c.KVLen() {
				p := c.Prefix + i
				if j <= p && (c.Window == 0 || j > p-c.Window) {
					want++
				}
			}
		}
		assert.Equal(t, float64(want*c.Batch), c.Pairs(), "%+v", c)
	}
}

// The reference's first query of a chunk with no prefix sees only its own
// key: its output is that key's value row exactly; a query with a window
// of 1 likewise sees only itself.
func TestReferencePrefillHand(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []PrefillCase{
		{Batch: 1, Chunk: 3, Heads: 2, KVHeads: 1, QKDim: 64, VDim: 64},
		{Batch: 1, Chunk: 2, Prefix: 5, Heads: 2, KVHeads: 2, QKDim: 192, VDim: 128, Window: 1},
	} {
		lens := []int{c.KVLen()}
		k := randomKVCache(rng, c.KVHeads*c.QKDim, lens, false)
		v := &KVCache{Row: c.KVHeads * c.VDim, Lens: lens, Stride: k.Stride, Data: randomBF16(rng, c.KVLen()*c.KVHeads*c.VDim)}
		q := randomBF16(rng, c.Chunk*c.Heads*c.QKDim)
		out, err := referencePrefill(c, q, k, v, 0.1)
		require.NoError(t, err)
		require.Len(t, out, c.Chunk*c.Heads)
		g := c.Heads / c.KVHeads
		for h := range c.Heads {
			want := toF64(v.RowOf(0, c.Prefix)[h/g*c.VDim : (h/g+1)*c.VDim])
			assert.InDeltaSlice(t, want, out[h], 1e-12, "query 0 head %d", h)
		}
		c.Chunk++
		_, err = referencePrefill(c, q, k, v, 0.1)
		assert.Error(t, err, "shapes disagree")
	}
}
