package model

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
)

// presetJSON returns the embedded config.json text of a preset.
func presetJSON(t testing.TB, name string) string {
	t.Helper()
	b, err := fs.ReadFile(presetFS, "presets/"+presetFiles[name])
	require.NoError(t, err)
	return string(b)
}

// edit replaces old (which must occur exactly once) by new in s.
func edit(t testing.TB, s, old, new string) string {
	t.Helper()
	require.Equal(t, 1, strings.Count(s, old), "fixture edit: %q must occur once", old)
	return strings.Replace(s, old, new, 1)
}

func TestPresetsImportAndValidate(t *testing.T) {
	want := map[string]string{
		"kimi-k2.5": "DeepseekV3ForCausalLM", "kimi-k2": "DeepseekV3ForCausalLM", "deepseek-v3": "DeepseekV3ForCausalLM",
		"deepseek-r1": "DeepseekV3ForCausalLM", "qwen3-235b-a22b": "Qwen3MoeForCausalLM", "qwen3-30b-a3b": "Qwen3MoeForCausalLM",
		"gpt-oss-120b": "GptOssForCausalLM", "mixtral-8x7b": "MixtralForCausalLM", "glm-5": "GlmMoeDsaForCausalLM",
		"llama-4-maverick": "Llama4ForCausalLM",
	}
	require.Equal(t, len(want), len(PresetNames()))
	for _, n := range PresetNames() {
		t.Run(n, func(t *testing.T) {
			c, err := Preset(n)
			require.NoError(t, err)
			assert.Equal(t, n, c.Name)
			assert.Equal(t, want[n], c.Architecture)
			assert.NoError(t, c.Validate())
			assert.NoError(t, c.CheckLayout(Layout{TP: 1, EP: 1, DP: 1}))
			// Every preset's file also imports through Resolve.
			r, err := Resolve(n)
			require.NoError(t, err)
			assert.Equal(t, c, r)
		})
	}
	_, err := Preset("kimi-k3")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown model preset "kimi-k3"`)
	assert.Contains(t, err.Error(), "kimi-k2.5")
	c, err := Preset("Kimi-K2.5")
	require.NoError(t, err, "preset names are case-insensitive")
	assert.Equal(t, "kimi-k2.5", c.Name)
}

func TestPresetDims(t *testing.T) {
	// Each preset's config.json (ai-dynamo/aiconfigurator @ 095f58a,
	// aic-core/src/aiconfigurator_core/model_configs/; presets/README.md).
	tests := []struct {
		preset                              string
		hidden, layers, dense, experts, top int
		shared, heads, kv, vocab, mtp       int
		kind                                AttentionKind
	}{
		{"kimi-k2.5", 7168, 61, 1, 384, 8, 1, 64, 64, 163840, 0, MLA},
		{"kimi-k2", 7168, 61, 1, 384, 8, 1, 64, 64, 163840, 0, MLA},
		{"deepseek-v3", 7168, 61, 3, 256, 8, 1, 128, 128, 129280, 1, MLA},
		{"qwen3-235b-a22b", 4096, 94, 0, 128, 8, 0, 64, 4, 151936, 0, GQA},
		{"qwen3-30b-a3b", 2048, 48, 0, 128, 8, 0, 32, 4, 151936, 0, GQA},
		{"gpt-oss-120b", 2880, 36, 0, 128, 4, 0, 64, 8, 201088, 0, GQA},
		{"mixtral-8x7b", 4096, 32, 0, 8, 2, 0, 32, 8, 32000, 0, GQA},
		{"glm-5", 6144, 78, 3, 256, 8, 1, 64, 64, 154880, 1, MLA},
		{"llama-4-maverick", 5120, 48, 24, 128, 1, 1, 40, 8, 202048, 0, GQA},
	}
	for _, tt := range tests {
		c := mustPreset(t, tt.preset)
		got := []int{c.Hidden, c.Layers, c.DenseLayerCount(), c.MoE.Experts, c.MoE.TopK, c.MoE.Shared, c.Attn.Heads, c.Attn.KVHeads, c.Vocab, c.MTPLayers}
		want := []int{tt.hidden, tt.layers, tt.dense, tt.experts, tt.top, tt.shared, tt.heads, tt.kv, tt.vocab, tt.mtp}
		assert.Equal(t, want, got, tt.preset)
		assert.Equal(t, tt.kind, c.Attn.Kind, tt.preset)
	}
	g := mustPreset(t, "gpt-oss-120b")
	assert.Equal(t, 128, g.Attn.SlidingWindow)
	assert.Equal(t, 18, g.Attn.SlidingLayers)
	l4 := mustPreset(t, "llama-4-maverick")
	assert.True(t, l4.IsMoELayer(1) && l4.IsMoELayer(47) && !l4.IsMoELayer(0) && !l4.IsMoELayer(46), "interleave_moe_layer_step 2: odd layers are MoE")
	assert.Equal(t, [2]int{8192, 36}, [2]int{l4.Attn.SlidingWindow, l4.Attn.SlidingLayers}, "chunked attention on the 36 rope layers")
	assert.Equal(t, 16384, l4.DenseInter)
	assert.Equal(t, 8192, l4.MoE.SharedInter)
	z := mustPreset(t, "glm-5")
	assert.Equal(t, [3]int{32, 128, 2048}, [3]int{z.Attn.IndexHeads, z.Attn.IndexHeadDim, z.Attn.IndexTopK})
	assert.Equal(t, [5]int{2048, 512, 192, 64, 256}, [5]int{z.Attn.QLoRARank, z.Attn.KVLoRARank, z.Attn.QKNopeDim, z.Attn.QKRopeDim, z.Attn.VHeadDim})
}

func TestTextConfigNesting(t *testing.T) {
	c := mustPreset(t, "kimi-k2.5")
	assert.Equal(t, "DeepseekV3ForCausalLM", c.Architecture)
	assert.Equal(t, "kimi_k2", c.ModelType, "model_type of the text model, not kimi_k25")
	assert.Equal(t, "deepseek_v3", c.Family)
	assert.Equal(t, 2048, c.MoE.Inter)

	// Errors inside text_config carry the key path and the file position.
	src := edit(t, presetJSON(t, "kimi-k2.5"), `"hidden_size": 7168,`, `"hidden_size": "7168",`)
	line := 1 + strings.Count(src[:strings.Index(src, `"hidden_size": "7168"`)], "\n")
	_, err := Parse("k25.json", []byte(src))
	require.Error(t, err)
	var ce *ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "text_config.hidden_size", ce.Key)
	assert.Equal(t, line, ce.Line)

	// A text_config without architectures falls back to the wrapper's.
	src = edit(t, presetJSON(t, "kimi-k2.5"), "\"architectures\": [\n      \"DeepseekV3ForCausalLM\"\n    ],", "")
	c2, err := Parse("k25.json", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "DeepseekV3ForCausalLM", c2.Architecture)

	// A range error inside text_config names the nested key and its line.
	src = edit(t, presetJSON(t, "kimi-k2.5"), `"num_experts_per_tok": 8,`, `"num_experts_per_tok": 400,`)
	_, err = Parse("k25.json", []byte(src))
	require.Error(t, err)
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "text_config.num_experts_per_tok", ce.Key)
	assert.Equal(t, 1+strings.Count(src[:strings.Index(src, `"num_experts_per_tok": 400`)], "\n"), ce.Line)
	assert.Contains(t, err.Error(), "must be in [1, n_routed_experts=384], got 400")
}

func TestIgnoreListMatching(t *testing.T) {
	d := &doc{file: "x.json"}
	k25 := []string{"lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", `re:.*mlp\.(gate|up|gate_up|down)_proj.*`}
	tests := []struct {
		ignore  []string
		module  string
		ignored bool
	}{
		{k25, "lm_head", true},
		{k25, "model.lm_head", false}, // exact names match exactly
		{k25, "model.layers.0.self_attn.q_a_proj", true},
		{k25, "model.layers.3.self_attn.kv_b_proj", true},
		{k25, "model.layers.0.mlp.gate_proj", true}, // dense layer-0 MLP
		{k25, "model.layers.0.mlp.down_proj", true},
		{k25, "model.layers.1.mlp.shared_experts.gate_proj", true},
		{k25, "model.layers.1.mlp.experts.0.gate_proj", false}, // routed experts are INT4
		{k25, "model.layers.1.mlp.experts.383.down_proj", false},
		{k25, "language_model.model.layers.1.self_attn.o_proj", true},
		{[]string{"re:model.layers.1.*"}, "language_model.model.layers.1.x", false}, // re.match anchors at the start
		{[]string{"re:model.layers.1.*"}, "model.layers.1.x", true},
		{[]string{"re:.*experts.0.*"}, "model.layers.1.mlp.experts.0.up_proj", true},
	}
	for _, tt := range tests {
		ms, err := compileMatchers(d, "ignore", tt.ignore)
		require.NoError(t, err)
		assert.Equal(t, tt.ignored, anyMatch(ms, tt.module), "ignore %q, module %s", tt.ignore, tt.module)
	}

	// HF modules_to_not_convert globs (fp8, mxfp4).
	globs := []struct {
		patterns []string
		module   string
		match    bool
	}{
		{[]string{"model.layers.*.self_attn"}, "model.layers.0.self_attn.q_proj", true},
		{[]string{"model.layers.*.mlp.router"}, "model.layers.0.mlp.experts", false},
		{[]string{"model.layers.*.mlp.experts"}, "model.layers.0.mlp.experts.gate_up_proj", true},
		{[]string{"lm_head"}, "model.layers.0.mlp.experts", false},
		{[]string{"self_attn"}, "model.layers.0.self_attn.o_proj", true},
	}
	for _, g := range globs {
		assert.Equal(t, g.match, globListMatch(g.patterns, g.module), "%q vs %s", g.patterns, g.module)
	}
}

// TestQuantEdits changes the quantization_config of real configs and
// checks the per-class decision follows.
func TestQuantEdits(t *testing.T) {
	k25 := presetJSON(t, "kimi-k2.5")
	ignoreShared := `"re:.*shared_experts.*",` + "\n        "

	// Without the shared-experts entry, the shared expert becomes INT4 too;
	// the dense layer-0 MLP is still caught by the mlp regex.
	src := edit(t, k25, ignoreShared, "")
	c, err := Parse("k.json", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, dtype.INT4G32, c.Quant.SharedExpert)
	assert.Equal(t, dtype.BF16Weights, c.Quant.DenseMLP)
	assert.Equal(t, dtype.BF16Weights, c.Quant.Attention)

	// Ignoring only the routed experts' down_proj splits the class: noted.
	src = edit(t, k25, ignoreShared, ignoreShared+`"re:.*experts\\.0\\.down_proj",`+"\n        ")
	c, err = Parse("k.json", []byte(src))
	require.NoError(t, err)
	require.NotEmpty(t, c.Notes)
	assert.Contains(t, strings.Join(c.Notes, "\n"), "routed experts modules differ")

	// group_size 128, asymmetric: int4-g128 with a 4-bit zero point per group.
	src = edit(t, k25, `"group_size": 32`, `"group_size": 128`)
	src = edit(t, src, `"symmetric": true`, `"symmetric": false`)
	c, err = Parse("k.json", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "int4-g128-asym", c.Quant.RoutedExperts.Name)
	assert.InDelta(t, 0.5+20.0/8/128, c.Quant.RoutedExperts.BytesPerParam(), 1e-12)

	// fp8 with modules_to_not_convert keeps attention in bf16.
	ds := edit(t, presetJSON(t, "deepseek-v3"), `"quant_method": "fp8",`, `"quant_method": "fp8", "modules_to_not_convert": ["model.layers.*.self_attn"],`)
	c, err = Parse("d.json", []byte(ds))
	require.NoError(t, err)
	assert.Equal(t, dtype.BF16Weights, c.Quant.Attention)
	assert.Equal(t, dtype.FP8Block128, c.Quant.RoutedExperts)
	assert.Equal(t, [2]int{128, 128}, c.Quant.Block)

	// mxfp4 with the experts excluded: nothing quantized.
	g := edit(t, presetJSON(t, "gpt-oss-120b"), `"lm_head"`, `"lm_head", "model.layers.*.mlp.experts"`)
	c, err = Parse("g.json", []byte(g))
	require.NoError(t, err)
	assert.Equal(t, dtype.BF16Weights, c.Quant.RoutedExperts)

	// Unquantized config: every class in torch_dtype.
	q := edit(t, presetJSON(t, "qwen3-30b-a3b"), `"torch_dtype": "bfloat16"`, `"torch_dtype": "float16"`)
	c, err = Parse("q.json", []byte(q))
	require.NoError(t, err)
	assert.Equal(t, "fp16", c.Quant.RoutedExperts.Name)
	assert.Equal(t, 2.0, c.Quant.Base.BytesPerParam())
}

// TestOptionalKeys: head_dim left out or null is derived (hidden_size /
// num_attention_heads); mlp_only_layers in range and sliding_window 0 are
// accepted.
func TestOptionalKeys(t *testing.T) {
	mixtral := presetJSON(t, "mixtral-8x7b")
	qwen := presetJSON(t, "qwen3-30b-a3b")
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, c *Config)
	}{
		{"head_dim absent", mixtral, func(t *testing.T, c *Config) { assert.Equal(t, 128, c.Attn.HeadDim) }},
		{"head_dim null", edit(t, mixtral, `"hidden_size": 4096,`, `"hidden_size": 4096, "head_dim": null,`),
			func(t *testing.T, c *Config) { assert.Equal(t, 128, c.Attn.HeadDim) }},
		{"head_dim given", edit(t, qwen, `"head_dim": 128`, `"head_dim": 96`), func(t *testing.T, c *Config) { assert.Equal(t, 96, c.Attn.HeadDim) }},
		{"mlp_only_layers first and last", edit(t, qwen, `"mlp_only_layers": []`, `"mlp_only_layers": [0, 47]`),
			func(t *testing.T, c *Config) { assert.Equal(t, 46, c.MoELayers()) }},
		{"sliding_window 0", edit(t, presetJSON(t, "gpt-oss-120b"), `"sliding_window": 128`, `"sliding_window": 0`),
			func(t *testing.T, c *Config) { assert.Zero(t, c.Attn.SlidingLayers) }},
		{"group_size at in-features", edit(t, presetJSON(t, "kimi-k2.5"), `"group_size": 32`, `"group_size": 2048`),
			func(t *testing.T, c *Config) { assert.Equal(t, 2048, c.Quant.RoutedExperts.GroupSize) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("ok.json", []byte(tt.src))
			require.NoError(t, err)
			require.NoError(t, c.Validate())
			tt.check(t, c)
		})
	}
}

// TestConfigErrors: each bad input gives one error naming the file, the
// position or key, and the problem.
func TestConfigErrors(t *testing.T) {
	mixtral := presetJSON(t, "mixtral-8x7b")
	k25 := presetJSON(t, "kimi-k2.5")
	ds := presetJSON(t, "deepseek-v3")
	tests := []struct {
		name string
		src  string
		want []string // substrings of the error, in order of appearance not required
	}{
		{"syntax error", "{\n  \"architectures\": [\"MixtralForCausalLM\"],\n  \"hidden_size\": 4096,,\n}", []string{"bad.json:3:23: JSON syntax error", "invalid character ','"}},
		{"truncated", "{\n  \"architectures\": [", []string{"bad.json:2:", "unexpected end of JSON input"}},
		{"empty", "", []string{"bad.json:1:1: JSON syntax error"}},
		{"not an object", "[1, 2]", []string{"bad.json:1:1: want a JSON object"}},
		{"unsupported architecture", edit(t, mixtral, `"MixtralForCausalLM"`, `"FalconForCausalLM"`),
			[]string{"bad.json:2:5: architectures:", `unsupported architecture "FalconForCausalLM"`, "supported: ", "DeepseekV3ForCausalLM", "KimiK25ForConditionalGeneration", "MixtralForCausalLM"}},
		{"missing architectures", `{"hidden_size": 4096}`, []string{"bad.json: architectures: missing or empty"}},
		{"architectures wrong type", `{"architectures": "MixtralForCausalLM"}`, []string{"bad.json:1:", "architectures: want a list of strings, got a string"}},
		{"hidden_size zero", edit(t, mixtral, `"hidden_size": 4096`, `"hidden_size": 0`), []string{"bad.json:", "hidden_size: must be > 0, got 0"}},
		{"hidden_size missing", edit(t, mixtral, `"hidden_size": 4096,`, ``), []string{"bad.json: hidden_size: must be > 0, got 0"}},
		{"hidden_size string", edit(t, mixtral, `"hidden_size": 4096`, `"hidden_size": "4096"`), []string{"bad.json:", "hidden_size: want an integer, got a string"}},
		{"hidden_size float", edit(t, mixtral, `"hidden_size": 4096`, `"hidden_size": 4096.5`), []string{"bad.json:", "hidden_size: want an integer, got 4096.5"}},
		{"heads not divisible by kv heads", edit(t, mixtral, `"num_key_value_heads": 8`, `"num_key_value_heads": 5`),
			[]string{"num_key_value_heads: num_attention_heads (32) is not a multiple of num_key_value_heads (5)"}},
		{"top-k above experts", edit(t, mixtral, `"num_experts_per_tok": 2`, `"num_experts_per_tok": 9`),
			[]string{"num_experts_per_tok: must be in [1, num_local_experts=8], got 9"}},
		{"no experts", edit(t, mixtral, `"num_local_experts": 8`, `"num_local_experts": 0`), []string{"num_local_experts: must be > 0"}},
		{"layers absurd", edit(t, mixtral, `"num_hidden_layers": 32`, `"num_hidden_layers": 99999999`), []string{"num_hidden_layers: 99999999 is implausibly large"}},
		{"dense layers beyond layers", edit(t, ds, `"first_k_dense_replace": 3`, `"first_k_dense_replace": 62`), []string{"first_k_dense_replace: must be in [0, num_hidden_layers=61], got 62"}},
		{"MLA without kv_lora_rank", edit(t, ds, `"kv_lora_rank": 512,`, ``), []string{"bad.json: kv_lora_rank: must be > 0, got 0"}},
		{"unknown quant method", edit(t, ds, `"quant_method": "fp8"`, `"quant_method": "awq"`),
			[]string{"bad.json:", "quantization_config.quant_method: unsupported quantization method \"awq\"; supported: compressed-tensors, fp8, modelopt, mxfp4"}},
		{"bad fp8 block", edit(t, ds, "\"weight_block_size\": [\n      128,\n      128\n    ]", `"weight_block_size": [128]`),
			[]string{"quantization_config.weight_block_size: want two positive sizes [out, in], got [128]"}},
		{"invalid ignore regex", edit(t, k25, `"lm_head",`, `"lm_head", "re:(",`),
			[]string{"bad.json:", "text_config.quantization_config.ignore: invalid regex \"re:(\""}},
		{"unsupported num_bits", edit(t, k25, `"num_bits": 4`, `"num_bits": 3`), []string{"text_config.quantization_config.num_bits: config group \"group_0\": unsupported num_bits 3"}},
		{"wrapper without text_config", `{"architectures": ["KimiK25ForConditionalGeneration"]}`, []string{"bad.json: text_config: KimiK25ForConditionalGeneration keeps its text model under text_config, which is missing"}},
		{"text_config not an object", `{"architectures": ["KimiK25ForConditionalGeneration"], "text_config": 3}`, []string{"bad.json:1:", "text_config: want a JSON object"}},
		{"unsupported dtype", edit(t, mixtral, `"torch_dtype": "bfloat16"`, `"torch_dtype": "int8"`), []string{"torch_dtype: unsupported dtype \"int8\""}},
		{"llama-4 renamed keys, one pass", edit(t, presetJSON(t, "llama-4-maverick"), `"intermediate_size": 8192,`, `"intermediate_size": 0,`),
			[]string{"text_config.intermediate_size: must be > 0, got 0"}},
		{"llama-4 dense width", edit(t, presetJSON(t, "llama-4-maverick"), `"intermediate_size_mlp": 16384,`, ``),
			[]string{"text_config.intermediate_size_mlp: must be > 0 with 24 dense layers, got 0"}},
		{"head_dim zero", edit(t, presetJSON(t, "qwen3-30b-a3b"), `"head_dim": 128`, `"head_dim": 0`), []string{"bad.json:10:", "head_dim: must be > 0, got 0"}},
		{"head_dim negative", edit(t, presetJSON(t, "gpt-oss-120b"), `"head_dim": 64`, `"head_dim": -64`), []string{"bad.json:9:", "head_dim: must be > 0, got -64"}},
		{"head_dim negative llama-4", edit(t, presetJSON(t, "llama-4-maverick"), `"head_dim": 128`, `"head_dim": -1`), []string{"text_config.head_dim: must be > 0, got -1"}},
		{"head_dim zero mixtral", edit(t, mixtral, `"hidden_size": 4096,`, `"hidden_size": 4096, "head_dim": 0,`), []string{"bad.json:", "head_dim: must be > 0, got 0"}},
		{"mlp_only_layers beyond layers", edit(t, presetJSON(t, "qwen3-30b-a3b"), `"mlp_only_layers": []`, `"mlp_only_layers": [3, 48]`),
			[]string{"bad.json:17:", "mlp_only_layers: entry 1 is 48, not a layer index in [0, num_hidden_layers=48)"}},
		{"mlp_only_layers negative", edit(t, presetJSON(t, "qwen3-30b-a3b"), `"mlp_only_layers": []`, `"mlp_only_layers": [-1]`),
			[]string{"mlp_only_layers: entry 0 is -1"}},
		{"group_size above in-features", edit(t, k25, `"group_size": 32`, `"group_size": 4096`),
			[]string{"bad.json:", `text_config.quantization_config.group_size: config group "group_0": group_size 4096 exceeds the 2048 input features of routed experts down_proj`}},
		{"group_size absurd", edit(t, k25, `"group_size": 32`, `"group_size": 9223372036854775807`), []string{"group_size: config group \"group_0\": group_size 9223372036854775807 exceeds"}},
		{"group_size zero", edit(t, k25, `"group_size": 32`, `"group_size": 0`), []string{"group_size: config group \"group_0\": strategy \"group\" needs a positive group_size"}},
		{"group_size negative", edit(t, k25, `"group_size": 32`, `"group_size": -32`), []string{"needs a positive group_size"}},
		{"group_size float", edit(t, k25, `"group_size": 32`, `"group_size": 32.5`), []string{"group_size: want an integer, got 32.5"}},
		{"group_size string", edit(t, k25, `"group_size": 32`, `"group_size": "32"`), []string{"group_size: want an integer, got a string"}},
		{"sliding_window negative gpt-oss", edit(t, presetJSON(t, "gpt-oss-120b"), `"sliding_window": 128`, `"sliding_window": -1`),
			[]string{"bad.json:82:", "sliding_window: must be >= 0 (0, null or absent: no window), got -1"}},
		// Session 9: a negative max_position_embeddings reached serve as
		// "model: must be in [0, 16777216] tokens" with no file, line or key.
		{"max_position_embeddings negative", edit(t, presetJSON(t, "qwen3-30b-a3b"), `"max_position_embeddings": 40960`, `"max_position_embeddings": -5`),
			[]string{"bad.json:15:", "max_position_embeddings: must be >= 0 (0 or absent: not given), got -5"}},
		{"max_position_embeddings absurd", edit(t, mixtral, `"max_position_embeddings": 32768`, `"max_position_embeddings": 1099511627776`),
			[]string{"bad.json:", "max_position_embeddings: 1099511627776 is implausibly large (limit 16777216)"}},
		{"sliding_window negative mixtral", edit(t, mixtral, `"sliding_window": null`, `"sliding_window": -4096`), []string{"bad.json:23:", "sliding_window: must be >= 0"}},
		{"sliding_window negative qwen3", edit(t, presetJSON(t, "qwen3-30b-a3b"), `"sliding_window": null`, `"sliding_window": -1`), []string{"bad.json:31:", "sliding_window: must be >= 0"}},
		{"attention_chunk_size negative", edit(t, presetJSON(t, "llama-4-maverick"), `"attention_chunk_size": 8192`, `"attention_chunk_size": -8192`),
			[]string{"text_config.attention_chunk_size: must be >= 0"}},
		{"gpt-oss layer_types length", edit(t, presetJSON(t, "gpt-oss-120b"), "\"layer_types\": [\n    \"sliding_attention\",", "\"layer_types\": ["),
			[]string{"layer_types: has 35 entries for 36 layers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("bad.json", []byte(tt.src))
			require.Error(t, err, "parsed: %+v", c)
			assert.Nil(t, c)
			msg := err.Error()
			assert.NotContains(t, msg, "\n", "one line")
			for _, w := range tt.want {
				assert.Contains(t, msg, w)
			}
			var ce *ConfigError
			assert.True(t, errors.As(err, &ce), "a *ConfigError: %T", err)
		})
	}
}

func TestLoadFileAndResolve(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(p, []byte(presetJSON(t, "mixtral-8x7b")), 0o644))
	c, err := LoadFile(p)
	require.NoError(t, err)
	assert.Equal(t, p, c.Name)
	r, err := Resolve(p)
	require.NoError(t, err)
	assert.Equal(t, c, r)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"architectures\": [\"X\"]\n}"), 0o644))
	_, err = Resolve(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad+":2:")
	assert.Contains(t, err.Error(), `unsupported architecture "X"`)

	// Errors keep the path as given, directory included.
	_, err = LoadFile(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read model config: "+dir+": is a directory")
	_, err = Resolve(dir)
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("model %q: is a directory, not a config.json (the model's config is %s)", dir, p), err.Error())
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	t.Chdir(sub)
	_, err = LoadFile("../cfg")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read model config: ../cfg: no such file")
	_, err = LoadFile("../bad.json")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "../bad.json:2:"), err.Error())

	_, err = Resolve(filepath.Join(dir, "missing.json"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no such file, and not a preset")
	_, err = Resolve("no-such-model")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown model preset "no-such-model"`)

	// Every error of Resolve is a *ResolveError (the caller's input), with
	// its cause's text; a malformed file's keeps its *ConfigError.
	for _, name := range []string{bad, dir, filepath.Join(dir, "missing.json"), "no-such-model"} {
		_, err = Resolve(name)
		var re *ResolveError
		require.ErrorAs(t, err, &re, name)
		assert.Equal(t, name, re.Name)
		assert.Equal(t, re.Err.Error(), err.Error())
	}
	_, err = Resolve(bad)
	assert.ErrorAs(t, err, new(*ConfigError))
	_, err = ResolveIn("-", strings.NewReader("{"))
	assert.ErrorAs(t, err, new(*ResolveError))

	// Load reads from any fs.FS.
	fsys := fstest.MapFS{"m/config.json": {Data: []byte(presetJSON(t, "qwen3-30b-a3b"))}}
	c, err = Load(fsys, "m/config.json")
	require.NoError(t, err)
	assert.Equal(t, "Qwen3MoeForCausalLM", c.Architecture)
	_, err = Load(fsys, "nope.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read model config")
}

