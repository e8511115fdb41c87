package model

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedJSON returns a shared config.json's text, skipping the test when
// the shared data is absent.
func sharedJSON(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedConfigs, name+"_config.json"))
	if err != nil {
		t.Skipf("shared model configs not present at %s", sharedConfigs)
	}
	return string(b)
}

// TestNewFamilyErrors: a broken layer pattern of the new families is
// refused in one line naming the file, position and key, never priced.
func TestNewFamilyErrors(t *testing.T) {
	qwen := sharedJSON(t, "Qwen--Qwen3.5-35B-A3B")
	nemo := sharedJSON(t, "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
	gemma := sharedJSON(t, "google--gemma-4-26B-A4B")
	deci := sharedJSON(t, "nvidia--Llama-3_3-Nemotron-Super-49B-v1")
	v4 := sharedJSON(t, "deepseek-ai--DeepSeek-V4-Flash")
	tests := []struct {
		name, src, key, want string
	}{
		{"qwen3.5 unknown layer type", strings.Replace(qwen, `"linear_attention"`, `"mamba"`, 1),
			"text_config.layer_types", `entry 0: unknown layer type "mamba"`},
		{"qwen3.5 value heads", strings.Replace(qwen, `"linear_num_value_heads": 32`, `"linear_num_value_heads": 33`, 1),
			"text_config.linear_num_value_heads", "must be a positive multiple of linear_num_key_heads (16), got 33"},
		{"qwen3.5 ssm dtype", strings.Replace(qwen, `"mamba_ssm_dtype": "float32"`, `"mamba_ssm_dtype": "int3"`, 1),
			"text_config.mamba_ssm_dtype", `unsupported dtype "int3"`},
		{"nemotron-h unknown block", strings.Replace(nemo, `"hybrid_override_pattern": "MEM`, `"hybrid_override_pattern": "MXM`, 1),
			"hybrid_override_pattern", `entry 1: unknown block "X"`},
		{"gemma-4 layer count", strings.Replace(gemma, `"num_hidden_layers": 30`, `"num_hidden_layers": 31`, 1),
			"text_config.layer_types", "has 30 entries for 31 layers"},
		{"decilm ffn_mult", strings.Replace(deci, `"ffn_mult": 2.625`, `"ffn_mult": -1`, 1),
			"block_configs", "entry 0: ffn_mult must be in (0, 64]"},
		{"deepseek-v4 compress ratios", strings.Replace(v4, `"num_hidden_layers": 43`, `"num_hidden_layers": 50`, 1),
			"compress_ratios", "has 44 entries for 50 layers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.json", []byte(tt.src))
			require.Error(t, err)
			var ce *ConfigError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, tt.key, ce.Key)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// TestNewFamilyLayerKinds: the new families' layer kinds, counts and per-sequence
// state from their shipped config.json.
func TestNewFamilyLayerKinds(t *testing.T) {
	tests := []struct {
		file  string
		kinds map[string]int
		state float64 // recurrent state per sequence, bytes (0: none)
	}{
		// 30 GDN layers x 32 heads x 128 x 128 x 4 B (float32) plus the
		// conv state (3 x (2x16x128 + 32x128) x 2 B).
		{"Qwen--Qwen3.5-35B-A3B", map[string]int{"gdn moe": 30, "full moe": 10}, 30 * (32*128*128*4 + 3*(2*16*128+32*128)*2)},
		{"nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", map[string]int{"mamba2": 23, "attention": 6, "moe": 23},
			23 * (64*128*64*4 + 3*(64*64+2*8*128)*2)},
		{"google--gemma-4-26B-A4B", map[string]int{"local moe": 25, "global moe": 5}, 0},
		{"XiaomiMiMo--MiMo-V2-Flash", map[string]int{"swa moe": 39, "full moe": 8, "full dense": 1}, 0},
		{"stepfun-ai--Step-3.7-Flash", map[string]int{"full dense": 1, "swa dense": 2, "full moe": 11, "swa moe": 31}, 0},
		{"deepseek-ai--DeepSeek-V4-Flash", map[string]int{"swa moe": 2, "c4 moe": 21, "c128 moe": 20}, 0},
		{"moonshotai--Kimi-K3", map[string]int{"kda dense": 1, "kda moe": 68, "mla moe": 24},
			69 * (96*128*128*4 + 3*(3*96*128)*2)},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := Parse(tt.file, []byte(sharedJSON(t, tt.file)))
			require.NoError(t, err)
			got := map[string]int{}
			for _, k := range c.Kinds {
				got[k.Name] += k.Count
			}
			assert.Equal(t, tt.kinds, got)
			assert.InDelta(t, tt.state, c.RecurrentStateBytes(), 1)
		})
	}
}
