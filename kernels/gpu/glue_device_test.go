package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/unit"
)

// onDeviceGlue is onDevice plus glue.cu's kernels.
func onDeviceGlue(t *testing.T) (*Module, *Glue, cuda.Stream) {
	t.Helper()
	m, s := onDevice(t)
	dev, err := cuda.GetDevice(0)
	require.NoError(t, err)
	g, err := LoadGlue(dev)
	require.NoError(t, err)
	t.Logf("glue kernels from %s", g.Image)
	return m, g, s
}

// devBufs allocates and frees device buffers for one test.
type devBufs struct {
	t    *testing.T
	free []cuda.DevicePtr
}

func newDevBufs(t *testing.T) *devBufs {
	d := &devBufs{t: t}
	t.Cleanup(func() {
		for _, p := range d.free {
			cuda.Free(p)
		}
	})
	return d
}

func (d *devBufs) up(p cuda.DevicePtr, err error) cuda.DevicePtr {
	d.t.Helper()
	require.NoError(d.t, err)
	d.free = append(d.free, p)
	return p
}

// poisoned allocates n bytes set to 0xff (bf16 NaN, int32 -1).
func (d *devBufs) poisoned(n int) cuda.DevicePtr {
	d.t.Helper()
	p := d.up(cuda.Alloc(int64(max(n, 16))))
	require.NoError(d.t, cuda.Memset8(p, 0xff, int64(max(n, 16))))
	return p
}

func run(t *testing.T, s cuda.Stream, launch func() error, err error) {
	t.Helper()
	require.NoError(t, err)
	require.NoError(t, cuda.Synchronize()) // memsets and uploads first
	require.NoError(t, launch())
	require.NoError(t, launch()) // twice: a kernel must not depend on its previous output
	require.NoError(t, s.Synchronize())
}

func download[T any](t *testing.T, p cuda.DevicePtr, n int) []T {
	t.Helper()
	out := make([]T, n)
	require.NoError(t, cuda.CopyFromDevice(out, p))
	return out
}

func rowsOf(flat []BF16, h int) [][]BF16 {
	out := make([][]BF16, len(flat)/h)
	for i := range out {
		out[i] = flat[i*h : (i+1)*h]
	}
	return out
}

func TestRouterOnDevice(t *testing.T) {
	_, g, s := onDeviceGlue(t)
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 21))
	small := RouterConfig{Experts: 64, TopK: 6, Groups: 4, TopKGroups: 2, Renormalize: false, Scale: 1}
	for _, c := range []RouterConfig{KimiRouter, deepSeekV3Router, small} {
		for _, bf16 := range []bool{false, true} {
			for _, tokens := range []int{1, 7, 300} {
				name := fmt.Sprintf("E%d_k%d_g%d/%d/bf16=%v/T%d", c.Experts, c.TopK, c.Groups, c.TopKGroups, bf16, tokens)
				d := newDevBufs(t)
				logits := make([]float32, tokens*c.Experts)
				for i := range logits {
					logits[i] = float32(2 * rng.NormFloat64())
					if bf16 {
						logits[i] = toBF16(logits[i]).Float32()
					}
				}
				bias := randomBias(rng, c.Experts)
				for i := range bias {
					bias[i] *= 50 // +-0.1: the bias changes choices
				}
				var dl cuda.DevicePtr
				if bf16 {
					lb := make([]BF16, len(logits))
					for i, v := range logits {
						lb[i] = toBF16(v)
					}
					dl = d.up(Upload(lb, 2))
				} else {
					dl = d.up(Upload(logits, 4))
				}
				b := routerBuffers{Logits: dl, Bias: d.up(Upload(bias, 4)), IDs: d.poisoned(tokens * c.TopK * 4),
					Weights: d.poisoned(tokens * c.TopK * 4), LogitsBF16: bf16}
				launch, err := g.Router(c, tokens, b, s)
				run(t, s, launch, err)
				gi, gw := download[int32](t, b.IDs, tokens*c.TopK), download[float32](t, b.Weights, tokens*c.TopK)
				wi, ww, margin, err := hostRouter(c, logits, bias, tokens)
				require.NoError(t, err)
				near, worst := 0, 0.0
				for tk := 0; tk < tokens; tk++ {
					lo, hi := tk*c.TopK, (tk+1)*c.TopK
					if margin[tk] < 1e-5 { // a float32 rounding may decide: the set must still be a top-k
						near++
						continue
					}
					if !assert.Equal(t, wi[lo:hi], gi[lo:hi], "%s token %d ids", name, tk) {
						continue
					}
					for j := lo; j < hi; j++ {
						worst = max(worst, math.Abs(float64(gw[j]-ww[j]))/float64(ww[j]))
					}
				}
				assert.Less(t, worst, 1e-5, "%s: weights' worst rel error", name)
				assert.LessOrEqual(t, near, max(3, tokens/20), "%s: tokens decided within a rounding", name)
				t.Logf("%s: ids exact, weights worst rel error %.2g, %d near-tie tokens skipped", name, worst, near)
			}
		}
	}
}

