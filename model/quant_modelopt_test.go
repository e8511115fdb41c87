package model

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
)

// quantPresetJSON is a preset config.json with its quantization_config
// replaced by q (nil: removed), at path (nil: top level).
func quantPresetJSON(t *testing.T, file string, path []string, q any) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("presets", file))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	obj := m
	for _, k := range path {
		obj = obj[k].(map[string]any)
	}
	delete(obj, "quantization_config")
	if q != nil {
		obj["quantization_config"] = q
	}
	out, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	return out
}

func sidecar(q map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"producer": map[string]any{"name": "modelopt", "version": "0.41.0"}, "quantization": q})
	return b
}

// TestModelOptFormats reads ModelOpt quantization from each place it can
// be: hf_quant_config.json beside config.json, config.json's
// quantization_config (quant_method modelopt, or none with quant_algo),
// a multimodal wrapper's top level, and an fp8 config with moe_quant_algo.
func TestModelOptFormats(t *testing.T) {
	bf, nv := dtype.BF16Weights, dtype.NVFP4
	tests := []struct {
		name                 string
		file                 string
		path                 []string
		q                    any
		side                 []byte
		routed, shared, attn dtype.Format
		method               string
		kv                   bool
		kvFrom               string
	}{
		{
			name: "sidecar NVFP4, attention excluded",
			file: "deepseek-ai--DeepSeek-R1_config.json",
			side: sidecar(map[string]any{"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16,
				"exclude_modules": []string{"lm_head", "model.layers.*.self_attn*"}}),
			routed: nv, shared: nv, attn: bf, method: "modelopt NVFP4", kv: true,
			kvFrom: "side.json: quantization.kv_cache_quant_algo",
		},
		{
			name: "config.json FP8 static per-tensor without quant_method",
			file: "deepseek-ai--DeepSeek-R1_config.json",
			q: map[string]any{"quant_algo": "FP8", "kv_cache_scheme": "FP8", "producer": map[string]any{"name": "modelopt"},
				"ignore": []string{"lm_head"}},
			routed: dtype.FP8Tensor, shared: dtype.FP8Tensor, attn: dtype.FP8Tensor,
			method: "modelopt FP8 (static per-tensor)", kv: true, kvFrom: "config.json: quantization_config.kv_cache_scheme",
		},
		{
			name: "wrapper's top-level quantization_config (Kimi-K2.5-NVFP4)",
			file: "moonshotai--Kimi-K2.5_config.json", path: []string{"text_config"},
			q: map[string]any{"quant_method": "modelopt", "quant_algo": "NVFP4",
				"kv_cache_scheme": map[string]any{"dynamic": false, "num_bits": 8, "type": "float"},
				"ignore":          []string{"language_model.lm_head", "language_model.model.layers.*.self_attn*"}},
			routed: nv, shared: nv, attn: bf, method: "modelopt NVFP4", kv: true,
			kvFrom: "config.json: quantization_config.kv_cache_scheme",
		},
		{
			name: "MIXED_PRECISION: experts NVFP4, attention MXFP8, shared bf16",
			file: "deepseek-ai--DeepSeek-R1_config.json",
			side: sidecar(map[string]any{"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": nil,
				"quantized_layers": map[string]any{
					"model.layers.3.mlp.experts":                  map[string]any{"quant_algo": "NVFP4", "group_size": 16},
					"model.layers.0.self_attn.q_a_proj":           map[string]any{"quant_algo": "MXFP8"},
					"model.layers.0.self_attn.q_b_proj":           map[string]any{"quant_algo": "MXFP8"},
					"model.layers.0.self_attn.kv_a_proj_with_mqa": map[string]any{"quant_algo": "MXFP8"},
					"model.layers.0.self_attn.kv_b_proj":          map[string]any{"quant_algo": "MXFP8"},
					"model.layers.0.self_attn.o_proj":             map[string]any{"quant_algo": "MXFP8"},
				}}),
			routed: nv, shared: bf, attn: dtype.MXFP8, method: "modelopt MIXED_PRECISION (MXFP8, NVFP4)",
		},
		{
			name: "fp8 block with moe_quant_algo NVFP4 (DeepSeek-V4 NVFP4 releases)",
			file: "deepseek-ai--DeepSeek-R1_config.json",
			q: map[string]any{"quant_method": "fp8", "weight_block_size": []int{128, 128}, "quant_algo": "MIXED_PRECISION",
				"moe_quant_algo": "NVFP4", "kv_cache_quant_algo": nil},
			routed: nv, shared: dtype.FP8Block128, attn: dtype.FP8Block128, method: "fp8 block [128,128], experts NVFP4",
		},
		{
			name: "compressed-tensors mxfp4-pack-quantized (Kimi-K3 layout), fp8 KV scheme",
			file: "deepseek-ai--DeepSeek-R1_config.json",
			q: map[string]any{"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized",
				"kv_cache_scheme": map[string]any{"num_bits": 8, "type": "float"},
				"ignore":          []string{"lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:model.layers.[0-2].mlp.*"},
				"config_groups": map[string]any{"group_0": map[string]any{"targets": []string{"Linear"},
					"weights": map[string]any{"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32, "symmetric": true, "scale_dtype": "torch.uint8"}}}},
			routed: dtype.MXFP4, shared: bf, attn: bf, method: "compressed-tensors mxfp4-pack-quantized", kv: true,
			kvFrom: "config.json: quantization_config.kv_cache_scheme",
		},
		{
			name:   "config.json quantization wins over the sidecar",
			file:   "deepseek-ai--DeepSeek-R1_config.json",
			q:      map[string]any{"quant_method": "fp8", "weight_block_size": []int{128, 128}},
			side:   sidecar(map[string]any{"quant_algo": "NVFP4"}),
			routed: dtype.FP8Block128, shared: dtype.FP8Block128, attn: dtype.FP8Block128, method: "fp8 block [128,128]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := quantPresetJSON(t, tt.file, tt.path, tt.q)
			if tt.path != nil && tt.q != nil {
				// the quantization at the wrapper's top level, none in text_config
				var m map[string]any
				require.NoError(t, json.Unmarshal(data, &m))
				m["quantization_config"] = m["text_config"].(map[string]any)["quantization_config"]
				delete(m["text_config"].(map[string]any), "quantization_config")
				var err error
				data, err = json.Marshal(m)
				require.NoError(t, err)
			}
			sname := ""
			if tt.side != nil {
				sname = "side.json"
			}
			c, err := parseWithQuant("config.json", data, sname, tt.side)
			require.NoError(t, err)
			q := c.Quant
			assert.Equal(t, tt.routed, q.RoutedExperts, "routed experts")
			assert.Equal(t, tt.shared, q.SharedExpert, "shared expert")
			assert.Equal(t, tt.attn, q.Attention, "attention")
			assert.Equal(t, bf, q.Router, "router")
			assert.Equal(t, bf, q.LMHead, "lm_head")
			assert.Equal(t, tt.method, q.Method)
			assert.Equal(t, tt.kv, q.KVCacheDeclared, "KV declared")
			if tt.kv {
				assert.Equal(t, dtype.KVFP8, q.KVCache)
				assert.Equal(t, tt.kvFrom, q.KVCacheFrom)
			}
		})
	}
}

// TestQuantFormatErrors: a method, algorithm or KV scheme moecast does not
// know is an error naming the file, key and value, never bf16.
func TestQuantFormatErrors(t *testing.T) {
	tests := []struct {
		name string
		q    any
		side []byte
		want string
	}{
		{"unknown quant_algo in the sidecar", nil, sidecar(map[string]any{"quant_algo": "FP6_MAGIC"}),
			`side.json:1:68: quantization.quant_algo: unsupported ModelOpt quantization algorithm "FP6_MAGIC"`},
		{"unknown quant_algo in config.json", map[string]any{"quant_method": "modelopt", "quant_algo": "W2A2"}, nil,
			`quantization_config.quant_algo: unsupported ModelOpt quantization algorithm "W2A2"`},
		{"unknown layer algorithm", nil, sidecar(map[string]any{"quant_algo": "MIXED_PRECISION",
			"quantized_layers": map[string]any{"model.layers.3.mlp.experts": map[string]any{"quant_algo": "INT3"}}}),
			`quantization.quant_algo: unsupported ModelOpt quantization algorithm "INT3"`},
		{"MIXED_PRECISION without layers", nil, sidecar(map[string]any{"quant_algo": "MIXED_PRECISION"}),
			`quantization.quantized_layers: quant_algo MIXED_PRECISION needs quantized_layers`},
		{"unknown KV algorithm", nil, sidecar(map[string]any{"quant_algo": "NVFP4", "kv_cache_quant_algo": "NVFP4"}),
			`quantization.kv_cache_quant_algo: unsupported KV-cache quantization "NVFP4"`},
		{"int8 KV scheme", map[string]any{"quant_method": "modelopt", "quant_algo": "NVFP4",
			"kv_cache_scheme": map[string]any{"num_bits": 8, "type": "int"}}, nil,
			`quantization_config.kv_cache_scheme: unsupported KV-cache quantization: num_bits 8, type "int"`},
		{"NVFP4 with another group", nil, sidecar(map[string]any{"quant_algo": "NVFP4", "group_size": 32}),
			`quantization.group_size: NVFP4 has a fixed group of 16 weights, got 32`},
		{"another producer's sidecar", nil, []byte(`{"producer": {"name": "autoround"}, "quantization": {"quant_algo": "NVFP4"}}`),
			`side.json:1:15: name: producer "autoround"`},
		{"unknown method", map[string]any{"quant_method": "hqq"}, nil,
			`quantization_config.quant_method: unsupported quantization method "hqq"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := quantPresetJSON(t, "deepseek-ai--DeepSeek-R1_config.json", nil, tt.q)
			sname := ""
			if tt.side != nil {
				sname = "side.json"
			}
			_, err := parseWithQuant("config.json", data, sname, tt.side)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var ce *ConfigError
			assert.True(t, errors.As(err, &ce), "a ConfigError")
		})
	}
}

func TestQuantSidecar(t *testing.T) {
	tests := []struct{ path, want string }{
		{"ckpt/config.json", "ckpt/hf_quant_config.json"},
		{"configs/nvidia--GLM-5-NVFP4_config.json", "configs/nvidia--GLM-5-NVFP4_hf_quant_config.json"},
		{"configs/x_hf_quant_config.json", ""},
		{"model.json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) { assert.Equal(t, tt.want, quantSidecar(tt.path)) })
	}
}

// sharedConfigs is aiconfigurator's model_configs copy (../shared; the
// tests that read it skip without it).
const sharedConfigs = "../../shared/data/model_configs"

func sharedConfig(t *testing.T, name string) *Config {
	t.Helper()
	p := filepath.Join(sharedConfigs, name+"_config.json")
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		t.Skip("no shared model configs")
	}
	c, err := LoadFile(p)
	require.NoError(t, err)
	return c
}

// TestPublishedCheckpointSizes holds the weight totals (MTP layers
// included: they are in the checkpoint) of quantized releases against the
// sizes their publishers state.
func TestPublishedCheckpointSizes(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name   string
		bytes  float64
		tol    float64
		source string
	}{
		// NVIDIA developer forum, "Nvidia releases Kimi K2.5 NVFP4! (1T,
		// 591GB)" (forums.developer.nvidia.com/t/359810), the size the
		// Hugging Face page nvidia/Kimi-K2.5-NVFP4 lists.
		{"nvidia--Kimi-K2.5-NVFP4", 591e9, 0.01, "NVFP4 experts, bf16 MLA"},
		// OpenAI, gpt-oss-120b & gpt-oss-20b model card (arXiv 2508.10925),
		// table 1: checkpoint sizes 60.8 GiB and 12.8 GiB.
		{"openai--gpt-oss-120b", 60.8 * gib, 0.01, "MXFP4 experts"},
		{"openai--gpt-oss-20b", 12.8 * gib, 0.01, "MXFP4 experts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sharedConfig(t, tt.name)
			w := c.Weights(Layout{TP: 1, EP: 1, DP: 1})
			got := float64(Sum(w.Total))
			assert.InEpsilon(t, tt.bytes, got, tt.tol, "%s: %.1f GB, published %.1f GB", tt.source, got/1e9, tt.bytes/1e9)
		})
	}
}

// TestFP8ReleaseBytesPerParam: DeepSeek-V3's FP8 release, 685B parameters
// with the MTP module (deepseek-ai/DeepSeek-V3 model card: 671B main +
// 14B MTP), stores every linear in fp8 with fp32 128x128 block scales and
// embed_tokens / lm_head in bf16: about 1.0 B per parameter, so its total
// lies between 685 GB and 685 GB + one more byte per embedding and lm_head
// parameter (2 x 129280 x 7168 = 1.85B) plus the scales (0.03 %).
func TestFP8ReleaseBytesPerParam(t *testing.T) {
	c := sharedConfig(t, "deepseek-ai--DeepSeek-V3")
	got := float64(Sum(c.Weights(Layout{TP: 1, EP: 1, DP: 1}).Total))
	assert.Greater(t, got, 685e9*0.995)
	assert.Less(t, got, (685e9+1.85e9)*1.001+0.0003*685e9)
	assert.Equal(t, "fp8 block [128,128]", c.Quant.Method)
}

// TestSharedQuantizedNeverBF16: every config in the shared corpus that
// declares a quantization (in config.json or hf_quant_config.json) loads
// with a method other than "none" and quantized routed experts, or is
// refused for something other than its quantization; never silently
// priced as bf16.
func TestSharedQuantizedNeverBF16(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(sharedConfigs, "*_config.json"))
	if len(paths) == 0 {
		t.Skip("no shared model configs")
	}
	n := 0
	for _, p := range paths {
		if strings.HasSuffix(p, "_hf_quant_config.json") {
			continue
		}
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		_, serr := os.Stat(quantSidecar(p))
		if !strings.Contains(string(data), `"quantization_config"`) && serr != nil {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			c, err := LoadFile(p)
			if err != nil {
				// refused before or beside the quantization (an
				// architecture not read yet, JSON Python writes), never
				// for it
				assert.NotContains(t, err.Error(), "quant")
				return
			}
			n++
			assert.NotEqual(t, "none", c.Quant.Method)
			if c.MoE.Experts > 0 {
				assert.NotEqual(t, dtype.BF16Weights, c.Quant.RoutedExperts, "routed experts quantized in every quantized MoE release")
			} else {
				assert.NotEqual(t, dtype.BF16Weights, c.Quant.DenseMLP, "the MLP quantized in every quantized dense release")
			}
		})
	}
	t.Logf("%d quantized configs priced", n)
}

// TestLoadWithoutSidecar: a config file not named *config.json has no
// sidecar to look for, in a file system or on disk.
func TestLoadWithoutSidecar(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("presets", "deepseek-ai--DeepSeek-R1_config.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "r1.json"), data, 0o644))
	tests := []struct {
		name string
		load func() (*Config, error)
	}{
		{"file system", func() (*Config, error) { return Load(os.DirFS(dir), "r1.json") }},
		{"disk", func() (*Config, error) { return LoadFile(filepath.Join(dir, "r1.json")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.load()
			require.NoError(t, err)
			assert.Equal(t, "fp8 block [128,128]", c.Quant.Method)
		})
	}
}
