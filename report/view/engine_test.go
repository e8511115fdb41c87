package view

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
)

// TestEngineKVCapacityNotNegative: weights larger than the GPU's share
// leave a negative KV capacity in serve's config; the JSON reports 0 (the
// points say they cannot be served), a positive one as it is.
func TestEngineKVCapacityNotNegative(t *testing.T) {
	c := serve.DefaultConfig(serve.SGLang, "H200", 141e9)
	c.Memory = serve.Memory{KVBytesPerToken: 100, KVCapacity: -14.6e9, BlockSize: 16, Groups: 1}
	assert.Zero(t, engineOf(c).KVCapacityGBPerGPU)
	c.Memory.KVCapacity = 14.6e9
	assert.InDelta(t, 14.6, engineOf(c).KVCapacityGBPerGPU, 1e-9)
}

// TestPoolSettings: the disagg line lists each pool's own engine settings
// (those that replace the scenario's, which the engine line shows), by
// their scenario keys, and nothing for a pool that sets none.
func TestPoolSettings(t *testing.T) {
	assert.Equal(t, "", poolSettings(scenarios.PoolSpec{Workers: 2, GPUs: 8}))
	assert.Equal(t, "; max_num_seqs 45000, max_num_batched_tokens 36864, max_prefill_tokens 32768, max_total_tokens 524288, scheduler_recv_interval 10, gpu_memory_utilization 0.82",
		poolSettings(scenarios.PoolSpec{MaxNumSeqs: 45000, MaxNumBatchedTokens: 36864, MaxPrefillTokens: 32768, MaxTotalTokens: 524288, SchedulerRecvInterval: 10, MemFraction: 0.82}))
}