func TestCheckLayout(t *testing.T) {
	int4g128 := dtype.Format{Name: "int4-g128", Bits: 4, GroupSize: 128, ScaleBits: 16, Compute: dtype.BF16}
	qwenInt4 := mustPreset(t, "qwen3-30b-a3b")
	qwenInt4.Quant.RoutedExperts = int4g128
	odd := mustPreset(t, "mixtral-8x7b")
	odd.Attn.Heads, odd.Attn.KVHeads = 48, 6
	tests := []struct {
		name   string
		c      *Config
		l      Layout
		key    string // "" = valid
		substr string
	}{
		{"kimi tp8", mustPreset(t, "kimi-k2.5"), Layout{TP: 8, EP: 1, DP: 1}, "", ""},
		{"kimi tp8 ep8", mustPreset(t, "kimi-k2.5"), Layout{TP: 8, EP: 8, DP: 1}, "", ""},
		{"kimi dp8 ep8 dp-attention", mustPreset(t, "kimi-k2.5"), Layout{TP: 1, EP: 8, DP: 8, DPAttention: true}, "", ""},
		{"kimi tp3", mustPreset(t, "kimi-k2.5"), Layout{TP: 3, EP: 1, DP: 1}, "TP", "tp=3 does not divide the 64 attention heads"},
		{"mixtral tp3 dp-attention skips heads", mustPreset(t, "mixtral-8x7b"), Layout{TP: 3, EP: 1, DP: 1, DPAttention: true}, "", ""},
		{"kimi tp3 dp-attention: int4 g32 experts 2048/3", mustPreset(t, "kimi-k2.5"), Layout{TP: 3, EP: 1, DP: 1, DPAttention: true}, "TP",
			"routed_experts down_proj of kimi-k2.5: 683 input rows per rank at 3-way split are not a multiple of the quantization group 32"},
		{"kimi ep5", mustPreset(t, "kimi-k2.5"), Layout{TP: 8, EP: 5, DP: 1}, "EP", "ep=5 does not divide the 384 routed experts"},
		{"kimi ep16 on 8 gpus", mustPreset(t, "kimi-k2.5"), Layout{TP: 8, EP: 16, DP: 1}, "EP", "ep=16 does not divide tp x dp = 8"},
		{"tp0", mustPreset(t, "kimi-k2.5"), Layout{TP: 0, EP: 1, DP: 1}, "TP", "must be >= 1"},
		{"ep0", mustPreset(t, "kimi-k2.5"), Layout{TP: 1, EP: 0, DP: 1}, "EP", "must be >= 1"},
		{"dp0", mustPreset(t, "kimi-k2.5"), Layout{TP: 1, EP: 1, DP: 0}, "DP", "must be >= 1"},
		{"qwen235 tp8 (kv 4 replicated)", mustPreset(t, "qwen3-235b-a22b"), Layout{TP: 8, EP: 1, DP: 1}, "", ""},
		{"kv heads and tp coprime", odd, Layout{TP: 4, EP: 1, DP: 1}, "TP", "tp=4 and the 6 kv heads"},
		{"deepseek fp8 tp32: down_proj 64 rows < block 128", mustPreset(t, "deepseek-v3"), Layout{TP: 32, EP: 1, DP: 1}, "TP", "routed_experts down_proj of deepseek-v3: 64 input rows per rank at 32-way split are not a multiple of the fp8 block 128"},
		{"deepseek fp8 tp16 fits", mustPreset(t, "deepseek-v3"), Layout{TP: 16, EP: 1, DP: 1}, "", ""},
		{"deepseek fp8 tp32 ep32: the shared expert is still split 32 ways", mustPreset(t, "deepseek-v3"), Layout{TP: 32, EP: 32, DP: 1}, "TP", "shared_expert down_proj of deepseek-v3: 64 input rows"},
		{"deepseek fp8 tp16 ep16 fits", mustPreset(t, "deepseek-v3"), Layout{TP: 16, EP: 16, DP: 1}, "", ""},
		{"int4 g128 expert width 768/8=96", qwenInt4, Layout{TP: 8, EP: 1, DP: 1}, "TP", "routed_experts down_proj of qwen3-30b-a3b: 96 input rows per rank at 8-way split are not a multiple of the quantization group 128"},
		{"int4 g128 with ep8 keeps experts whole", qwenInt4, Layout{TP: 8, EP: 8, DP: 1}, "", ""},
		{"gpt-oss tp8 (mxfp4 padded)", mustPreset(t, "gpt-oss-120b"), Layout{TP: 8, EP: 1, DP: 1}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.CheckLayout(tt.l)
			if tt.key == "" {
				assert.NoError(t, err)
				return
			}
			var le *LayoutError
			require.True(t, errors.As(err, &le), "want *LayoutError, got %v", err)
			assert.Equal(t, tt.key, le.Field)
			assert.Contains(t, le.Msg, tt.substr)
			assert.True(t, strings.HasPrefix(err.Error(), tt.key+": "))
		})
	}
}

