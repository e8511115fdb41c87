package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParamsMatchModelCards holds the presets' parameter counts against
// the figures their publishers state, to the precision stated (half a unit
// of the last digit given). Params().Active counts the embedding table (as
// Qwen, Mistral, Meta and NVIDIA's Kimi-K2.5 figure do); OpenAI's gpt-oss
// card does not, so that row compares Active less the embedding.
//
// Differences noted, not asserted: DeepSeek-V3's card gives 14B for the MTP
// module; Params().MTP is 11.6B because the MTP layer's embedding and head
// (stored again in the checkpoint, 2 x 0.93B) are shared with the main
// model and counted once. Kimi-K2.5's MoonViT vision tower (card: 400M) is
// not in any count: the import notes it.
func TestParamsMatchModelCards(t *testing.T) {
	for _, tc := range []struct {
		preset        string
		total, active float64 // as published, in billions
		totalUnit     float64 // precision of the published figure (1 = whole billions)
		activeUnit    float64
		noEmbedding   bool // the card's active count leaves out the embedding table
		source        string
	}{
		{"gpt-oss-120b", 116.83, 5.13, 0.01, 0.01, true, "OpenAI gpt-oss-120b & gpt-oss-20b model card (arXiv 2508.10925), Table 1"},
		{"kimi-k2.5", 1000, 32.86, 100, 0.01, false, "Kimi-K2.5 model card (1T total); NVIDIA technical blog 'Build with Kimi K2.5' (32.86B active)"},
		// Kimi-K2 card: "32B" for what NVIDIA gives as 32.86B on the same text model (rounded down).
		{"kimi-k2", 1000, 32, 100, 2, false, "Kimi-K2-Instruct model card: 1T total, 32B activated"},
		{"deepseek-v3", 671, 37, 1, 1, false, "DeepSeek-V3 model card: 671B total, 37B activated"},
		{"qwen3-235b-a22b", 235, 22, 1, 1, false, "Qwen3-235B-A22B model card: 235B total, 22B activated"},
		{"qwen3-30b-a3b", 30.5, 3.3, 0.1, 0.1, false, "Qwen3-30B-A3B model card: 30.5B total, 3.3B activated"},
		{"mixtral-8x7b", 46.7, 12.9, 0.1, 0.1, false, "Mistral AI, 'Mixtral of experts': 46.7B total, 12.9B per token"},
		{"llama-4-maverick", 400, 17, 1, 1, false, "Llama-4-Maverick-17B-128E model card: 400B total, 17B active"},
	} {
		c, err := Preset(tc.preset)
		require.NoError(t, err)
		p := c.Params()
		active := p.Active
		if tc.noEmbedding {
			active -= p.PerClass[ClassEmbedding]
		}
		// Within half a unit of the last published digit, plus 1% for
		// a figure rounded to the unit below (37.55B published as 37B).
		within := func(got, want, unit float64) bool {
			return math.Abs(got/1e9-want) <= unit/2+0.01*want
		}
		assert.True(t, within(p.Total, tc.total, tc.totalUnit), "%s total %.2fB, card %.2fB (%s)", tc.preset, p.Total/1e9, tc.total, tc.source)
		assert.True(t, within(active, tc.active, tc.activeUnit), "%s active %.2fB, card %.2fB (%s)", tc.preset, active/1e9, tc.active, tc.source)
	}
}
