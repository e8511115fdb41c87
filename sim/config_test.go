package sim

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/model"
)

func TestNewValidation(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(c *Config)
		field string
	}{
		{"no model", func(c *Config) { c.Model = nil }, "Model"},
		{"gpus zero", func(c *Config) { c.GPUs = 0 }, "GPUs"},
		{"gpus != tp x dp", func(c *Config) { c.GPUs = 4 }, "GPUs"},
		{"tp zero", func(c *Config) { c.Layout.TP = 0 }, "Layout.TP"},
		{"tp does not divide heads", func(c *Config) { c.GPUs, c.Layout.TP, c.Layout.EP = 6, 6, 6 }, "Layout.TP"},
		{"dp negative", func(c *Config) { c.Layout.DP = -1 }, "Layout.DP"},
		{"ep zero", func(c *Config) { c.Layout.EP = 0 }, "Layout.EP"},
		{"gpus above limit", func(c *Config) { c.GPUs, c.Layout.TP, c.Layout.DP = MaxRanks*2, MaxRanks, 2 }, "GPUs"},
		{"tp huge", func(c *Config) { c.Layout.TP = math.MaxInt }, "Layout.TP"},
		{"dp huge (tp x dp overflows)", func(c *Config) { c.Layout.DP = 1 << 61 }, "Layout.DP"},
		{"ep huge", func(c *Config) { c.Layout.EP = MaxRanks + 1 }, "Layout.EP"},
		{"ep does not divide experts", func(c *Config) { c.GPUs, c.Layout.TP, c.Layout.EP = 7, 1, 7; c.Layout.DP = 7 }, "Layout.EP"},
		{"ep exceeds gpus", func(c *Config) { c.Layout.EP = 16 }, "Layout.EP"},
		{"gpu without bandwidth", func(c *Config) { c.GPU.MemBW = 0 }, "GPU"},
		{"fabric without bandwidth", func(c *Config) { c.Fabric = comm.Fabric{Name: "none"} }, "Fabric"},
		{"allreduce impl", func(c *Config) { c.AllReduce = comm.TwoShot + 1 }, "AllReduce"},
		{"memory utilisation zero", func(c *Config) { c.GPUMemoryUtilization = 0 }, "GPUMemoryUtilization"},
		{"memory utilisation above 1", func(c *Config) { c.GPUMemoryUtilization = 1.01 }, "GPUMemoryUtilization"},
		{"memory utilisation NaN", func(c *Config) { c.GPUMemoryUtilization = math.NaN() }, "GPUMemoryUtilization"},
		{"kv cache dtype", func(c *Config) { c.KVCache = dtype.KVFP8 + 1 }, "KVCache"},
		{"spec method", func(c *Config) { c.Spec.Method = SpecNgram + 1 }, "Spec.Method"},
		{"mtp without mtp layers", func(c *Config) { c.Spec = Spec{Method: SpecMTP, DraftTokens: 1, Acceptance: []float64{0.8}} }, "Spec.Method"},
		{"draft tokens zero", func(c *Config) { c.Spec = Spec{Method: SpecEAGLE3, DraftTokens: 0, Acceptance: []float64{0.8}} }, "Spec.DraftTokens"},
		{"draft tokens too many", func(c *Config) {
			c.Spec = Spec{Method: SpecNgram, DraftTokens: MaxDraftTokens + 1, Acceptance: []float64{0.8}}
		}, "Spec.DraftTokens"},
		{"acceptance above 1", func(c *Config) { c.Spec = Spec{Method: SpecEAGLE3, DraftTokens: 2, Acceptance: []float64{0.8, 1.2}} }, "Spec.Acceptance"},
		{"acceptance negative", func(c *Config) { c.Spec = Spec{Method: SpecEAGLE3, DraftTokens: 1, Acceptance: []float64{-0.1}} }, "Spec.Acceptance"},
		{"acceptance NaN", func(c *Config) { c.Spec = Spec{Method: SpecEAGLE3, DraftTokens: 1, Acceptance: []float64{math.NaN()}} }, "Spec.Acceptance"},
		{"acceptance wrong length", func(c *Config) { c.Spec = Spec{Method: SpecEAGLE3, DraftTokens: 3, Acceptance: []float64{0.8, 0.6}} }, "Spec.Acceptance"},
		{"acceptance missing", func(c *Config) { c.Spec = Spec{Method: SpecEAGLE3, DraftTokens: 3} }, "Spec.Acceptance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := kimiRTX.config(t)
			tt.edit(&c)
			s, err := New(c)
			require.Error(t, err)
			assert.Nil(t, s)
			var fe *model.FieldError
			require.True(t, errors.As(err, &fe), "error %v is not a *model.FieldError", err)
			assert.Equal(t, tt.field, fe.Field, "error: %v", err)
			assert.NotEmpty(t, fe.Msg)
		})
	}
	// The valid base config passes, and dp = 0 defaults to gpus/tp.
	c := kimiRTX.config(t)
	c.Layout.DP = 0
	_, err := New(c)
	require.NoError(t, err)
	// Spec method none ignores draft_tokens and acceptance.
	c.Spec = Spec{Method: SpecNone, DraftTokens: 99, Acceptance: []float64{7}}
	_, err = New(c)
	require.NoError(t, err)
}

