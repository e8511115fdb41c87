package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func logit(p float64) float32 { return float32(math.Log(p / (1 - p))) }

func TestHostRouter(t *testing.T) {
	// 8 experts, top-2, no bias: the two best sigmoid scores, renormalised
	// and scaled.
	ps := []float64{0.1, 0.9, 0.3, 0.8, 0.2, 0.85, 0.4, 0.05}
	logits := make([]float32, len(ps))
	for i, p := range ps {
		logits[i] = logit(p)
	}
	c := RouterConfig{Experts: 8, TopK: 2, Groups: 1, TopKGroups: 1, Renormalize: true, Scale: 2}
	ids, w, margin, err := hostRouter(c, logits, nil, 1)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 5}, ids)
	assert.InDeltaSlice(t, []float64{2 * 0.9 / 1.75, 2 * 0.85 / 1.75}, []float64{float64(w[0]), float64(w[1])}, 1e-6)
	assert.InDelta(t, 0.05, margin[0], 1e-6) // 0.9-0.85 and 0.85-0.8

	// The bias changes the choice, not the weights.
	bias := []float32{0, 0, 0, 0.2, 0, 0, 0, 0}
	ids, w, _, err = hostRouter(c, logits, bias, 1)
	require.NoError(t, err)
	assert.Equal(t, []int32{3, 1}, ids)
	assert.InDelta(t, 2*0.8/1.7, float64(w[0]), 1e-6)

	// Groups of 2 (scores: {0.1,0.9}=1.0, {0.3,0.8}=1.1, {0.2,0.85}=1.05,
	// {0.4,0.05}=0.45): the best 2 groups are 1 and 2, so expert 1 (0.9,
	// the best single score) is out.
	c.Groups, c.TopKGroups, c.Renormalize, c.Scale = 4, 2, false, 1
	ids, w, margin, err = hostRouter(c, logits, nil, 1)
	require.NoError(t, err)
	assert.Equal(t, []int32{5, 3}, ids)
	assert.InDelta(t, 0.85, float64(w[0]), 1e-6)
	assert.InDelta(t, 0.05, margin[0], 1e-6) // group 2 (1.05) vs group 0 (1.0)

	_, _, _, err = hostRouter(RouterConfig{Experts: 8, TopK: 40, Groups: 1, TopKGroups: 1}, logits, nil, 1)
	assert.ErrorContains(t, err, "top-40 of 8 experts")
	_, _, _, err = hostRouter(RouterConfig{Experts: 8, TopK: 2, Groups: 3, TopKGroups: 1}, logits, nil, 1)
	assert.ErrorContains(t, err, "3 groups of 8 experts")
	_, _, _, err = hostRouter(RouterConfig{Experts: 8, TopK: 5, Groups: 4, TopKGroups: 2}, logits, nil, 1)
	assert.ErrorContains(t, err, "2 of 4 groups kept for top-5")
	_, _, _, err = hostRouter(KimiRouter, logits, nil, 1)
	assert.ErrorContains(t, err, "8 logits, 0 biases for 1 tokens x 384 experts")
}

// TestLogitsFor: the logits drawn for a routing lead the router back to
// it, slot by slot, with margins far above a float32 rounding (also in
// bf16).
func TestLogitsFor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r, err := routeUniform(9, 200, 384, 8)
	require.NoError(t, err)
	bias := randomBias(rng, 384)
	logits := logitsFor(rng, r)
	for _, bf16 := range []bool{false, true} {
		in := logits
		if bf16 {
			in = make([]float32, len(logits))
			for i, v := range logits {
				in[i] = toBF16(v).Float32()
			}
		}
		ids, w, margin, err := hostRouter(KimiRouter, in, bias, 200)
		require.NoError(t, err)
		assert.Equal(t, r.TopK, routingOf(ids, 384, 8).TopK, "bf16 %v", bf16)
		for tk, m := range margin {
			assert.Greater(t, m, 1e-3, "token %d", tk)
			var sum float64
			for _, x := range w[tk*8 : tk*8+8] {
				sum += float64(x)
			}
			assert.InDelta(t, 2.827, sum, 1e-5)
		}
	}
}

