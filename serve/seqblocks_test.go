package serve

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

// TestSeqBlocks: a fixed per-request charge (recurrent state, window KV)
// takes blocks from the same cache: the same load on the same cache holds
// fewer requests at once, and the peak use counts the charge.
func TestSeqBlocks(t *testing.T) {
	run := func(seqBlocks int) *Result {
		cfg := DefaultConfig(VLLM, "H200", 141e9)
		cfg.Memory = Memory{KVBytesPerToken: 100, KVCapacity: 100 * 16 * 400, BlockSize: 16, Groups: 1, SeqBlocks: seqBlocks}
		cfg.Workload = Workload{Requests: 64, MaxConcurrency: 64, RequestRate: math.Inf(1), Burstiness: 1, InputTokens: 512, OutputTokens: 64}
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		return r
	}
	tests := []struct {
		name      string
		seqBlocks int
	}{{"no fixed state", 0}, {"8 blocks per request", 8}, {"32 blocks per request", 32}}
	var prev *Result
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(tt.seqBlocks)
			assert.Equal(t, 64, r.Completed)
			assert.LessOrEqual(t, r.KVPeakPerGPU, unit.Bytes(100*16*400))
			if prev != nil {
				assert.Less(t, r.MeanBatch, prev.MeanBatch, "a larger fixed charge leaves room for fewer requests")
			}
			prev = r
		})
	}
	cfg := DefaultConfig(VLLM, "H200", 141e9)
	cfg.Memory = Memory{KVBytesPerToken: 100, KVCapacity: 100 * 16 * 400, BlockSize: 16, Groups: 1, SeqBlocks: -1}
	cfg.Workload = Workload{Requests: 1, MaxConcurrency: 1, RequestRate: math.Inf(1), Burstiness: 1, InputTokens: 16, OutputTokens: 1}
	_, err := Run(cfg, realistic)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Memory.SeqBlocks")
}
