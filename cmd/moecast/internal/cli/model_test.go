package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/report/view"
)

// TestModelsGolden: `moecast models` in every format; refresh with
// `go test ./internal/cli -run Model -update` and review the diff.
func TestModelsGolden(t *testing.T) {
	for _, f := range []string{formatText, formatJSON, formatCSV} {
		t.Run(f, func(t *testing.T) {
			code, out, errs := runCLI(t, "models", "--format", f)
			require.Equal(t, ExitOK, code, errs)
			assert.Empty(t, errs)
			golden(t, "models_"+f+".golden", out)
		})
	}
	_, out, _ := runCLI(t, "models", "--format", formatJSON)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, len(model.PresetNames()))
	for _, r := range rows {
		if r["name"] == "kimi-k2.5" {
			assert.Equal(t, "int4-g32", r["expert_format"])
			assert.Equal(t, "bf16", r["other_format"])
			assert.InDelta(t, 594.2, r["weights_gb"], 0.1)
		}
	}
}

// TestModelShowGolden: `moecast model show` for every preset at TP8 (text)
// and a few layouts and formats.
func TestModelShowGolden(t *testing.T) {
	for _, n := range model.PresetNames() {
		t.Run(n, func(t *testing.T) {
			code, out, errs := runCLI(t, "model", "show", n, "--tp", "8")
			require.Equal(t, ExitOK, code, errs)
			golden(t, "model_show_"+n+"_tp8.golden", out)
		})
	}
	cases := []struct {
		golden string
		args   []string
	}{
		{"model_show_kimi-k2.5_tp8_ep8.json.golden", []string{"kimi-k2.5", "--tp", "8", "--ep", "8", "--format", "json"}},
		{"model_show_deepseek-v3_dp8_ep8_dpattn.golden", []string{"deepseek-v3", "--tp", "1", "--dp", "8", "--ep", "8", "--dp-attention"}},
		{"model_show_gpt-oss-120b_tp1.golden", []string{"gpt-oss-120b"}},
		{"model_show_glm-4.5_config_tp4.golden", []string{"../../../../model/testdata/glm-4.5_config.json", "--tp", "4"}},
	}
	for _, tt := range cases {
		t.Run(tt.golden, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"model", "show"}, tt.args...)...)
			require.Equal(t, ExitOK, code, errs)
			golden(t, tt.golden, out)
		})
	}
}

// TestModelShowJSON checks the JSON document against the model package.
func TestModelShowJSON(t *testing.T) {
	code, out, errs := runCLI(t, "model", "show", "kimi-k2.5", "--tp", "8", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var sh view.ModelShow
	require.NoError(t, json.Unmarshal([]byte(out), &sh))
	c, err := model.Preset("kimi-k2.5")
	require.NoError(t, err)
	w := c.Weights(model.Layout{TP: 8, EP: 1, DP: 1})
	assert.Equal(t, float64(w.PerGPUTotal(false)), sh.WeightsPerGPUBytes)
	var perGPU float64
	for _, r := range sh.Weights {
		perGPU += r.PerGPUBytes
	}
	assert.InDelta(t, sh.WeightsPerGPUBytesWithMTP, perGPU, 1, "rows add up to the total")
	assert.InDelta(t, 71.345e9, sh.Weights[0].PerGPUBytes, 0.001e9)
	assert.Equal(t, "routed_experts", sh.Weights[0].Class)
	assert.Equal(t, 70272.0, sh.KV[0].BytesPerToken)
	assert.Equal(t, 8, sh.Layout.ExpertTP)
}

// TestModelErrors: bad input prints one line naming the problem and exits 2.
func TestModelErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown preset", []string{"model", "show", "kimi-k3"}, `unknown model preset "kimi-k3"; presets: deepseek-r1, deepseek-v3,`},
		{"missing file", []string{"model", "show", "nope/config.json"}, `model "nope/config.json": no such file, and not a preset`},
		{"directory", []string{"model", "show", "testdata"}, `model "testdata": is a directory, not a config.json`},
		{"unsupported architecture", []string{"model", "show", "testdata/model_bad/llama_config.json"},
			`testdata/model_bad/llama_config.json:3:5: architectures: unsupported architecture "FalconForCausalLM"; supported: `},
		{"syntax error", []string{"model", "show", "testdata/model_bad/syntax_config.json"},
			`testdata/model_bad/syntax_config.json:4:3: JSON syntax error: invalid character '}'`},
		{"tp not dividing heads", []string{"model", "show", "kimi-k2.5", "--tp", "3"}, "--tp: tp=3 does not divide the 64 attention heads of kimi-k2.5"},
		{"ep not dividing experts", []string{"model", "show", "qwen3-30b-a3b", "--tp", "6", "--ep", "3", "--dp-attention"}, "--ep: ep=3 does not divide the 128 routed experts of qwen3-30b-a3b"},
		{"tp zero", []string{"model", "show", "kimi-k2.5", "--tp", "0"}, "--tp: must be >= 1, got 0"},
		{"bad format", []string{"model", "show", "kimi-k2.5", "--format", "csv"}, `--format: unknown format "csv" (want text or json)`},
		{"models bad format", []string{"models", "--format", "xml"}, `--format: unknown format "xml"`},
		{"no model", []string{"model", "show"}, "accepts 1 arg(s), received 0"},
		{"no subcommand", []string{"model"}, "missing subcommand"},
		{"bad flag value", []string{"model", "show", "kimi-k2.5", "--tp", "x"}, `model show: --tp: "x" is not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.args...)
			assert.Equal(t, ExitInput, code, "stderr: %s", errs)
			assert.Empty(t, out)
			assert.Contains(t, errs, tt.want)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
			assert.True(t, strings.HasPrefix(errs, "moecast: "))
		})
	}
}

// TestModelShowDirectory: a directory holding a config.json is named, with
// the file to give instead.
func TestModelShowDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644))
	code, out, errs := runCLI(t, "model", "show", dir)
	assert.Equal(t, ExitInput, code)
	assert.Empty(t, out)
	assert.Equal(t, "moecast: model \""+dir+"\": is a directory, not a config.json (the model's config is "+filepath.Join(dir, "config.json")+")\n", errs)
}

// TestModelShowCheckpointFormats: a ModelOpt checkpoint (config.json and
// the hf_quant_config.json beside it) shows its formats and marks the KV
// dtype it declares; an unknown algorithm is exit 2 naming the key.
func TestModelShowCheckpointFormats(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../../../model/presets/deepseek-ai--DeepSeek-R1_config.json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	delete(m, "quantization_config")
	data, err = json.Marshal(m)
	require.NoError(t, err)
	cfg := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(cfg, data, 0o644))
	side := filepath.Join(dir, "hf_quant_config.json")
	tests := []struct {
		name, side string
		code       int
		want       []string
	}{
		{"NVFP4 experts, attention excluded",
			`{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head", "model.layers.*.self_attn*"]}}`,
			ExitOK, []string{"quantization  modelopt NVFP4", "routed_experts  nvfp4", "attention       bf16", "kv cache fp8  35.1KB per token, 35.1KB per token per GPU (from checkpoint)"}},
		{"unknown algorithm",
			`{"quantization": {"quant_algo": "FP3"}}`,
			ExitInput, []string{`hf_quant_config.json:1:19: quantization.quant_algo: unsupported ModelOpt quantization algorithm "FP3"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(side, []byte(tt.side), 0o644))
			code, out, errs := runCLI(t, "model", "show", cfg)
			require.Equal(t, tt.code, code, errs)
			for _, w := range tt.want {
				assert.Contains(t, out+errs, w)
			}
		})
	}
}
