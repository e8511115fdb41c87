package model

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSharedExpertsFused checks that n_shared_experts > 1 widens the fused
// shared-expert MLP (DeepSeek fuses the shared experts into one MLP of width
// n_shared_experts x moe_intermediate_size), so its bytes scale with the count.
// Every shipped config has one shared expert, so the count is edited here.
func TestSharedExpertsFused(t *testing.T) {
	data, err := os.ReadFile("presets/deepseek-ai--DeepSeek-V3_config.json")
	require.NoError(t, err)
	one, err := Parse("deepseek-v3.json", data)
	require.NoError(t, err)
	require.Equal(t, 1, one.MoE.Shared)

	edited := strings.Replace(string(data), `"n_shared_experts": 1`, `"n_shared_experts": 2`, 1)
	require.NotEqual(t, string(data), edited, "fixture no longer spells n_shared_experts as expected")
	two, err := Parse("deepseek-v3-2shared.json", []byte(edited))
	require.NoError(t, err)

	assert.Equal(t, 2, two.MoE.Shared)
	assert.Equal(t, 2*one.MoE.Inter, two.MoE.SharedInter)
	l := Layout{TP: 1, EP: 1, DP: 1}
	w1, w2 := one.Weights(l), two.Weights(l)
	assert.InEpsilon(t, 2*float64(w1.Total[ClassSharedExpert]), float64(w2.Total[ClassSharedExpert]), 1e-9)
	assert.Equal(t, w1.Total[ClassRoutedExperts], w2.Total[ClassRoutedExperts])
}