func TestAlignOnDevice(t *testing.T) {
	_, g, s := onDeviceGlue(t)
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 23))
	for _, c := range []struct {
		tokens, experts, k, block, first, count int
		law                                     float64
	}{
		{1, 384, 8, 16, 0, 384, 0}, {8, 384, 8, 16, 0, 384, 0}, {64, 384, 8, 16, 0, 384, 0}, {512, 384, 8, 64, 0, 384, 0},
		{300, 384, 8, 64, 0, 384, 1.2}, {4096, 384, 8, 64, 0, 384, 0}, {1, 384, 8, 16, 0, 48, 0}, {64, 384, 8, 16, 48, 48, 0},
		{512, 384, 8, 32, 336, 48, 0}, {2000, 16, 4, 64, 4, 8, 1.5}, {129, 256, 8, 16, 0, 256, 0}, {8192, 384, 8, 64, 0, 384, 0},
		{1000, 512, 8, 16, 0, 512, 0}, {3001, 384, 8, 32, 0, 384, 0}, {8192, 512, 8, 64, 0, 512, 0.8}, {6000, 384, 8, 64, 96, 48, 0},
	} {
		name := fmt.Sprintf("T%d_E%d_k%d_b%d_[%d+%d]_law%.1f", c.tokens, c.experts, c.k, c.block, c.first, c.count, c.law)
		var r *Routing
		var err error
		if c.law > 0 {
			r, err = routePowerLaw(rng.Uint64(), c.tokens, c.experts, c.k, c.law)
		} else {
			r, err = routeUniform(rng.Uint64(), c.tokens, c.experts, c.k)
		}
		require.NoError(t, err)
		want, err := alignLocal(r, c.block, c.first, c.count)
		require.NoError(t, err)
		ids := make([]int32, 0, c.tokens*c.k)
		for _, sel := range r.TopK {
			for _, e := range sel {
				ids = append(ids, int32(e))
			}
		}
		d := newDevBufs(t)
		rows, blocks := alignCapacity(len(ids), c.count, c.block)
		require.LessOrEqual(t, len(want.SortedIDs), rows, name)
		b := alignBuffers{TopKIDs: d.up(Upload(ids, 4)), SortedIDs: d.poisoned(rows * 4), ExpertIDs: d.poisoned(blocks * 4), Post: d.poisoned(8)}
		launch, err := g.Align(len(ids), c.first, c.count, c.block, b, s)
		run(t, s, launch, err)
		post := download[int32](t, b.Post, 2)
		require.Equal(t, []int32{int32(len(want.SortedIDs)), int32(want.Blocks())}, post, "%s: rows and blocks", name)
		// (a routing may send no pair to a rank: both empty)
		assert.Equal(t, append([]int32{}, want.SortedIDs...), download[int32](t, b.SortedIDs, len(want.SortedIDs)), "%s: sorted ids", name)
		assert.Equal(t, append([]int32{}, want.ExpertIDs...), download[int32](t, b.ExpertIDs, want.Blocks()), "%s: expert ids", name)
		t.Logf("%s: %d rows in %d blocks, exact", name, post[0], post[1])
	}
}

