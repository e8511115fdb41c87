package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImplausibleConfig: physically implausible config.json values are
// refused with the file, line:column, key and what is wrong; JSON type
// errors say what was wanted in JSON's words, never a Go type (issue 8,
// items 3 and 5). Each row was accepted, or worded in Go's terms, before.
func TestImplausibleConfig(t *testing.T) {
	k25 := presetJSON(t, "kimi-k2.5")
	qwen := presetJSON(t, "qwen3-30b-a3b")
	gptoss := presetJSON(t, "gpt-oss-120b")
	tests := []struct {
		name, src, want string
	}{
		{"hidden_size 1e12", edit(t, k25, `"hidden_size": 7168`, `"hidden_size": 1e12`),
			"bad.json:50:23: text_config.hidden_size: want an integer, got 1e12"},
		{"hidden_size huge", edit(t, k25, `"hidden_size": 7168`, `"hidden_size": 16777216`),
			"bad.json:50:5: text_config.hidden_size: 16777216 is implausibly large (limit 65536)"},
		{"layers", edit(t, k25, `"num_hidden_layers": 61`, `"num_hidden_layers": 4096`),
			"bad.json:80:5: text_config.num_hidden_layers: 4096 is implausibly large (limit 1024)"},
		{"experts", edit(t, k25, `"n_routed_experts": 384`, `"n_routed_experts": 1000000`),
			"bad.json:72:5: text_config.n_routed_experts: 1000000 is implausibly large (limit 16384)"},
		{"top-k above experts", edit(t, qwen, `"num_experts_per_tok": 8`, `"num_experts_per_tok": 129`),
			"bad.json:23:3: num_experts_per_tok: must be in [1, num_experts=128], got 129"},
		{"mtp layers", edit(t, k25, `"num_nextn_predict_layers": 0`, `"num_nextn_predict_layers": 1000000`),
			"bad.json:82:5: text_config.num_nextn_predict_layers: 1000000 is implausibly large (limit 64)"},
		{"vocab", edit(t, k25, `"vocab_size": 163840`, `"vocab_size": 16777216`),
			"bad.json:164:5: text_config.vocab_size: 16777216 is implausibly large (limit 2097152)"},
		{"moe intermediate", edit(t, qwen, `"moe_intermediate_size": 768`, `"moe_intermediate_size": 10000000`),
			"bad.json:19:3: moe_intermediate_size: 10000000 is implausibly large (limit 262144)"},
		{"gpt-oss expert width", edit(t, gptoss, `"intermediate_size": 2880`, `"intermediate_size": 10000000`),
			"bad.json:14:3: intermediate_size: 10000000 is implausibly large (limit 262144)"},
		{"heads", edit(t, qwen, `"num_attention_heads": 32`, `"num_attention_heads": 4096`),
			"bad.json:21:3: num_attention_heads: 4096 is implausibly large (limit 1024)"},
		{"head_dim", edit(t, qwen, `"head_dim": 128`, `"head_dim": 100000`),
			"bad.json:10:3: head_dim: 100000 is implausibly large (limit 4096)"},
		{"kv_lora_rank", edit(t, k25, `"kv_lora_rank": 512`, `"kv_lora_rank": 1000000`),
			"bad.json:59:5: text_config.kv_lora_rank: 1000000 is implausibly large (limit 65536)"},
		{"each plausible, together absurd", edit(t, edit(t, k25, `"hidden_size": 7168`, `"hidden_size": 65536`), `"n_routed_experts": 384`, `"n_routed_experts": 16384`),
			"bad.json:72:5: text_config.n_routed_experts: the dimensions give 396T parameters (396T in routed_experts), implausibly many (limit 100T)"},
		{"architectures not a list", edit(t, qwen, `"architectures": [`, `"architectures": 5, "x": [`),
			"bad.json:2:20: architectures: want a list of strings, got a number"},
		{"quantization_config not an object", edit(t, k25, `"quantization_config": {`, `"quantization_config": [], "q": {`),
			"text_config.quantization_config: want an object, got a list"},
		{"invalid regex", edit(t, k25, `"lm_head",`, `"lm_head", "re:(",`),
			`text_config.quantization_config.ignore: invalid regex "re:(": missing closing )`},
		{"block size as JSON writes it", edit(t, presetJSON(t, "deepseek-v3"), "\"weight_block_size\": [\n      128,", "\"weight_block_size\": [\n      0,"),
			"quantization_config.weight_block_size: want two positive sizes [out, in], got [0, 128]"},
		{"boolean for a count", edit(t, qwen, `"num_experts": 128`, `"num_experts": true`),
			"num_experts: want an integer, got a boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("bad.json", []byte(tt.src))
			require.Error(t, err, "parsed: %+v", c)
			msg := err.Error()
			assert.NotContains(t, msg, "\n", "one line")
			assert.True(t, strings.HasPrefix(msg, "bad.json:"), "names file and position: %q", msg)
			assert.Contains(t, msg, tt.want)
			for _, leak := range []string{"[]string", "model.", "int64", "JSON string", "JSON number", "strconv", "Go struct", "error parsing regexp", "(?:"} {
				assert.NotContains(t, msg, leak, "Go internals in %q", msg)
			}
			var ce *ConfigError
			assert.True(t, errors.As(err, &ce), "a *ConfigError: %T", err)
		})
	}
}

// TestPresetsWithinLimits: every shipped model is well inside the
// plausibility limits (no limit set just above one of them).
func TestPresetsWithinLimits(t *testing.T) {
	for _, n := range PresetNames() {
		c, err := Preset(n)
		require.NoError(t, err, n)
		p := c.Params()
		assert.Less(t, p.Total+p.MTP, maxParams/50, n)
		assert.LessOrEqual(t, c.Layers*4, maxLayers, n)
		assert.LessOrEqual(t, c.Hidden*4, maxHidden, n)
		assert.LessOrEqual(t, c.MoE.Experts*4, maxExperts, n)
	}
}