func TestAlignCapacity(t *testing.T) {
	for _, c := range []struct{ tokens, experts, k, block, count int }{
		{1, 384, 8, 16, 384}, {64, 384, 8, 16, 384}, {512, 384, 8, 64, 48}, {8192, 384, 8, 64, 384}, {3, 16, 4, 64, 16},
	} {
		for seed := uint64(0); seed < 5; seed++ {
			r, err := routeUniform(seed, c.tokens, c.experts, c.k)
			require.NoError(t, err)
			a, err := alignLocal(r, c.block, 0, c.count)
			require.NoError(t, err)
			rows, blocks := alignCapacity(c.tokens*c.k, c.count, c.block)
			assert.LessOrEqual(t, len(a.SortedIDs), rows, "%+v", c)
			assert.LessOrEqual(t, a.Blocks(), blocks, "%+v", c)
			assert.Equal(t, rows, blocks*c.block)
		}
	}
}

// TestGlueLaunchChecks: the launchers refuse shapes the kernels do not
// take before they touch the device.
func TestGlueLaunchChecks(t *testing.T) {
	g := &Glue{}
	_, err := g.Router(KimiRouter, 0, routerBuffers{}, 0)
	assert.ErrorContains(t, err, "router: 0 tokens")
	_, err = g.Router(RouterConfig{Experts: 4096, TopK: 8, Groups: 1, TopKGroups: 1}, 1, routerBuffers{}, 0)
	assert.ErrorContains(t, err, "router: 4096 experts: at most 512")
	_, err = g.Align(8, 0, 600, 16, alignBuffers{}, 0)
	assert.ErrorContains(t, err, "1..512 local experts")
	_, err = g.Align(0, 0, 8, 16, alignBuffers{}, 0)
	assert.ErrorContains(t, err, "align: 0 pairs")
	_, err = g.SiluAndMul(0, 0, 4, 100, 0)
	assert.ErrorContains(t, err, "silu_and_mul: 4 rows of 2x100")
	_, err = g.MoESum(1, 8, 7004, 0, 384, moeSumBuffers{}, 0)
	assert.ErrorContains(t, err, "h % 8 == 0")
	_, err = g.RMSNorm(0, 0, 0, 0, 7168, 1e-6, 0)
	assert.ErrorContains(t, err, "rmsnorm: 0 tokens")
	_, err = g.Add(0, 0, 0, 12, 0)
	assert.ErrorContains(t, err, "add: 12 elements")
	_, err = MeasureMoELayer(nil, g, MoELayerCase{Tokens: 1, Hidden: 7168, Inter: 256, Group: 32, Router: deepSeekV3Router}, 0, 0)
	assert.ErrorContains(t, err, "8 router groups")
	_, err = MeasureMoELayer(nil, g, MoELayerCase{Tokens: 1, Hidden: 7168, Inter: 100, Group: 32, Router: KimiRouter}, 0, 0)
	assert.Error(t, err)
}

func TestHostElementwise(t *testing.T) {
	bf := func(xs ...float32) []BF16 {
		out := make([]BF16, len(xs))
		for i, x := range xs {
			out[i] = toBF16(x)
		}
		return out
	}
	// silu(2) * 3 and silu(-1) * 0.5, gate half first.
	got := hostSiluAndMul(bf(2, -1, 3, 0.5), 1, 2)
	assert.InDeltaSlice(t, []float64{2 / (1 + math.Exp(-2)) * 3, -1 / (1 + math.Exp(1)) * 0.5}, got[0], 1e-12)
	// Two tokens, top-2; expert 5 is off this rank ([0, 4)).
	y := bf(1, 2, 10, 20, 100, 200, 1000, 2000)
	sum := hostMoESum(y, []float32{0.5, 0.25, 1, 2}, []int32{0, 3, 5, 1}, 2, 2, 2, 0, 4)
	assert.Equal(t, [][]float64{{0.5*1 + 0.25*10, 0.5*2 + 0.25*20}, {2 * 1000, 2 * 2000}}, sum)
	// rms of (3, 4) is sqrt(12.5).
	n := hostRMSNorm(bf(3, 4), bf(1, 2), 1, 2, 0)
	r := 1 / math.Sqrt(12.5)
	assert.InDeltaSlice(t, []float64{3 * r, 8 * r}, n[0], 1e-12)
	assert.Equal(t, [][]float64{{4, 6}}, hostAdd(bf(1, 2), bf(3, 4), 2))
	e, err := maxRelError([][]BF16{bf(1.0, 2.0)}, [][]float64{{1, 2.01}}, 1e-3)
	require.NoError(t, err)
	assert.InDelta(t, 0.01/2.01, e, 1e-9)
	_, err = maxRelError([][]BF16{{0xffff}}, [][]float64{{1}}, 1e-3)
	assert.ErrorContains(t, err, "not written?")
}