func TestValidateFields(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Config)
		field  string
	}{
		{"hidden", func(c *Config) { c.Hidden = -1 }, "hidden_size"},
		{"vocab", func(c *Config) { c.Vocab = 0 }, "vocab_size"},
		{"topk zero", func(c *Config) { c.MoE.TopK = 0 }, "num_experts_per_tok"},
		{"shared without width", func(c *Config) { c.MoE.SharedInter = 0 }, "n_shared_experts"},
		{"moe step", func(c *Config) { c.MoEStep = 0 }, "moe_layer_freq"},
		{"all dense", func(c *Config) { c.DenseLayers = c.Layers }, "num_hidden_layers"},
		{"dense without width", func(c *Config) { c.DenseInter = 0 }, "intermediate_size"},
		{"rope", func(c *Config) { c.Attn.QKRopeDim = 0 }, "qk_rope_head_dim"},
		{"mtp negative", func(c *Config) { c.MTPLayers = -1 }, "num_nextn_predict_layers"},
		{"indexer half set", func(c *Config) { c.Attn.IndexHeads = 4 }, "index_head_dim"},
		{"no format", func(c *Config) { c.Quant.Router = dtype.Format{} }, "quantization_config"},
		{"no base", func(c *Config) { c.Quant.Base = dtype.Format{} }, "torch_dtype"},
	}
	for _, tt := range tests {
		c := mustPreset(t, "deepseek-v3")
		tt.mutate(c)
		err := c.Validate()
		var fe *FieldError
		require.True(t, errors.As(err, &fe), "%s: %v", tt.name, err)
		assert.Equal(t, tt.field, fe.Field, tt.name)
	}
}
