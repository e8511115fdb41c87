package validate

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/sim"
)

// mixtralTP2 is Mixtral-8x7B (bf16, bf16 KV) on one H100 instance of TP2.
func mixtralTP2(t *testing.T) sim.Config {
	t.Helper()
	m, err := model.Preset("mixtral-8x7b")
	require.NoError(t, err)
	g, ok := kernels.LookupGPU("h100-sxm")
	require.True(t, ok)
	return sim.Config{Model: m, GPU: g, GPUs: 2, Layout: model.Layout{TP: 2, EP: 1, DP: 1}}
}

// TestLowerBound: the bound on a case computed by hand from Mixtral's
// config.json (hidden 4096, 32 layers, 32 heads, 8 kv heads of 128, 8
// experts of 14336 top-2, vocab 32000, untied) and H100's spec (3.35 TB/s,
// 50 MB L2, 1978 TFLOPS fp8 dense).
func TestLowerBound(t *testing.T) {
	const (
		h, layers, vocab, inter = 4096.0, 32.0, 32000.0, 14336.0
		attn                    = 2*h*h + 2*h*1024 // q, o; k, v (8 kv heads x 128)
		expert                  = 3 * h * inter
		router                  = h * 8
		norms                   = (2*layers + 1) * h
	)
	// Per GPU of TP2, bf16: attention and lm_head halved, router and
	// norms whole, the embedding not read; 2 of 8 experts of every layer
	// over 2 GPUs; less the 50 MB L2.
	w := 2*(layers*attn/2+vocab*h/2+layers*router+norms) + 2*layers*8*expert*2/8/2 - 50e6
	kvTok := layers * 2 * 4 * 128 * 1.0 // 4 of 8 kv heads per GPU, K and V, fp8 (whatever the scenario's dtype)
	in := BoundInput{Decode: mixtralTP2(t), DecodeInstances: 1, PrefillGPUs: 2, Concurrency: 64,
		ISL: 1000, OSL: 1001, TTFTms: 2500, TPOTms: 10}
	got := LowerBound(in)
	// Little: 64 x (1000 x 10) / (2500 + 1000 x 10) = 51.2 requests past
	// their first token; context 1000 + 1001/2.
	assert.InDelta(t, 51.2, got.Decoding, 1e-9)
	assert.InDelta(t, 1500.5, got.Context, 1e-9)
	assert.InEpsilon(t, w, got.WeightBytes, 1e-6)
	assert.InEpsilon(t, 51.2*1500.5*kvTok, got.KVBytes, 1e-9)
	assert.InEpsilon(t, (w+51.2*1500.5*kvTok)/3.35e12*1e3, got.TPOTms, 1e-6)
	assert.InDelta(t, 4.543, got.TPOTms, 0.001, "15.22 GB at 3.35 TB/s")
	// TTFT: 2 x 1000 tokens x (attention + router + norms + 2 experts) x 32 layers over 2 x 1978 TFLOPS.
	assert.InEpsilon(t, 2*1000*(layers*(attn+router+2*expert)+norms)/(2*1978e12)*1e3, got.TTFTms, 1e-6)
	assert.Empty(t, BelowBound(in, got), "10 ms is above 4.5 ms")

	// A GPU with fp4 tensor cores: the KV cache may be fp4, half a byte.
	b200 := in
	b200.Decode.GPU, _ = kernels.LookupGPU("b200-sxm")
	assert.InEpsilon(t, got.KVBytes/2, LowerBound(b200).KVBytes, 1e-9)

	// Speculative decoding: a step may emit k+1 tokens per sequence.
	spec := in
	spec.Decode.Spec = sim.Spec{Method: sim.SpecMTP, DraftTokens: 3}
	assert.InEpsilon(t, got.TPOTms/4, LowerBound(spec).TPOTms, 1e-9)

	// Open loop: no concurrency, no TPOT bound; the TTFT bound stands.
	open := in
	open.Concurrency = 0
	assert.True(t, math.IsNaN(LowerBound(open).TPOTms))
	assert.InEpsilon(t, got.TTFTms, LowerBound(open).TTFTms, 1e-9)
}

// TestBelowBound: a row faster than its bound is excluded with the
// figures; the exclusion follows the measured TPOT, not a fitted margin.
func TestBelowBound(t *testing.T) {
	in := BoundInput{Decode: mixtralTP2(t), DecodeInstances: 1, PrefillGPUs: 2, Concurrency: 64,
		ISL: 1000, OSL: 1001, TTFTms: 2500, TPOTms: 4}
	b := LowerBound(in)
	require.Greater(t, b.TPOTms, 4.0, "39.4 requests decoding: 14.6 GB per step")
	why := BelowBound(in, b)
	assert.True(t, strings.HasPrefix(why, ExcludeBelowBound), why)
	assert.Contains(t, why, "mean TPOT 4 ms < 4.37 ms")
	in.TPOTms = 5
	assert.Empty(t, BelowBound(in, LowerBound(in)))
	// A TTFT below its prompt's FLOPs at peak (TPOT 5 ms is above 4.73 ms
	// with all 64 requests decoding).
	in.TTFTms = 1
	why = BelowBound(in, LowerBound(in))
	assert.Contains(t, why, "mean TTFT 1 ms < 6.38 ms")
}

// TestLowerBoundAbsurdLengths: lengths or a concurrency no run can have
// (a hostile or corrupt file: 1e308 tokens, MaxInt64 requests) give no
// bound rather than an infinite one, so an exclusion never prints +Inf;
// the row's lengths are refused where it is simulated.
func TestLowerBoundAbsurdLengths(t *testing.T) {
	base := BoundInput{Decode: mixtralTP2(t), DecodeInstances: 1, PrefillGPUs: 2, Concurrency: 64,
		ISL: 1000, OSL: 1001, TTFTms: 2500, TPOTms: 4}
	for _, mut := range []func(*BoundInput){
		func(in *BoundInput) { in.ISL = 1e308 },
		func(in *BoundInput) { in.OSL = 1e308 },
		func(in *BoundInput) { in.ISL, in.OSL = math.MaxFloat64, math.MaxFloat64 },
		func(in *BoundInput) { in.Concurrency = math.MaxInt64; in.ISL = 1e300 },
		func(in *BoundInput) { in.TPOTms = math.MaxFloat64; in.ISL = 1e300 },
	} {
		in := base
		mut(&in)
		b := LowerBound(in)
		for _, v := range []float64{b.TPOTms, b.TTFTms, b.KVBytes, b.Decoding, b.Context} {
			assert.False(t, math.IsInf(v, 0), "%+v: %+v", in, b)
		}
		why := BelowBound(in, b)
		assert.NotContains(t, why, "Inf", why)
		assert.NotContains(t, why, "NaN", why)
	}
}