func TestElementwiseOnDevice(t *testing.T) {
	_, g, s := onDeviceGlue(t)
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 29))
	const tol = 1.0 / 128 // one bf16 rounding of the output (2^-8 relative) and fp32 sums
	check := func(name string, got []BF16, ref [][]float64, h int, floor float64) {
		t.Helper()
		e, err := maxRelError(rowsOf(got, h), ref, floor)
		if assert.NoError(t, err, name) {
			assert.Less(t, e, tol, name)
			t.Logf("%s: worst rel error %.3g", name, e)
		}
	}
	for _, rows := range []int{1, 8, 333} {
		for _, n := range []int{256, 2048} {
			d := newDevBufs(t)
			x := randomBF16(rng, rows*2*n)
			out := d.poisoned(rows * n * 2)
			launch, err := g.SiluAndMul(d.up(Upload(x, 2)), out, rows, n, s)
			run(t, s, launch, err)
			check(fmt.Sprintf("silu_and_mul %dx%d", rows, n), download[BF16](t, out, rows*n), hostSiluAndMul(x, rows, n), n, 1e-2)
			for i := range x { // past the clamp (7) on both sides, for swiglu_oai
				x[i] = toBF16(12 * x[i].Float32())
			}
			out = d.poisoned(rows * n * 2)
			launch, err = g.SwigluOAI(d.up(Upload(x, 2)), out, rows, n, SwigluOAIAlpha, SwigluOAILimit, s)
			run(t, s, launch, err)
			check(fmt.Sprintf("swiglu_oai %dx%d", rows, n), download[BF16](t, out, rows*n),
				hostSwigluOAI(x, rows, n, SwigluOAIAlpha, SwigluOAILimit), n, 1e-2)
		}
	}
	for _, c := range []struct{ tokens, k, h, experts, first, count int }{
		{1, 8, 7168, 384, 0, 384}, {37, 8, 7168, 384, 0, 384}, {64, 8, 7168, 384, 48, 48}, {5, 4, 256, 16, 0, 8},
	} {
		d := newDevBufs(t)
		r, err := routeUniform(rng.Uint64(), c.tokens, c.experts, c.k)
		require.NoError(t, err)
		ids := make([]int32, 0, c.tokens*c.k)
		for _, sel := range r.TopK {
			for _, e := range sel {
				ids = append(ids, int32(e))
			}
		}
		w := make([]float32, len(ids))
		for i := range w {
			w[i] = float32(0.1 + rng.Float64())
		}
		y := randomBF16(rng, len(ids)*c.h)
		out := d.poisoned(c.tokens * c.h * 2)
		launch, err := g.MoESum(c.tokens, c.k, c.h, c.first, c.count,
			moeSumBuffers{Y: d.up(Upload(y, 2)), Weights: d.up(Upload(w, 4)), TopKIDs: d.up(Upload(ids, 4)), Out: out}, s)
		run(t, s, launch, err)
		check(fmt.Sprintf("moe_sum T%d k%d h%d [%d+%d]", c.tokens, c.k, c.h, c.first, c.count), download[BF16](t, out, c.tokens*c.h),
			hostMoESum(y, w, ids, c.tokens, c.k, c.h, c.first, c.count), c.h, 0.05)
	}
	for _, c := range []struct{ tokens, h int }{{1, 7168}, {13, 7168}, {256, 7168}, {3, 2048}, {2, 8}} {
		d := newDevBufs(t)
		x, w := randomBF16(rng, c.tokens*c.h), randomBF16(rng, c.h)
		out := d.poisoned(c.tokens * c.h * 2)
		launch, err := g.RMSNorm(d.up(Upload(x, 2)), d.up(Upload(w, 2)), out, c.tokens, c.h, 1e-6, s)
		run(t, s, launch, err)
		check(fmt.Sprintf("rmsnorm %dx%d", c.tokens, c.h), download[BF16](t, out, c.tokens*c.h), hostRMSNorm(x, w, c.tokens, c.h, 1e-6), c.h, 1e-2)

		a, b := randomBF16(rng, c.tokens*c.h), randomBF16(rng, c.tokens*c.h)
		out = d.poisoned(c.tokens * c.h * 2)
		launch, err = g.Add(d.up(Upload(a, 2)), d.up(Upload(b, 2)), out, int64(c.tokens*c.h), s)
		run(t, s, launch, err)
		check(fmt.Sprintf("add %dx%d", c.tokens, c.h), download[BF16](t, out, c.tokens*c.h), hostAdd(a, b, c.h), c.h, 1e-2)
	}
}

