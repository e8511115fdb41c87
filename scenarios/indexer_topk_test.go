package scenarios

import (
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
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

// memoryOf is the scenario's per-GPU memory picture at one sequence.
func memoryOf(t *testing.T, s *Scenario) sim.Memory {
	t.Helper()
	sm, err := s.Sim()
	require.NoError(t, err)
	pt, err := sm.Step(1, 1024)
	require.NoError(t, err)
	return pt.Memory
}

// TestProfileMechanisms: the GLM-5 corpus scenario (vLLM 0.16.0.dev with
// its MTP draft, max_num_seqs 1024, max_model_len 202,752) profiles its
// dummy sampler through the native top-k/top-p sort and the rejection
// sampler (profile-sampler-sort: 12.5 fp32 copies of 1024 rows x 154,880
// logits at the peak against 2) and keeps the indexer's workspace of 40 x 202,752
// keys x 132 B (indexer-workspace). Each off gives its bytes back to the
// KV cache; on again restores the picture; at v0.19.0 the sort is gone
// and the workspace stays. The nightly also holds FlashInfer's all-reduce
// fusion workspace (allreduce-fusion-workspace).
func TestProfileMechanisms(t *testing.T) {
	s, err := Load(glm5Corpus)
	require.NoError(t, err)
	on := memoryOf(t, s)
	l := 1024 * 154880 * 4.0
	ws := 40 * 202752 * 132.0

	// The nightly of 2026-02-13 (0.16.0.dev) runs the all-reduce fusion
	// pass, merged 2026-02-11 (PR #34299): TP 8 on sm_90 sizes FlashInfer's
	// workspace for 1 MiB / (6144 x 2) = 85 tokens. The rest is read
	// without it.
	require.NoError(t, s.SetMechanism("allreduce-fusion-workspace", false))
	noAR := memoryOf(t, s)
	assert.InEpsilon(t, 4*8*85*6144*2.0+8*256*4, float64(on.Reserve-noAR.Reserve), 1e-9, "all-reduce fusion workspace: %s -> %s", noAR.Reserve, on.Reserve)
	on = noAR

	require.NoError(t, s.SetMechanism("profile-sampler-sort", false))
	noSort := memoryOf(t, s)
	assert.InEpsilon(t, 10.5*l, float64(on.Reserve-noSort.Reserve), 1e-9, "sort: %s -> %s", noSort.Reserve, on.Reserve)
	assert.Equal(t, on.Reserve-noSort.Reserve, noSort.Usable-on.Usable)
	require.NoError(t, s.SetMechanism("profile-sampler-sort", true))
	assert.Equal(t, on, memoryOf(t, s))

	require.NoError(t, s.SetMechanism("indexer-workspace", false))
	noWS := memoryOf(t, s)
	// The sampler is the peak: the workspace adds its whole size.
	assert.InEpsilon(t, ws, float64(on.Reserve-noWS.Reserve), 1e-9, "workspace: %s -> %s", noWS.Reserve, on.Reserve)
	require.NoError(t, s.SetMechanism("indexer-workspace", true))
	assert.Equal(t, on, memoryOf(t, s))

	x, err := OpenWith(glm5Corpus, []Override{{Key: "runtime.engine_version", Value: "0.19.0"}})
	require.NoError(t, err)
	// (v0.19.0 also holds the all-reduce fusion workspace: left out here.)
	require.NoError(t, x.SetMechanism("allreduce-fusion-workspace", false))
	late := memoryOf(t, x)
	// v0.19.0 samples with the Triton kernel (6.5 copies with the
	// rejection sampler, plus 132 buffer rows on the H200) in place of the
	// sort's 12.5, and keeps the workspace.
	buf := 132 * 154880 * 4.0
	assert.InEpsilon(t, 6*l-buf, float64(on.Reserve-late.Reserve), 1e-9, "v0.19.0 samples with the Triton kernel, keeps the workspace")
	require.NoError(t, x.SetMechanism("profile-sampler-triton", false))
	assert.InEpsilon(t, 10.5*l, float64(on.Reserve-memoryOf(t, x).Reserve), 1e-9, "without it: 2 copies")
}

// TestProfileSamplerTritonMechanism: the H100 MiniMax-M2.5 corpus
// scenario (vLLM 0.18.0, max_num_seqs 256, vocab 200,064, 132 SMs): the
// Triton sampler's 3.5 copies and 132-row buffer make the sampler the
// peak; off, the forward is, and the reserve it adds comes out of the KV
// cache.
func TestProfileSamplerTritonMechanism(t *testing.T) {
	s, err := Load("../validate/corpus/aiconfigurator/h100-sxm-vllm-minimax-m2.5-fp8-tp4-dp1-ep4.toml")
	require.NoError(t, err)
	require.True(t, s.Config.Profile.SamplerTriton)
	// FlashInfer's CUTLASS MoE workspace makes the forward this row's
	// peak (TestFICutlassMoEMechanism); without it the sampler is.
	require.NoError(t, s.SetMechanism("flashinfer-cutlass-moe-workspace", false))
	on := memoryOf(t, s)
	require.NoError(t, s.SetMechanism("profile-sampler-triton", false))
	off := memoryOf(t, s)
	l := 256 * 200064 * 4.0
	hidden := 8192 * 3072 * 2.0
	sampler := hidden + 3.5*l + 132*200064*4
	assert.Greater(t, float64(on.Reserve), float64(off.Reserve))
	assert.InEpsilon(t, float64(on.Reserve-off.Reserve), float64(off.Usable-on.Usable), 1e-9)
	// The sampler is the peak with it on: the reserve's activations part is it.
	var act float64
	for _, r := range on.ReserveParts {
		if r.Name == "activations" {
			act = float64(r.Bytes)
		}
	}
	assert.InEpsilon(t, sampler, act, 1e-9)
	require.NoError(t, s.SetMechanism("profile-sampler-triton", true))
	assert.Equal(t, on, memoryOf(t, s))
}

// TestARFusionMechanism: the H100 MiniMax-M2.5 corpus scenario (vLLM
// 0.18.0, TP 4 on sm_90, hidden 3072) holds FlashInfer's all-reduce
// fusion workspace for 2 MiB / (3072 x 2) = 341 tokens, which leaves the
// KV cache; the mechanism off has none; a
// DeepSeek-V3 NVFP4 checkpoint has none (vLLM turns the pass off there).
func TestARFusionMechanism(t *testing.T) {
	const dir = "../validate/corpus/aiconfigurator/"
	s, err := Load(dir + "h100-sxm-vllm-minimax-m2.5-fp8-tp4-dp1-ep4.toml")
	require.NoError(t, err)
	require.True(t, s.Config.Profile.ARFusion)
	on := memoryOf(t, s)
	require.NoError(t, s.SetMechanism("allreduce-fusion-workspace", false))
	off := memoryOf(t, s)
	want := 4*4*341*3072*2.0 + 4*256*4
	assert.InEpsilon(t, want, float64(on.Reserve-off.Reserve), 1e-9)
	assert.InEpsilon(t, want, float64(off.Usable-on.Usable), 1e-9)

	assert.False(t, dsv3NVFP4(s.Config.Model))
	m := *s.Config.Model
	m.Architecture = "DeepseekV3ForCausalLM"
	m.Quant.RoutedExperts = dtype.NVFP4
	assert.True(t, dsv3NVFP4(&m))
}

// TestFICutlassMoEMechanism: the H100 MiniMax-M2.5 fp8 TP4 EP4 row (vLLM
// 0.18.0) runs FlashInfer's CUTLASS fused MoE, whose workspace at the
// profile's 8,192 tokens (n = 65,536 expanded rows, hidden 3072, inter
// 1536, 64 experts per rank) plus vLLM's 8192 x 3072 workspace13 replaces
// the Triton caches: the forward (1.18 GB) then tops the sampler run
// (0.87 GB) and the KV cache shrinks by the difference; off, the Triton
// caches. A version before 0.17 keeps the Triton caches.
func TestFICutlassMoEMechanism(t *testing.T) {
	const dir = "../validate/corpus/aiconfigurator/"
	s, err := Load(dir + "h100-sxm-vllm-minimax-m2.5-fp8-tp4-dp1-ep4.toml")
	require.NoError(t, err)
	require.True(t, s.Config.Profile.FICutlassMoE)
	on := memoryOf(t, s)
	require.NoError(t, s.SetMechanism("flashinfer-cutlass-moe-workspace", false))
	off := memoryOf(t, s)
	T, n, h, inter := 8192.0, 65536.0, 3072.0, 1536.0
	forward := 2*T*h*2 + T*256*4 + T*h*2 + n*h*2 + 2*n*inter*2 + (n*h + n*24*4) + 4*n*4 + 64*T*4
	var act unit.Bytes
	for _, r := range on.ReserveParts {
		if r.Name == "activations" {
			act = r.Bytes
		}
	}
	assert.InEpsilon(t, forward, float64(act), 1e-9, "%s", act)
	assert.Greater(t, float64(on.Reserve-off.Reserve), 0.3e9)
	assert.InEpsilon(t, float64(on.Reserve-off.Reserve), float64(off.Usable-on.Usable), 1e-9)
	require.NoError(t, s.SetMechanism("flashinfer-cutlass-moe-workspace", true))
	assert.Equal(t, on, memoryOf(t, s))

	old, err := OpenWith(dir+"h100-sxm-vllm-minimax-m2.5-fp8-tp4-dp1-ep4.toml", []Override{{Key: "runtime.engine_version", Value: `"0.16.0"`}})
	require.NoError(t, err)
	assert.False(t, old.Config.Profile.FICutlassMoE)
}
