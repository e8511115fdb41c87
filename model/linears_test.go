package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFusedQKVA: Kimi-K2.5 (q_lora_rank 1536) runs q_a and kv_a as one
// replicated 7168 -> 1536 + 576 GEMM; a GQA model has none.
func TestFusedQKVA(t *testing.T) {
	kimi := mustPreset(t, "kimi-k2.5")
	f, ok := kimi.FusedQKVA()
	require.True(t, ok)
	assert.Equal(t, Linear{Name: "fused_qkv_a_proj", In: 7168, Out: 1536 + 576, Split: Replicated, Format: kimi.Quant.Base}, f)
	_, ok = mustPreset(t, "gpt-oss-120b").FusedQKVA()
	assert.False(t, ok)
}
