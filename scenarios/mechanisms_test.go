package scenarios

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestMLACollectorMechanism: on a GPU whose perf-database MLA module rows
// are the legacy collector's (gb200), the decode step takes the
// collector's excess off the MLA module (the attention op's source says
// so); --without mla-collector prices the rows as measured; b200-sxm's
// re-collected rows are used as measured either way.
func TestMLACollectorMechanism(t *testing.T) {
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	gpu := regexp.MustCompile(`(?m)^gpu = "h200-sxm"\ngpus = 8\nfabric = "nvlink4"`)
	require.True(t, gpu.Match(data))
	step := func(t *testing.T, preset string, on bool) (float64, string) {
		body := gpu.ReplaceAll(data, []byte("gpu = \""+preset+"\"\ngpus = 8\nfabric = \"nvlink5\""))
		body = regexp.MustCompile(`(?m)^preset = "deepseek-v3"`).ReplaceAll(body, []byte(`config = "../validate/corpus/configs/nvidia--DeepSeek-V3.1-NVFP4_config.json"`))
		s, err := Parse("x.toml", body)
		require.NoError(t, err)
		require.NoError(t, s.SetMechanism("mla-collector", on))
		sm, err := s.Sim()
		require.NoError(t, err)
		p, err := sm.Step(2, 1536)
		require.NoError(t, err)
		ops, err := sm.Explain(2, 1536)
		require.NoError(t, err)
		note := ""
		for _, o := range ops {
			if o.Name == "mla decode attention" {
				note = o.Estimate.Source.Note
			}
		}
		require.NotEmpty(t, note, "the MLA module is priced from a table")
		return float64(p.Step.Time), note
	}
	on, noteOn := step(t, "gb200", true)
	off, noteOff := step(t, "gb200", false)
	assert.Contains(t, noteOn, "legacy collector")
	assert.NotContains(t, noteOff, "legacy collector")
	// 61 layers at batch 2, 16 heads per GPU (128 / TP8), a bf16 KV
	// cache: LegacyMLAOverhead's 47.3 us each.
	assert.InDelta(t, 61*47.3e-6, off-on, 1e-9, "on %g s, off %g s", on, off)
	b200on, note := step(t, "b200-sxm", true)
	b200off, _ := step(t, "b200-sxm", false)
	assert.NotContains(t, note, "legacy collector")
	assert.Equal(t, b200off, b200on)
}
