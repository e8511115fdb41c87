package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/sim"
)

// TestIndexerTopKMechanism: GLM-5 under vLLM on H200 prices its DSA
// layers' decode top-k as its own op (indexer-topk on by default): a
// decode step of two sequences at 16k context has the op and costs more
// than with the mechanism off, by 79 DSA layers (75 MoE, 3 dense and the
// MTP layer) of one wave of rows over 16,384 keys, 15.6 us each; at 1k context every key is kept and the step costs the same either
// way; a prefill chunk alone has no decode rows. Off and on again
// restores the step exactly.
func TestIndexerTopKMechanism(t *testing.T) {
	s, err := Load(glm5Corpus)
	require.NoError(t, err)
	require.True(t, s.Config.IndexerTopK)
	long := []sim.Seq{{Query: 2, Context: 16384}, {Query: 2, Context: 16384}}
	short := []sim.Seq{{Query: 2, Context: 1024}, {Query: 2, Context: 1024}}
	chunk := []sim.Seq{{Query: 8192, Context: 8192, Prefill: true}}
	onLong, names := moeLayerStep(t, s, long)
	assert.True(t, hasOpNamed(names, "indexer top-k (decode rows)"))
	onShort, _ := moeLayerStep(t, s, short)
	onChunk, _ := moeLayerStep(t, s, chunk)

	require.NoError(t, s.SetMechanism("indexer-topk", false))
	assert.False(t, s.Config.IndexerTopK)
	offLong, names := moeLayerStep(t, s, long)
	assert.False(t, hasOpNamed(names, "indexer top-k"))
	offShort, _ := moeLayerStep(t, s, short)
	offChunk, _ := moeLayerStep(t, s, chunk)
	assert.InDelta(t, 79*15.59e-6, float64(onLong-offLong), 0.02e-3)
	assert.Equal(t, offShort, onShort)
	assert.Equal(t, offChunk, onChunk)

	require.NoError(t, s.SetMechanism("indexer-topk", true))
	back, _ := moeLayerStep(t, s, long)
	assert.Equal(t, onLong, back)
}
