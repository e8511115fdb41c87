package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cuda"
)

// fakeAttention is a module with every kernel present and the H200's
// occupancy, for plans without a GPU.
func fakeAttention() *AttentionModule {
	m := &AttentionModule{SMs: 132, mla: map[[2]int]cuda.Function{}, mla2: map[[2]int]cuda.Function{}, gqa: map[[2]int]cuda.Function{},
		PerSM: map[string]int{}}
	for _, v := range mlaVariants {
		m.mla[v], m.mla2[v] = 0, 0
		m.PerSM[mlaName(v[0], v[1], 1)] = 2
		m.PerSM[mlaName(v[0], v[1], 2)] = 1
	}
	for _, st := range gqaStages {
		for _, d := range gqaHeadDims {
			m.gqa[[2]int{d, st}] = 0
			m.PerSM[gqaName(d, st)] = 2
		}
	}
	return m
}

func TestAttentionPlans(t *testing.T) {
	m := fakeAttention()
	tests := []struct {
		name                  string
		mla                   bool
		batch, heads, kv, dim int
		kvLen                 int
		o                     AttnOptions
		groups, splits, chunk int
		kernels               int
	}{
		// One sequence: splits fill 90% of the 264 block slots, at least 2 tiles each.
		{"mla b1 128k", true, 1, 8, 0, 0, 131072, AttnOptions{}, 1, 228, 576, 2},
		{"mla b1 4k", true, 1, 8, 0, 0, 4096, AttnOptions{}, 1, 64, 64, 2},
		{"mla b1 1 token", true, 1, 8, 0, 0, 1, AttnOptions{}, 1, 1, 32, 1},
		{"mla b512: no split", true, 512, 8, 0, 0, 4096, AttnOptions{}, 1, 1, 4096, 1},
		{"mla 40 heads: 3 tiles", true, 4, 40, 0, 0, 8192, AttnOptions{}, 3, 20, 416, 2},
		{"mla forced splits", true, 1, 16, 0, 0, 8192, AttnOptions{Splits: 200}, 1, 128, 64, 2},
		{"mla 128 heads, two head tiles a block", true, 32, 128, 0, 0, 4096, AttnOptions{HeadTiles: 2}, 4, 1, 4096, 1},
		{"gqa 64/4 b1 32k", false, 1, 64, 4, 128, 32768, AttnOptions{}, 4, 57, 576, 2},
		{"gqa 64/2: 2 tiles a kv head", false, 2, 64, 2, 128, 1024, AttnOptions{}, 4, 8, 128, 2},
		{"gqa 8/1 b64", false, 64, 8, 1, 64, 8192, AttnOptions{}, 1, 4, 2048, 2},
		{"gqa one split", false, 3, 16, 2, 64, 3000, AttnOptions{Splits: 1}, 2, 1, 3008, 1},
	}
	for _, tt := range tests {
		var p attnPlan
		var err error
		if tt.mla {
			p, err = m.PlanMLA(tt.batch, tt.heads, tt.kvLen, tt.o)
		} else {
			p, err = m.PlanGQA(tt.batch, tt.heads, tt.kv, tt.dim, tt.kvLen, tt.o)
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, [4]int{tt.groups, tt.splits, tt.chunk, tt.kernels}, [4]int{p.Groups, p.Splits, p.Chunk, p.Kernels()}, tt.name)
		assert.GreaterOrEqual(t, p.Splits*p.Chunk, tt.kvLen, tt.name)
		assert.Less(t, (p.Splits-1)*p.Chunk, tt.kvLen, "%s: no empty split", tt.name)
		assert.LessOrEqual(t, p.Splits, maxSplits)
	}
	p, err := m.PlanMLA(2, 16, 1000, AttnOptions{Paged: true, Splits: 4})
	require.NoError(t, err)
	assert.Equal(t, 16, p.MaxPages)
	assert.Equal(t, int64(2*1000*576*2), p.KVBytes())
	assert.Equal(t, int64(2*4*16*512*4), p.PartialBytes())
	assert.Equal(t, int64(2*4*16*4), p.LSEBytes())
	assert.InDelta(t, 1/math.Sqrt(192), p.Scale, 1e-15)
	g, err := m.PlanGQA(2, 64, 8, 64, 1000, AttnOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(2*1000*2*8*64*2), g.KVBytes())

	for _, bad := range []struct {
		name string
		err  func() error
		want string
	}{
		{"heads over kv", func() error { _, err := m.PlanGQA(1, 10, 4, 128, 10, AttnOptions{}); return err }, "want a multiple"},
		{"head dim", func() error { _, err := m.PlanGQA(1, 8, 1, 96, 10, AttnOptions{}); return err }, "head_dim 96"},
		{"stages", func() error { _, err := m.PlanMLA(1, 8, 10, AttnOptions{Stages: 5}); return err }, "no MLA kernel of 32 tokens, 5 stages and 1 head tiles"},
		{"empty", func() error { _, err := m.PlanMLA(0, 8, 10, AttnOptions{}); return err }, "want positive"},
	} {
		assert.ErrorContains(t, bad.err(), bad.want, bad.name)
	}
	_, err = p.Args(attnBuffers{Q: 1, K: 1, Lens: 1, Out: 1, Partial: 1, LSE: 1})
	assert.ErrorContains(t, err, "paged plans need a block table")
	_, err = p.Args(attnBuffers{Q: 1, K: 1, Lens: 1, Out: 1, Table: 1})
	assert.ErrorContains(t, err, "4 splits need the partial and lse buffers")
}

