package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
)

func TestMemory(t *testing.T) {
	for _, st := range setups {
		t.Run(st.name, func(t *testing.T) {
			c := st.config(t)
			s := st.sim(t)
			const ctx = 4096
			p, err := s.Step(8, ctx)
			require.NoError(t, err)
			mem := p.Memory
			w := c.Model.Weights(s.cfg.Layout)
			if st.spec.Method != SpecEAGLE3 {
				assert.InEpsilon(t, float64(w.PerGPUTotal(st.spec.Method == SpecMTP)), float64(mem.Weights), 1e-12, "weights per GPU")
			} else {
				assert.Greater(t, mem.Weights, w.PerGPUTotal(false), "EAGLE-3 head adds weights")
			}
			assert.Equal(t, OtherReserve+ncclReserve(st.gpus), mem.Reserve)
			usable := unit.Bytes(float64(c.GPU.EngineMemory())*0.9) - mem.Weights - mem.Reserve
			assert.InEpsilon(t, float64(usable), float64(mem.Usable), 1e-12)
			kvTok := c.Model.KVBytesPerTokenPerGPU(c.KVCache, s.cfg.Layout)
			if st.spec.Method == SpecNone || st.spec.Method == SpecNgram {
				assert.Equal(t, kvTok, mem.KVPerToken)
			} else {
				assert.Greater(t, mem.KVPerToken, kvTok, "draft layers keep their own KV")
			}
			groups := st.gpus / s.cfg.Layout.AttentionTP()
			seqs := ceilDiv(8, groups)
			// Sliding-window layers keep at most the window (gpt-oss).
			perSeq := ctx*float64(mem.KVPerToken-mem.KVWindowPerToken) + float64(min(ctx, mem.Window))*float64(mem.KVWindowPerToken) + float64(mem.StatePerSeq)
			assert.InEpsilon(t, float64(seqs)*perSeq, float64(mem.KV), 1e-12)
			assert.InDelta(t, float64(mem.Usable-mem.KV), float64(mem.Free), 1)

			// MaxBatch is the boundary of Fits.
			if mem.MaxBatch == 0 {
				assert.False(t, p.Fits)
				return
			}
			at, err := s.Step(mem.MaxBatch, ctx)
			require.NoError(t, err)
			assert.True(t, at.Fits, "max batch %d fits", mem.MaxBatch)
			over, err := s.Step(mem.MaxBatch+groups, ctx)
			require.NoError(t, err)
			assert.False(t, over.Fits, "max batch %d + %d does not fit", mem.MaxBatch, groups)
			assert.Negative(t, float64(over.Memory.Free))
		})
	}
}

// TestMemoryKimiMLAReplicated: Kimi-K2.5 at TP8 holds the whole MLA latent
// per token on every GPU (61 x (512 + 64) x 2 B = 70.3 KB bf16, from
// model/presets/moonshotai--Kimi-K2.5_config.json), so 64 sequences
// of 2048 tokens take 64 x 2048 x 70,272 B per GPU; with DP attention over 8
// ranks each GPU holds 8 of them.
func TestMemoryKimiMLAReplicated(t *testing.T) {
	p, err := kimiRTX.sim(t).Step(64, 2048)
	require.NoError(t, err)
	assert.InEpsilon(t, 64*2048*70272.0, float64(p.Memory.KV), 1e-9)
	dpa := setup{name: "kimi dpa", preset: "kimi-k2.5", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 1, ep: 8, dp: 8, dpAttention: true}
	p, err = dpa.sim(t).Step(64, 2048)
	require.NoError(t, err)
	assert.InEpsilon(t, 8*2048*70272.0, float64(p.Memory.KV), 1e-9)
	// The routed experts dominate Kimi-K2.5's per-GPU weights at EP8 (71.3 GB
	// per GPU: 60 layers x 384 experts x 3 x 7168 x 2048 x 0.5625 B / 8).
	c := kimiRTX.config(t)
	w := c.Model.Weights(model.Layout{TP: 8, EP: 8, DP: 1})
	assert.InEpsilon(t, 71.3e9, float64(w.PerGPU[model.ClassRoutedExperts]), 0.01)
}
