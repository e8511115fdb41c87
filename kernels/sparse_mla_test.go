package kernels

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

// glm5Sparse is GLM-5's sparse MLA at TP8 on one rank: 8 q heads, top-2048,
// MQA 576/512.
func glm5Sparse(tokens int) SparseMLAShape {
	return SparseMLAShape{Tokens: tokens, Seqs: 1, Heads: 8, TopK: 2048, QKDim: 576, VDim: 512}
}

// TestSparseMLAShape: heads pad to the kernel's tile per architecture; a
// query costs the same whatever its head count up to the tile (8 and 64
// heads run the same CTAs); the CTAs run in waves of one per SM, so 132
// tokens on an H200 cost one wave and 133 two; no tile (sm_120, sm_80):
// zero, the caller keeps its other path.
func TestSparseMLAShape(t *testing.T) {
	assert.Equal(t, 64, SparseMLAPaddedHeads(8, SM90))
	assert.Equal(t, 64, SparseMLAPaddedHeads(64, SM90))
	assert.Equal(t, 128, SparseMLAPaddedHeads(65, SM90))
	assert.Equal(t, 128, SparseMLAPaddedHeads(8, SM100))
	assert.Equal(t, 8, SparseMLAPaddedHeads(8, SM120))
	h200, ok := LookupGPU("h200-sxm")
	require.True(t, ok)
	c := &Costs{GPU: h200}
	eight := c.SparseMLA(glm5Sparse(132))
	s := glm5Sparse(132)
	s.Heads = 64
	assert.Equal(t, eight.Time, c.SparseMLA(s).Time, "8 heads are padded to the 64-head tile")
	s.Heads = 65
	assert.Greater(t, float64(c.SparseMLA(s).Time), 1.9*float64(eight.Time-StreamKernelLatency), "65 heads take two tiles")
	one := c.SparseMLA(glm5Sparse(1))
	assert.Equal(t, one.Time, eight.Time, "up to one CTA per SM: one wave")
	two := c.SparseMLA(glm5Sparse(133))
	assert.InDelta(t, 2*float64(one.Time-StreamKernelLatency), float64(two.Time-StreamKernelLatency), 1e-12)
	// one CTA: 64 x 2048 x 1088 x 2 FLOPs at 1/132 of the 989 TFLOPS peak x EffSparseMLASM90
	assert.InEpsilon(t, 2*64*2048*1088/(989e12/132*EffSparseMLASM90)+float64(StreamKernelLatency), float64(one.Time), 1e-3)
	a100, ok := LookupGPU("a100-sxm")
	require.True(t, ok)
	assert.Zero(t, (&Costs{GPU: a100}).SparseMLA(glm5Sparse(64)).Time)
	assert.Zero(t, c.SparseMLA(glm5Sparse(0)).Time)
}

// TestSparseMLAMeasured: EffSparseMLASM90 is the median per-SM efficiency
// of aiconfigurator's kernel-level H200 rows of flash_mla_sparse_fwd with
// GLM-5's dimensions at two or more full waves
// (testdata/perfdb_flashmla_sparse_h200.csv), and SparseMLA prices every
// row within 5%, from 4 to 16,384 query tokens, with the waves the rows
// show (128 tokens one wave, 256 two).
func TestSparseMLAMeasured(t *testing.T) {
	rows := readTestCSV(t, "perfdb_flashmla_sparse_h200.csv")
	require.Greater(t, len(rows), 9)
	h200, ok := LookupGPU("h200-sxm")
	require.True(t, ok)
	c := &Costs{GPU: h200}
	perCTA := 2.0 * 64 * 2048 * 1088
	var effs []float64
	for _, r := range rows {
		heads, tokens, ms := r.atoi(t, 1), r.atoi(t, 2), r.float(t, 3)
		s := glm5Sparse(tokens)
		s.Heads = heads
		got := c.SparseMLA(s).Time
		want := unit.Seconds(ms * 1e-3)
		assert.InEpsilon(t, float64(want), float64(got), 0.05, "row %d: %d tokens: %v measured, %v priced", r.line, tokens, want, got)
		if waves := math.Ceil(float64(tokens) / 132); waves >= 2 {
			perWave := (float64(want) - float64(StreamKernelLatency)) / waves
			effs = append(effs, perCTA/(perWave*989.4e12/132))
		}
	}
	require.Len(t, effs, 7)
	sort.Float64s(effs)
	assert.InDelta(t, effs[len(effs)/2], EffSparseMLASM90, 0.0005)
}