// TestReferenceAttention checks the host references on cases with known
// answers: identical cache rows give that row's values, a paged cache reads
// the same tokens as a contiguous one, and GQA's query head h reads kv head
// h / group.
func TestReferenceAttention(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lens := []int{3, 130}
	flat := randomKVCache(rng, MLADim, lens, false)
	same := randomBF16(rng, MLADim)
	for b, l := range lens {
		for tk := 0; tk < l; tk++ {
			copy(flat.RowOf(b, tk), same)
		}
	}
	q := randomBF16(rng, 2*4*MLADim)
	out, err := referenceMLA(q, 4, flat, 0.07)
	require.NoError(t, err)
	for _, row := range out {
		for c, v := range row {
			assert.InDelta(t, float64(same[c].Float32()), v, 1e-12)
		}
	}
	// Paged and contiguous copies of one cache agree.
	paged := randomKVCache(rng, MLADim, lens, true)
	contig := &KVCache{Row: MLADim, Lens: lens, Stride: 130, Data: make([]BF16, 2*130*MLADim)}
	for b, l := range lens {
		for tk := 0; tk < l; tk++ {
			copy(contig.RowOf(b, tk), paged.RowOf(b, tk))
		}
	}
	a, err := referenceMLA(q, 4, paged, 0.07)
	require.NoError(t, err)
	c, err := referenceMLA(q, 4, contig, 0.07)
	require.NoError(t, err)
	assert.Equal(t, a, c)
	assert.NotEqual(t, a[0], a[1])
	// GQA: one token, so the output is that token's V row of the head's kv head.
	k := randomKVCache(rng, 2*64, []int{1}, true)
	v := &KVCache{Row: k.Row, Lens: k.Lens, Table: k.Table, Data: randomBF16(rng, len(k.Data))}
	qg := randomBF16(rng, 8*64)
	og, err := referenceGQA(qg, 8, 2, 64, k, v, 0.125)
	require.NoError(t, err)
	for h := 0; h < 8; h++ {
		for cc := 0; cc < 64; cc++ {
			assert.InDelta(t, float64(v.RowOf(0, 0)[(h/4)*64+cc].Float32()), og[h][cc], 1e-12)
		}
	}
	_, err = referenceGQA(qg, 8, 3, 64, k, v, 0.125)
	assert.Error(t, err)
}

func TestMLAModuleGEMMShapes(t *testing.T) {
	g := mlaModuleGEMMs(deepSeekV3MLA, 4, 8)
	require.Len(t, g, 5)
	assert.Equal(t, GEMM{Name: "fused_qkv_a_proj", M: 4, N: 2112, K: 7168}, g[0])
	assert.Equal(t, GEMM{Name: "q_b_proj", M: 4, N: 8 * 192, K: 1536, LDX: 2112}, g[1])
	assert.Equal(t, GEMM{Name: "W_UK (q absorb)", M: 4, N: 512, K: 128, WeightKN: true, LDX: 8 * 192, LDY: 8 * 576, Batch: 8,
		StrideX: 192, StrideW: 128 * 512, StrideY: 576}, g[2])
	assert.Equal(t, GEMM{Name: "W_UV (v unabsorb)", M: 4, N: 128, K: 512, WeightKN: true, LDX: 8 * 512, LDY: 8 * 128, Batch: 8,
		StrideX: 512, StrideW: 512 * 128, StrideY: 128}, g[3])
	assert.Equal(t, GEMM{Name: "o_proj", M: 4, N: 7168, K: 8 * 128}, g[4])
	var w int64
	for _, x := range g {
		w += x.WeightElems()
	}
	// The layer's bf16 weights at 8 heads: 2112x7168 + 1536x1536 + 2 x 8x128x512 + 7168x1024.
	assert.Equal(t, int64(2112*7168+1536*1536+2*8*128*512+7168*1024), w)
}
