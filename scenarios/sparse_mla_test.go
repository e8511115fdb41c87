package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/sim"
)

const glm5Corpus = "../validate/corpus/inferencex/glm-5-tp8.toml"

// TestSparseMLAMechanism: GLM-5 under vLLM on H200 with a bf16 KV cache
// runs its DSA layers as FlashMLA sparse MQA (sparse-mla on by default):
// an 8k-token prefill chunk has the sparse op and no un-absorbed prefill
// attention, and costs more than with the mechanism off (8 heads padded to
// 64 over 2,048 keys per query); a decode step pays the sparse kernel's
// one-CTA-per-query wave. Off brings the dense-MLA layout back; SGLang or
// an fp8 KV cache leave it off.
func TestSparseMLAMechanism(t *testing.T) {
	s, err := Load(glm5Corpus)
	require.NoError(t, err)
	require.True(t, s.Config.SparseMLA)
	chunk := []sim.Seq{{Query: 8192, Context: 8192, Prefill: true}}
	dec := []sim.Seq{{Query: 1, Context: 16384}, {Query: 1, Context: 16384}}
	step := func(seqs []sim.Seq) (unit.Seconds, []string) { return moeLayerStep(t, s, seqs) }
	has := hasOpNamed
	onPre, names := step(chunk)
	assert.True(t, has(names, "sparse mla attention"))
	assert.False(t, has(names, "un-absorbed"))
	onDec, _ := step(dec)

	require.NoError(t, s.SetMechanism("sparse-mla", false))
	assert.False(t, s.Config.SparseMLA)
	offPre, names := step(chunk)
	assert.False(t, has(names, "sparse mla attention"))
	assert.True(t, has(names, "mla prefill attention (un-absorbed)"))
	offDec, _ := step(dec)
	// 75 MoE layers x 8,192 queries in 63 waves of ~58.8 us: about 0.28 s more
	assert.Greater(t, float64(onPre-offPre), 0.15)
	assert.Greater(t, float64(onDec), float64(offDec))

	require.NoError(t, s.SetMechanism("sparse-mla", true))
	assert.True(t, s.Config.SparseMLA)
	back, _ := step(chunk)
	assert.Equal(t, onPre, back)

	// SGLang's NSA backend and vLLM's fp8_ds_mla cache run other kernels
	for _, o := range []Override{{Key: "runtime.engine", Value: "sglang"}, {Key: "model.kv_cache", Value: "fp8"}} {
		x, err := OpenWith(glm5Corpus, []Override{o})
		require.NoError(t, err, o.Key)
		assert.False(t, x.Config.SparseMLA, o.Key)
		require.NoError(t, x.SetMechanism("sparse-mla", true))
		assert.False(t, x.Config.SparseMLA, o.Key)
	}
}

// moeLayerStep prices seqs on s's simulator and names the ops of its moe
// layers (ExplainBatch), for tests that check which attention path a
// step takes.
func moeLayerStep(t *testing.T, s *Scenario, seqs []sim.Seq) (unit.Seconds, []string) {
	t.Helper()
	sm, err := s.Sim()
	require.NoError(t, err)
	var r sim.BatchResult
	require.NoError(t, sm.StepBatch(seqs, &r))
	ops, err := sm.ExplainBatch(seqs)
	require.NoError(t, err)
	var names []string
	for _, o := range ops {
		if o.Layer == "moe" {
			names = append(names, o.Name)
		}
	}
	return r.Step.Time, names
}

// hasOpNamed reports whether one of names contains sub.
func hasOpNamed(names []string, sub string) bool {
	for _, n := range names {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}
