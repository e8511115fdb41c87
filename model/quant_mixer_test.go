package model

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
)

// qwen35FP8 is the corpus's Qwen3.5-397B-A17B-FP8 config (the release's
// quantization_config on the model's config.json) with its
// modules_to_not_convert passed through edit.
func qwen35FP8(t *testing.T, edit func([]any) []any) *Config {
	t.Helper()
	data, err := os.ReadFile("../validate/corpus/configs/derived--Qwen3.5-397B-A17B-FP8_config.json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	q := m["quantization_config"].(map[string]any)
	q["modules_to_not_convert"] = edit(q["modules_to_not_convert"].([]any))
	out, err := json.Marshal(m)
	require.NoError(t, err)
	c, err := Parse("qwen35-fp8.json", out)
	require.NoError(t, err)
	return c
}

// gdnLinears is the formats of the first Gated DeltaNet kind's projections.
func gdnLinears(t *testing.T, c *Config) map[string]dtype.Format {
	t.Helper()
	for _, k := range c.Kinds {
		if k.Mixer == MixGDN {
			got := map[string]dtype.Format{}
			for _, l := range c.MixerLinears(&k) {
				got[l.Name] = l.Format
			}
			return got
		}
	}
	t.Fatal("no Gated DeltaNet layer kind")
	return nil
}

func without(drop ...string) func([]any) []any {
	return func(l []any) []any {
		var out []any
		for _, e := range l {
			keep := true
			for _, d := range drop {
				if strings.HasSuffix(e.(string), d) {
					keep = false
				}
			}
			if keep {
				out = append(out, e)
			}
		}
		return out
	}
}

// TestMixerProjectionFormats: the Gated DeltaNet projections take their
// own checkpoint modules' format. The FP8 release lists in_proj_a and
// in_proj_b (under the wrapper's "model.language_model." prefix) in
// modules_to_not_convert, so the fused in_proj_ba is bf16 while
// in_proj_qkvz and out_proj stay block fp8; without those entries
// in_proj_ba is fp8 too; a fused projection whose shards differ takes the
// first shard's format (in_proj_b) and says so.
func TestMixerProjectionFormats(t *testing.T) {
	keep := func(l []any) []any { return l }
	c := qwen35FP8(t, keep)
	got := gdnLinears(t, c)
	assert.Equal(t, dtype.FP8Block128, c.Quant.Attention)
	assert.Equal(t, "bf16", got["in_proj_ba"].Name)
	assert.Equal(t, dtype.FP8Block128, got["in_proj_qkvz"])
	assert.Equal(t, dtype.FP8Block128, got["out_proj"])
	assert.Equal(t, c.Quant.Base, got["conv1d"])
	assert.Equal(t, map[string]dtype.Format{"in_proj_ba": c.Quant.Base}, c.Quant.MixerLinear)

	c = qwen35FP8(t, without("linear_attn.in_proj_a", "linear_attn.in_proj_b"))
	got = gdnLinears(t, c)
	assert.Equal(t, dtype.FP8Block128, got["in_proj_ba"])
	assert.Nil(t, c.Quant.MixerLinear)

	c = qwen35FP8(t, without("linear_attn.in_proj_a"))
	got = gdnLinears(t, c)
	assert.Equal(t, c.Quant.Base, got["in_proj_ba"], "in_proj_b, the first shard, is bf16")
	assert.Contains(t, strings.Join(c.Notes, "\n"), "the shards of in_proj_ba differ")
}

// TestFP8SkipListWrapperPrefix: an fp8 modules_to_not_convert entry under
// the multimodal wrapper's prefix names moecast's module without it: the
// first full-attention layer's o_proj listed as
// "model.language_model.layers.3.self_attn.o_proj" is read as bf16 (a GQA
// class whose projections differ keeps q_proj's format and notes the
// difference: attentionSplit), and the GDN out_proj listed so is bf16.
func TestFP8SkipListWrapperPrefix(t *testing.T) {
	c := qwen35FP8(t, func(l []any) []any {
		return append(l, "model.language_model.layers.3.self_attn.o_proj", "model.language_model.layers.0.linear_attn.out_proj")
	})
	assert.Equal(t, dtype.FP8Block128, c.Quant.Attention)
	assert.Contains(t, strings.Join(c.Notes, "\n"), "model.layers.3.self_attn.o_proj: bf16")
	assert.Equal(t, "bf16", gdnLinears(t, c)["out_proj"].Name)
	c = qwen35FP8(t, func(l []any) []any { return l })
	assert.NotContains(t, strings.Join(c.Notes, "\n"), "self_attn.o_proj: bf16")
	assert.Equal(t, dtype.FP8Block128, gdnLinears(t, c)["out_proj"])
}
