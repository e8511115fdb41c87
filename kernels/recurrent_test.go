package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/moecast/moecast/internal/unit"
)

// TestRecurrentKernels: the recurrent kernels' bytes and FLOPs by hand
// (Qwen3.5-35B-A3B's Gated DeltaNet at TP8: 4 value heads of 128 x 128,
// fp32 state), and the bound they run at on an H200.
func TestRecurrentKernels(t *testing.T) {
	c := newCosts(gpu(t, "h200-sxm"), true)
	const h, k, v = 4.0, 128.0, 128.0
	tests := []struct {
		name         string
		shape        RecurrentShape
		prefill      bool
		bytes, flops float64
		bound        string
	}{
		// 32 sequences' states read and written (32 x 4 x 128 x 128 x 4 B x 2)
		// plus q, k, v and the output of 32 tokens in bf16.
		{"decode 32 seqs", RecurrentShape{Seqs: 32, Tokens: 32, Heads: 4, KDim: 128, VDim: 128, StateBytes: 4},
			false, 32*h*k*v*4*2 + 32*h*(2*k+2*v)*2, 32 * h * 4 * k * v, "memory"},
		// 65,536 prefill tokens of one sequence, 64-token chunks: 2(2CK + CV
		// + 2KV) FLOPs per token and head; q, k, v, out in bf16 and the chunk
		// states (1024 chunks + 2) x heads x K x V in fp32. 112 FLOPs per
		// byte: below the H200's ridge, memory-bound.
		{"prefill 65536 tokens", RecurrentShape{Seqs: 1, Tokens: 65536, Heads: 4, KDim: 128, VDim: 128, StateBytes: 4, Chunk: 64},
			true, 65536*h*(2*k+2*v)*2 + (65536/64+2)*h*k*v*4, 65536 * h * 2 * (2*64*k + 64*v + 2*k*v), "memory"},
		// A 256-token chunk: the four kernels' fixed cost dominates.
		{"prefill 256 tokens", RecurrentShape{Seqs: 1, Tokens: 256, Heads: 4, KDim: 128, VDim: 128, StateBytes: 4, Chunk: 64},
			true, 256*h*(2*k+2*v)*2 + (256/64+2)*h*k*v*4, 256 * h * 2 * (2*64*k + 64*v + 2*k*v), "latency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e = c.RecurrentDecode(tt.shape)
			if tt.prefill {
				e = c.RecurrentPrefill(tt.shape)
			}
			assert.InEpsilon(t, tt.bytes, float64(e.Bytes), rel)
			assert.InEpsilon(t, tt.flops, float64(e.FLOPs), rel)
			assert.Equal(t, tt.bound, e.Source.Bound)
			assert.Greater(t, float64(e.Time), float64(unit.TransferTime(e.Bytes, c.GPU.MemBW)), "never faster than DRAM")
			assert.LessOrEqual(t, e.Lo, e.Time)
			assert.GreaterOrEqual(t, e.Hi, e.Time)
		})
	}
}
