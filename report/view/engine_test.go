package view

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
