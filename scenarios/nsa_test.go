package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/sim"
)

const (
	glm5NVFP4Corpus = "../validate/corpus/aiconfigurator/b200-sxm-sglang-glm-5-nvfp4-tp8-dp1-ep1-c4.toml"
	glm5FP8Corpus   = "../validate/corpus/aiconfigurator/b200-sxm-sglang-glm-5-fp8-block-tp8-dp1-ep1-c4.toml"
)

// TestSGLangSparsePrefill: GLM-5 under SGLang on B200 with the default NSA
// prefill backend (flashmla_auto on the fp8 cache) runs its prefill chunks
// through FlashMLA's sparse kernel at 128 padded heads (sglang-sparse-prefill
// on by default): an 8k chunk has the sparse prefill op and no un-absorbed
// attention, and costs more than with the mechanism off; a decode step is
// the same either way. --nsa-prefill-backend trtllm (the FP8 script's),
// vLLM and Hopper leave it off.
func TestSGLangSparsePrefill(t *testing.T) {
	s, err := Load(glm5NVFP4Corpus)
	require.NoError(t, err)
	assert.Equal(t, "flashmla_auto", s.NSAPrefillImpl())
	require.True(t, s.Config.SparsePrefill)
	require.False(t, s.Config.SparseMLA)
	chunk := []sim.Seq{{Query: 8192, Context: 8192, Prefill: true}}
	dec := []sim.Seq{{Query: 1, Context: 1536}, {Query: 1, Context: 1536}, {Query: 1, Context: 1536}, {Query: 1, Context: 1536}}
	step := func(seqs []sim.Seq) (unit.Seconds, []string) { return moeLayerStep(t, s, seqs) }
	has := hasOpNamed
	onPre, names := step(chunk)
	assert.True(t, has(names, "sparse mla prefill attention"))
	assert.False(t, has(names, "un-absorbed"))
	onDec, names := step(dec)
	assert.True(t, has(names, "mla decode attention"))
	assert.False(t, has(names, "sparse mla"))

	require.NoError(t, s.SetMechanism("sglang-sparse-prefill", false))
	assert.False(t, s.Config.SparsePrefill)
	offPre, names := step(chunk)
	assert.False(t, has(names, "sparse mla"))
	assert.True(t, has(names, "mla prefill attention (un-absorbed)"))
	offDec, _ := step(dec)
	// 8,192 queries x 128 padded heads x 2,048 keys x 1,088 x 2 FLOPs = 4.7
	// TFLOP a layer at 0.644 of 2,250 TFLOPS, ~3.3 ms, over 78 layers, where
	// the un-absorbed MHA over 8 heads takes ~0.16 ms a layer: over 0.2 s more
	assert.Greater(t, float64(onPre-offPre), 0.2)
	assert.Equal(t, onDec, offDec)

	require.NoError(t, s.SetMechanism("sglang-sparse-prefill", true))
	back, _ := step(chunk)
	assert.Equal(t, onPre, back)

	// the FP8 script's --nsa-prefill-backend trtllm runs TRT-LLM's kernel
	f, err := Load(glm5FP8Corpus)
	require.NoError(t, err)
	assert.Equal(t, "trtllm", f.NSAPrefillImpl())
	assert.False(t, f.Config.SparsePrefill)
	require.NoError(t, f.SetMechanism("sglang-sparse-prefill", true))
	assert.False(t, f.Config.SparsePrefill)

	for _, c := range []struct {
		o    Override
		impl string
		on   bool
	}{
		{Override{Key: "runtime.nsa_prefill_backend", Value: `"flashmla_sparse"`}, "flashmla_sparse", true},
		{Override{Key: "runtime.nsa_prefill_backend", Value: `"trtllm"`}, "trtllm", false},
		{Override{Key: "runtime.nsa_prefill_backend", Value: `"flashmla_kv"`}, "flashmla_kv", false},
		{Override{Key: "runtime.engine", Value: `"vllm"`}, "", false},
	} {
		x, err := OpenWith(glm5NVFP4Corpus, []Override{c.o})
		require.NoError(t, err, c.o.Value)
		assert.Equal(t, c.impl, x.NSAPrefillImpl(), c.o.Value)
		assert.Equal(t, c.on, x.Config.SparsePrefill, c.o.Value)
	}
	// Hopper: SGLang keeps its MHA_ONE_SHOT path for short prompts (the
	// FP8 checkpoint: SGLang loads no NVFP4 one there)
	x, err := OpenWith(glm5FP8Corpus, []Override{{Key: "hardware.gpu", Value: `"h200-sxm"`}, {Key: "runtime.nsa_prefill_backend", Value: `"flashmla_auto"`}})
	require.NoError(t, err)
	assert.Equal(t, "flashmla_auto", x.NSAPrefillImpl())
	assert.False(t, x.Config.SparsePrefill)
	_, err = OpenWith(glm5NVFP4Corpus, []Override{{Key: "hardware.gpu", Value: `"h200-sxm"`}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SGLang loads an NVFP4 checkpoint (modelopt_fp4) only on compute capability 10.0 and later")
}

// TestNSAPrefillBackendBadInput: an unknown runtime.nsa_prefill_backend is
// refused with the key named; one on a model without DSA layers warns.
func TestNSAPrefillBackendBadInput(t *testing.T) {
	_, err := OpenWith(glm5NVFP4Corpus, []Override{{Key: "runtime.nsa_prefill_backend", Value: `"flashmla"`}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "runtime.nsa_prefill_backend")
	assert.Contains(t, err.Error(), `unknown backend "flashmla"`)

	x, err := OpenWith(glm5NVFP4Corpus, []Override{{Key: "runtime.nsa_prefill_backend", Value: `"trtllm"`}, {Key: "runtime.engine", Value: `"vllm"`}})
	require.NoError(t, err)
	assert.True(t, strings.Contains(strings.Join(x.Warnings, "\n"), "nsa_prefill_backend"))
}
