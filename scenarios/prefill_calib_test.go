package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/sim"
)

// A step with a prefill chunk names the embedded h200-sxm prefill table
// that answers as the source of its prefill attention: the perf
// database's vLLM prefill tables, which answer ahead of calib gpu's
// (calib.Prefer): GQA for gpt-oss (d64, 64/8 heads at TP1), MLA's
// un-absorbed form for Kimi-K2.5 (8 heads at TP8).
func TestPrefillAttentionSource(t *testing.T) {
	tests := []struct {
		scenario, op, table string
		note                string // in the Source note
	}{
		// the chunk's 1024 cached tokens are beyond the engine rows (prefix
		// 0): calib gpu's table, which measured prefixes, scaled to vLLM's
		{"gpt-oss-120b-h200-tp1", "gqa prefill attention", "embedded:h200-sxm#prefill.moecast.d64.kv-bf16",
			"the prefix is beyond embedded:h200-sxm#prefill.vllm-0.24.0.d64.kv-bf16"},
		{"kimi-k2.5-h200-nvlink-tp8", "mla prefill attention (un-absorbed)", "embedded:h200-sxm#prefill.moecast.q192-v128.kv-bf16",
			"the prefix is beyond embedded:h200-sxm#prefill.vllm-0.14.0.mla.d192-128.kv-bf16"},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			sc, err := Embedded(tt.scenario)
			require.NoError(t, err)
			sm, err := sc.Sim()
			require.NoError(t, err)
			ops, err := sm.ExplainBatch([]sim.Seq{{Query: 2048, Context: 1024, Prefill: true}, {Query: 1, Context: 3000}})
			require.NoError(t, err)
			found := false
			for _, o := range ops {
				if o.Name == tt.op {
					found = true
					assert.Equal(t, tt.table, o.Estimate.Source.Table)
					assert.Contains(t, o.Estimate.Source.Note, tt.note)
					assert.Positive(t, o.Estimate.Time)
				}
			}
			assert.True(t, found, "no op %q", tt.op)
		})
	}
}
