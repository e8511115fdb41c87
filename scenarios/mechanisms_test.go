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

// TestQuantGEMMMechanism: a scenario on a B200 prices its quantized GEMMs
// with sm_100's fitted streaming figures; --without quant-gemm gives the
// bf16 GEMM's and --with restores them, leaving the other efficiencies
// alone; --with quant-gemm-compute (off by default) sets the measured
// compute fractions and --without clears them; an H200 takes sm_90's.
func TestQuantGEMMMechanism(t *testing.T) {
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	gpu := regexp.MustCompile(`(?m)^gpu = "h200-sxm"`)
	require.True(t, gpu.Match(data), "the scenario names its GPU")
	def := kernels.DefaultQuantGEMM()
	for _, tc := range []struct {
		gpu     string
		want    kernels.QuantGEMMCosts
		compute kernels.QuantGEMMCompute
	}{
		{"b200-sxm", kernels.QuantGEMMSM100, kernels.QuantGEMMComputeSM100},
		{"b300-sxm", kernels.QuantGEMMSM103, kernels.QuantGEMMComputeSM103},
		{"h200-sxm", kernels.QuantGEMMSM90, kernels.QuantGEMMComputeSM90},
	} {
		t.Run(tc.gpu, func(t *testing.T) {
			s, err := Parse("x.toml", gpu.ReplaceAll(data, []byte(`gpu = "`+tc.gpu+`"`)))
			require.NoError(t, err)
			arch := kernels.EfficiencyFor(s.Config.GPU)
			require.Equal(t, tc.want, arch.QuantGEMM)

			require.NoError(t, s.SetMechanism("quant-gemm", false))
			assert.Equal(t, def, s.Config.Efficiency.QuantGEMM)
			assert.Equal(t, arch.Mem, s.Config.Efficiency.Mem, "the other efficiencies stay the architecture's")
			assert.Equal(t, arch.MemMarlin, s.Config.Efficiency.MemMarlin)

			require.NoError(t, s.SetMechanism("quant-gemm-compute", true))
			q := s.Config.Efficiency.QuantGEMM
			assert.Equal(t, tc.compute.FP8, q.FP8.Compute)
			assert.Equal(t, tc.compute.FP8Block, q.FP8Block.Compute)
			assert.Equal(t, tc.compute.FP4, q.FP4.Compute)
			assert.Equal(t, def.FP8.Mem, q.FP8.Mem, "the streaming side stays off")

			require.NoError(t, s.SetMechanism("quant-gemm", true))
			require.NoError(t, s.SetMechanism("quant-gemm-compute", false))
			assert.Equal(t, arch, s.Config.Efficiency)
		})
	}
}