func TestStepValidation(t *testing.T) {
	s := kimiRTX.sim(t)
	for _, tt := range []struct {
		batch, context int
		field          string
	}{
		{0, 2048, "batch"}, {-3, 2048, "batch"}, {1, 0, "context"},
		{MaxBatchSize + 1, 2048, "batch"}, {math.MaxInt, 2048, "batch"},
		{1, MaxContext + 1, "context"}, {8, math.MaxInt, "context"},
	} {
		_, err := s.Step(tt.batch, tt.context)
		var fe *model.FieldError
		require.True(t, errors.As(err, &fe), "batch %d context %d: %v", tt.batch, tt.context, err)
		assert.Equal(t, tt.field, fe.Field)
	}
}

// TestStepAtLimits: at the largest batch and context sim accepts, on
// layouts that multiply token counts (DP attention, DP groups), the step is
// positive and finite: no int product overflows.
func TestStepAtLimits(t *testing.T) {
	for _, l := range []struct{ tp, ep, dp int }{{8, 8, 1}, {1, 8, 8}} {
		c := kimiRTX.config(t)
		c.Layout.TP, c.Layout.EP, c.Layout.DP = l.tp, l.ep, l.dp
		c.Layout.DPAttention = l.dp > 1
		s, err := New(c)
		require.NoError(t, err)
		p, err := s.Step(MaxBatchSize, MaxContext)
		require.NoError(t, err)
		st := float64(p.Step.Time)
		assert.True(t, st > 0 && !math.IsInf(st, 0), "TP%d EP%d DP%d: step %v", l.tp, l.ep, l.dp, st)
		assert.True(t, p.Memory.KV > 0, "KV %v", p.Memory.KV)
		assert.False(t, p.Fits)
	}
}

func TestCeilDiv(t *testing.T) {
	for _, tt := range []struct{ a, b, want int }{
		{0, 3, 0}, {1, 3, 1}, {3, 3, 1}, {4, 3, 2}, {7, 1, 7}, {7, 0, 7},
		{math.MaxInt, 2, math.MaxInt/2 + 1}, {math.MaxInt, math.MaxInt, 1}, {math.MaxInt - 1, math.MaxInt, 1},
	} {
		assert.Equal(t, tt.want, ceilDiv(tt.a, tt.b), "ceilDiv(%d, %d)", tt.a, tt.b)
	}
}

// TestA2AImpl: DeepEP in SGLang's auto mode runs the normal kernels for
// steps with prefill and the low-latency ones for decode steps; the fixed
// modes run theirs for every step; without DeepEP no kernel set is named.
func TestA2AImpl(t *testing.T) {
	for _, tc := range []struct {
		a                  A2A
		decode, withPrefil string
	}{
		{A2ANone, "", ""},
		{A2ADeepEP, comm.DeepEPLowLatency, comm.DeepEPNormal},
		{A2ADeepEPLowLatency, comm.DeepEPLowLatency, comm.DeepEPLowLatency},
		{A2ADeepEPNormal, comm.DeepEPNormal, comm.DeepEPNormal},
	} {
		assert.Equal(t, tc.decode, tc.a.impl(true), "%d decode", tc.a)
		assert.Equal(t, tc.withPrefil, tc.a.impl(false), "%d prefill", tc.a)
	}
}