// TestMoELayerOnDevice times small and Kimi-sized layers (the measurement
// checks the device's alignment against the host's for every routing) and
// checks that the parts are consistent with the whole.
func TestMoELayerOnDevice(t *testing.T) {
	m, g, s := onDeviceGlue(t)
	for _, c := range []MoELayerCase{
		{Name: "small", Tokens: 5, Hidden: 512, Inter: 128, Group: 32, Router: RouterConfig{Experts: 16, TopK: 4, Groups: 1, TopKGroups: 1, Renormalize: true, Scale: 1}, Seed: 3},
		{Name: "kimi tp8", Tokens: 8, Hidden: 7168, Inter: 256, Group: 32, Router: KimiRouter, Seed: 5},
		{Name: "kimi ep8", Tokens: 64, Hidden: 7168, Inter: 2048, Group: 32, Router: KimiRouter, Local: 48, Seed: 7, LogitsBF16: true},
		{Name: "gpt-oss mxfp4", Tokens: 16, Hidden: 2944, Inter: 2944, Group: 32, Seed: 9, Opt: Options{Mode: ModeFP4}, SwigluOAI: true,
			Router: RouterConfig{Experts: 128, TopK: 4, Groups: 1, TopKGroups: 1, Renormalize: true, Scale: 1}},
	} {
		for _, rot := range []int64{512 << 20, 0} {
			r, err := MeasureMoELayer(m, g, c, rot, s)
			require.NoError(t, err, c.Name)
			parts := r.Router.Median + r.Align.Median + r.GateUp.Median + r.Act.Median + r.Down.Median + r.Sum.Median
			t.Logf("%s T=%d rotate %d MiB: layer %.2f us (eager %.2f), router %.2f align %.2f gate_up %.2f act %.2f down %.2f sum %.2f (sum of parts %.2f); %d routings, %.1f experts, block %d",
				c.Name, c.Tokens, rot>>20, r.Layer.Median*1e6, r.Layer.Eager*1e6, r.Router.Median*1e6, r.Align.Median*1e6, r.GateUp.Median*1e6,
				r.Act.Median*1e6, r.Down.Median*1e6, r.Sum.Median*1e6, parts*1e6, r.Routings, r.Touched, r.Block)
			assert.Greater(t, r.Layer.Median, r.GateUp.Median, c.Name)
			assert.Less(t, r.Layer.Median, 2*parts, c.Name)
			// Without the router the layer is faster; at large token counts the
			// router is under 1% of it, within the medians' run-to-run noise
			// (run 30: 296.6 vs 296.5 us), so 2% of slack.
			assert.Less(t, float64(r.Experts.Median), 1.02*float64(r.Layer.Median), "%s: without the router the layer is faster", c.Name)
			assert.Greater(t, r.Experts.Median, r.GateUp.Median, c.Name)
			assert.True(t, slices.ContainsFunc([]unit.Seconds{r.Router.Median, r.Align.Median, r.Act.Median, r.Sum.Median}, func(x unit.Seconds) bool { return x > 0 }))
		}
	}
}

