package scenarios

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/kernels"
)

// TestGraphMechanisms: an SGLang scenario gets SGLang's CUDA-graph capture
// list and eager prefill steps, each of which --without turns off and
// --with back on; a vLLM scenario gets neither.
func TestGraphMechanisms(t *testing.T) {
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	engine := regexp.MustCompile(`(?m)^engine = "vllm"`)
	for _, tc := range []struct {
		engine string
		on     bool
	}{{"sglang", true}, {"vllm", false}} {
		t.Run(tc.engine, func(t *testing.T) {
			body := data
			if tc.engine == "sglang" {
				require.True(t, engine.Match(data), "the scenario names its engine")
				body = engine.ReplaceAll(data, []byte(`engine = "sglang"`))
			}
			s, err := Parse("x.toml", body)
			require.NoError(t, err)
			assert.Equal(t, tc.on, len(s.Config.CaptureBatches) > 0, "capture list")
			assert.Equal(t, tc.on, s.Config.EagerPrefill, "eager prefill")
			if !tc.on {
				return
			}
			assert.Equal(t, 1, s.Config.CaptureBatches[0])
			require.NoError(t, s.SetMechanism("graph-padding", false))
			require.NoError(t, s.SetMechanism("eager-prefill", false))
			assert.Empty(t, s.Config.CaptureBatches)
			assert.False(t, s.Config.EagerPrefill)
			require.NoError(t, s.SetMechanism("capture-size", true))
			assert.Empty(t, s.Config.CaptureBatches, "capture-size leaves the other two alone")
			assert.False(t, s.Config.EagerPrefill)
			require.NoError(t, s.SetMechanism("graph-padding", true))
			require.NoError(t, s.SetMechanism("eager-prefill", true))
			assert.NotEmpty(t, s.Config.CaptureBatches)
			assert.True(t, s.Config.EagerPrefill)
		})
	}
}

// TestMemoryProfileMechanism: a vLLM scenario profiles its memory at its
// token budget and sequence limit (the engine's defaults unless given);
// --without memory-profile restores aiconfigurator's fixed reserve, and
// SGLang keeps it.
func TestMemoryProfileMechanism(t *testing.T) {
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	engine := regexp.MustCompile(`(?m)^engine = "vllm"`)
	require.True(t, engine.Match(data), "the scenario names its engine")
	s, err := Parse("x.toml", data)
	require.NoError(t, err)
	assert.Equal(t, 8192, s.Config.Profile.Tokens, "vLLM's max_num_batched_tokens on an H200")
	assert.Equal(t, 1024, s.Config.Profile.Seqs, "vLLM's max_num_seqs on an H200")
	require.NoError(t, s.SetMechanism("memory-profile", false))
	assert.Zero(t, s.Config.Profile)
	require.NoError(t, s.SetMechanism("memory-profile", true))
	assert.Equal(t, 8192, s.Config.Profile.Tokens)

	body := engine.ReplaceAll(data, []byte("engine = \"vllm\"\nmax_num_batched_tokens = 2048"))
	s, err = Parse("x.toml", body)
	require.NoError(t, err)
	assert.Equal(t, 2048, s.Config.Profile.Tokens, "runtime.max_num_batched_tokens")

	s, err = Parse("x.toml", engine.ReplaceAll(data, []byte(`engine = "sglang"`)))
	require.NoError(t, err)
	assert.Zero(t, s.Config.Profile, "SGLang: the fixed reserve")
}

// TestAdmissionMechanisms: a vLLM scenario admits by the whole sequence
// (scheduler_reserve_full_isl, from v0.19.0) and recovers a preempted
// request's cached blocks; --without turns each off alone, an older
// engine_version leaves full-ISL admission out, and SGLang has neither.
func TestAdmissionMechanisms(t *testing.T) {
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	engine := regexp.MustCompile(`(?m)^engine = "vllm"`)
	require.True(t, engine.Match(data), "the scenario names its engine")
	s, err := Parse("x.toml", data)
	require.NoError(t, err)
	p := ServePoint{Concurrency: 4}
	c := s.serveBase(p)
	assert.True(t, c.ReserveFullISL)
	assert.True(t, c.RecoverPreempted)
	require.NoError(t, s.SetMechanism("full-isl-admission", false))
	c = s.serveBase(p)
	assert.False(t, c.ReserveFullISL)
	assert.True(t, c.RecoverPreempted)
	require.NoError(t, s.SetMechanism("preempt-recovery", false))
	require.NoError(t, s.SetMechanism("full-isl-admission", true))
	c = s.serveBase(p)
	assert.True(t, c.ReserveFullISL)
	assert.False(t, c.RecoverPreempted)

	s, err = Parse("x.toml", engine.ReplaceAll(data, []byte("engine = \"vllm\"\nengine_version = \"0.18.1\"")))
	require.NoError(t, err)
	assert.False(t, s.serveBase(p).ReserveFullISL, "vLLM 0.18.1")

	s, err = Parse("x.toml", engine.ReplaceAll(data, []byte(`engine = "sglang"`)))
	require.NoError(t, err)
	assert.False(t, s.serveBase(p).ReserveFullISL, "SGLang")
}

// TestGEMMBatchMechanism: --without gemm-batch-efficiency prices every
// bf16 GEMM at EffMem (the sm_120 figure is 0.71), --with restores it.
func TestGEMMBatchMechanism(t *testing.T) {
	s, err := Parse("x.toml", []byte("name = \"x\"\n[model]\npreset = \"kimi-k2.5\"\n[hardware]\ngpu = \"rtx-pro-6000-server\"\ngpus = 8\n[parallel]\ntp = 8\nep = 8\n"))
	require.NoError(t, err)
	require.NoError(t, s.SetMechanism("gemm-batch-efficiency", false))
	assert.Zero(t, s.Config.Efficiency.MemGEMMBatch)
	assert.Equal(t, kernels.EffMem, s.Config.Efficiency.Mem)
	require.NoError(t, s.SetMechanism("gemm-batch-efficiency", true))
	assert.Equal(t, kernels.EffMemGEMMBatchSM120, s.Config.Efficiency.MemGEMMBatch)
}
