package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/serve"
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

// TestSpecPrepBubbleMechanism: the GLM-5 corpus scenario runs vLLM's
// February 2026 nightly (engine_version 0.16.0.dev) with its MTP draft, so
// its decode steps' host work hides behind the draft passes alone
// (spec-prep-bubble on by default): the draft share is the MTP pass of one
// layer and the lm_head against 78 layers, 1-10% of a step. Off, or at the
// newest version, or without the draft: no bubble.
func TestSpecPrepBubbleMechanism(t *testing.T) {
	s, err := Load(glm5Corpus)
	require.NoError(t, err)
	require.Equal(t, "0.16.0.dev", s.Serving.EngineVersion)
	p := ServePoint{Concurrency: 4}
	conf := func(s *Scenario) serve.Config {
		t.Helper()
		sm, err := s.Sim()
		require.NoError(t, err)
		c, err := s.ServeConfig(sm, p)
		require.NoError(t, err)
		return c
	}
	c := conf(s)
	t.Logf("draft share %.4f", c.Spec.DraftShare)
	assert.True(t, c.Spec.PrepBubble)
	assert.Greater(t, c.Spec.DraftShare, 0.01)
	assert.Less(t, c.Spec.DraftShare, 0.10)

	require.NoError(t, s.SetMechanism("spec-prep-bubble", false))
	c = conf(s)
	assert.False(t, c.Spec.PrepBubble)
	assert.Zero(t, c.Spec.DraftShare)
	require.NoError(t, s.SetMechanism("spec-prep-bubble", true))
	assert.True(t, conf(s).Spec.PrepBubble)

	require.NoError(t, s.SetMechanism("speculative", false))
	assert.False(t, conf(s).Spec.PrepBubble)

	x, err := OpenWith(glm5Corpus, []Override{{Key: "runtime.engine_version", Value: "0.19.0"}})
	require.NoError(t, err)
	assert.False(t, conf(x).Spec.PrepBubble)
}