func TestMeasureElementwiseOnDevice(t *testing.T) {
	_, g, s := onDeviceGlue(t)
	for _, k := range []string{KernelRMSNorm, KernelAdd, KernelSiluAndMul} {
		for _, tokens := range []int{1, 64, 512} {
			c := ElementwiseCase{Kernel: k, Tokens: tokens, Width: 7168}
			tm, err := MeasureElementwise(g, c, s)
			require.NoError(t, err)
			assert.Positive(t, tm.Median)
			t.Logf("%s T=%d: %d B, %.2f us graph (%.2f-%.2f), %.2f us eager, %.0f GB/s",
				k, tokens, c.Bytes(), tm.Median*1e6, tm.Min*1e6, tm.Max*1e6, tm.Eager*1e6, float64(c.Bytes())/float64(tm.Median)/1e9)
		}
	}
}

// TestRouterTimingOnDevice logs where the router's time goes: Kimi's
// top-8 of 384 against top-1 and a 16-expert router, at 1, 64 and 8192
// tokens (warm inputs, one graph of repeated launches).
func TestRouterTimingOnDevice(t *testing.T) {
	_, g, s := onDeviceGlue(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []RouterConfig{KimiRouter, {Experts: 384, TopK: 1, Groups: 1, TopKGroups: 1, Scale: 1}, {Experts: 16, TopK: 8, Groups: 1, TopKGroups: 1, Scale: 1}} {
		for _, tokens := range []int{1, 64, 8192} {
			d := newDevBufs(t)
			logits := make([]float32, tokens*c.Experts)
			for i := range logits {
				logits[i] = float32(rng.NormFloat64())
			}
			launch, err := g.Router(c, tokens, routerBuffers{Logits: d.up(Upload(logits, 4)), IDs: d.poisoned(tokens * c.TopK * 4), Weights: d.poisoned(tokens * c.TopK * 4)}, s)
			require.NoError(t, err)
			require.NoError(t, cuda.Synchronize())
			tm, err := Time(s, []func() error{launch}, 200)
			require.NoError(t, err)
			t.Logf("router top-%d of %d, %d tokens: %.2f us graph (%.2f-%.2f), %.2f us eager", c.TopK, c.Experts, tokens, tm.Median*1e6, tm.Min*1e6, tm.Max*1e6, tm.Eager*1e6)
		}
	}
	// The align kernel alone at decode and prefill sizes (warm).
	for _, c := range []struct{ tokens, count, block int }{{1, 384, 16}, {64, 384, 16}, {512, 384, 64}, {8192, 384, 64}, {8192, 48, 64}} {
		d := newDevBufs(t)
		r, err := routeUniform(uint64(c.tokens), c.tokens, 384, 8)
		require.NoError(t, err)
		var ids []int32
		for _, sel := range r.TopK {
			for _, e := range sel {
				ids = append(ids, int32(e))
			}
		}
		rows, blocks := alignCapacity(len(ids), c.count, c.block)
		launch, err := g.Align(len(ids), 0, c.count, c.block, alignBuffers{TopKIDs: d.up(Upload(ids, 4)), SortedIDs: d.poisoned(rows * 4), ExpertIDs: d.poisoned(blocks * 4), Post: d.poisoned(8)}, s)
		require.NoError(t, err)
		require.NoError(t, cuda.Synchronize())
		tm, err := Time(s, []func() error{launch}, 200)
		require.NoError(t, err)
		t.Logf("align %d tokens, %d local experts, block %d: %.2f us graph (%.2f-%.2f)", c.tokens, c.count, c.block, tm.Median*1e6, tm.Min*1e6, tm.Max*1e6)
	}
}
