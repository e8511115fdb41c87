package gpu

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/unit"
)

// FP8LayerCase is one block-fp8 routed-expert layer on one GPU as vLLM's
// triton fused_moe runs it for a block-quantised checkpoint (DeepSeek-V3,
// Qwen3-FP8, GLM-5-FP8): moe_align, per-token-group quantisation of the
// hidden states, the gate_up GEMM (Hidden -> 2 x Inter), silu_and_mul, the
// quantisation of its output, the down GEMM (Inter -> Hidden) and the top-k
// weighted sum. Inter is this GPU's slice of the expert width; Local > 0:
// the rank holds experts [0, Local) of Experts (expert parallelism).
type FP8LayerCase struct {
	Name          string
	Tokens        int
	Experts, TopK int
	Hidden, Inter int
	Local         int
	Seed          uint64
	Slices        int  // split-K slices of both GEMMs; 0: the plans choose
	WholeOnly     bool // time the layer alone (no per-kernel graphs)
}

// fp8Pool is the bytes of random e4m3 codes uploaded once and copied over
// the weight buffers.
const fp8Pool = 32 << 20

// fillFP8 fills n bytes at p with finite e4m3 codes: pool uploaded once,
// then copied on the device, doubling (what the codes are does not change
// the timing; the host copy of gigabytes would dominate the campaign).
func fillFP8(p cuda.DevicePtr, n int64, pool []E4M3) error {
	c := min(int64(len(pool)), n)
	if err := cuda.CopyToDevice(p, pool[:c]); err != nil {
		return err
	}
	for done := c; done < n; {
		m := min(done, n-done)
		if err := cuda.CopyDevice(p+cuda.DevicePtr(done), p, m); err != nil {
			return err
		}
		done += m
	}
	return cuda.Synchronize() // device copies run on the legacy stream, not the caller's
}

// randomFP8Pool draws n finite e4m3 codes (bit 6 cleared: exponents 0-7 of
// either sign, never the NaN 0x7f/0xff), 8 a draw.
func randomFP8Pool(rng *rand.Rand, n int64) []E4M3 {
	pool := make([]E4M3, n)
	for i := int64(0); i < n; i += 8 {
		v := rng.Uint64() & 0xBFBFBFBFBFBFBFBF
		for j := int64(0); j < 8 && i+j < n; j++ {
			pool[i+j] = E4M3(v >> (8 * j))
		}
	}
	return pool
}

// MeasureFP8MoELayer times the block-fp8 layer without its router top-k
// (the routing is drawn on the host, uniform top-k, and its ids and
// weights uploaded): one CUDA graph per call of moe_align -> quant ->
// gate_up -> silu_and_mul -> quant -> down -> moe_sum, rotating over
// routings until their touched weights total rotateBytes (4 to 64
// routings; 0: one routing, hot), timed as Time does; and each kernel alone
// in its own graph over the same rotation (GateUp and Down: the GEMMs with
// their split-K reductions; Quant: both quantisations). Result fields as
// MeasureMoELayer's; Router is not measured and Layer is Experts.
func MeasureFP8MoELayer(f *FP8MoE, g *Glue, c FP8LayerCase, rotateBytes int64, s cuda.Stream) (LayerResult, error) {
	if c.Tokens <= 0 || c.Experts <= 0 || c.TopK <= 0 || c.TopK > c.Experts {
		return LayerResult{}, fmt.Errorf("fp8 moe layer %s: %d tokens, top-%d of %d experts", c.Name, c.Tokens, c.TopK, c.Experts)
	}
	E, k, T, H, I := c.Experts, c.TopK, c.Tokens, c.Hidden, c.Inter
	for _, d := range []int{H, 2 * I, I} {
		if d <= 0 || d%fp8Block != 0 {
			return LayerResult{}, fmt.Errorf("fp8 moe layer %s: hidden %d and expert width %d must be multiples of %d", c.Name, H, I, fp8Block)
		}
	}
	local := E
	if c.Local > 0 {
		local = c.Local
	}
	rows := T * k
	rng := rand.New(rand.NewPCG(c.Seed, 13))
	var bufs deviceBuffers
	defer bufs.free()
	alloc := bufs.alloc
	guBytes, dnBytes := int64(2*I)*int64(H), int64(H)*int64(I)
	guS, dnS := guBytes/fp8Block/fp8Block, dnBytes/fp8Block/fp8Block
	pool := randomFP8Pool(rng, min(fp8Pool, int64(local)*max(guBytes, dnBytes)))
	var wGU, wDn, sGU, sDn cuda.DevicePtr
	var err error
	if wGU, err = alloc(int64(local) * guBytes); err != nil {
		return LayerResult{}, err
	}
	if wDn, err = alloc(int64(local) * dnBytes); err != nil {
		return LayerResult{}, err
	}
	if err := fillFP8(wGU, int64(local)*guBytes, pool); err != nil {
		return LayerResult{}, err
	}
	if err := fillFP8(wDn, int64(local)*dnBytes, pool); err != nil {
		return LayerResult{}, err
	}
	scales := func(n int64) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(0.0005 + 0.001*rng.Float64())
		}
		return out
	}
	if sGU, err = bufs.upload(scales(int64(local)*guS), int64(local)*guS*4); err != nil {
		return LayerResult{}, err
	}
	if sDn, err = bufs.upload(scales(int64(local)*dnS), int64(local)*dnS*4); err != nil {
		return LayerResult{}, err
	}
	x, err := bufs.upload(randomBF16(rng, T*H), int64(T*H*2))
	if err != nil {
		return LayerResult{}, err
	}
	var xq, xs, gu, act, aq, as, dn, out cuda.DevicePtr
	for _, b := range []struct {
		p *cuda.DevicePtr
		n int64
	}{{&xq, int64(T * H)}, {&xs, int64(T * H / fp8Block * 4)}, {&gu, int64(rows * 2 * I * 2)}, {&act, int64(rows * I * 2)},
		{&aq, int64(rows * I)}, {&as, int64(rows * I / fp8Block * 4)}, {&dn, int64(rows * H * 2)}, {&out, int64(T * H * 2)}} {
		if *b.p, err = alloc(b.n); err != nil {
			return LayerResult{}, err
		}
	}
	// Rows of slots routed to other ranks stay 0 (moe_sum skips them; the
	// activation of an unwritten gate_up row is never read by down).
	if err := cuda.Memset8(dn, 0, int64(rows*H*2)); err != nil {
		return LayerResult{}, err
	}
	if err := cuda.Memset8(act, 0, int64(rows*I*2)); err != nil {
		return LayerResult{}, err
	}
	avg := float64(rows) * float64(local) / float64(E) / float64(min(rows, local))
	block := moeBlockRows(avg)
	capRows, capBlocks := alignCapacity(rows, local, block)
	wb := guBytes + dnBytes + (guS+dnS)*4

	res := LayerResult{Name: c.Name, Tokens: T, Block: block}
	var rts []fp8Routing
	var touched, rotated int64
	n := 1
	if rotateBytes > 0 {
		n = 64
	}
	for i := 0; i < n && (i < 4 || rotated < rotateBytes); i++ {
		r, err := routeUniform(c.Seed+uint64(i), T, E, k)
		if err != nil {
			return LayerResult{}, err
		}
		al, err := alignLocal(r, block, 0, local)
		if err != nil {
			return LayerResult{}, err
		}
		if al.Blocks() == 0 {
			if rotateBytes == 0 {
				n++
			}
			continue
		}
		pg, err := f.PlanMoE(al, 2*I, H, k, c.Slices)
		if err != nil {
			return LayerResult{}, err
		}
		pd, err := f.PlanMoE(al, H, I, 1, c.Slices)
		if err != nil {
			return LayerResult{}, err
		}
		ids := make([]int32, rows)
		w := make([]float32, rows)
		for t, sel := range r.TopK {
			for j, e := range sel {
				ids[t*k+j] = int32(e)
				w[t*k+j] = float32(0.05 + 0.2*rng.Float64())
			}
		}
		var dIDs, dW, sorted, experts, post, wsG, wsD cuda.DevicePtr
		if dIDs, err = bufs.upload(ids, int64(rows*4)); err != nil {
			return LayerResult{}, err
		}
		if dW, err = bufs.upload(w, int64(rows*4)); err != nil {
			return LayerResult{}, err
		}
		for _, b := range []struct {
			p *cuda.DevicePtr
			n int64
		}{{&sorted, int64(capRows * 4)}, {&experts, int64(capBlocks * 4)}, {&post, 8}, {&wsG, pg.WorkspaceBytes()}, {&wsD, pd.WorkspaceBytes()}} {
			if *b.p, err = alloc(b.n); err != nil {
				return LayerResult{}, err
			}
		}
		var lr fp8Routing
		if lr.align, err = g.Align(rows, 0, local, block, alignBuffers{TopKIDs: dIDs, SortedIDs: sorted, ExpertIDs: experts, Post: post}, s); err != nil {
			return LayerResult{}, err
		}
		if lr.quantX, err = f.Quant(x, xq, xs, T, H, 0, 0, s); err != nil {
			return LayerResult{}, err
		}
		if lr.quantA, err = f.Quant(act, aq, as, rows, I, sorted, len(al.SortedIDs), s); err != nil {
			return LayerResult{}, err
		}
		if lr.gateUp, err = f.GEMM(pg, FP8Buffers{A: xq, AS: xs, W: wGU, WS: sGU, C: gu, Workspace: wsG, SortedIDs: sorted, ExpertIDs: experts}, s); err != nil {
			return LayerResult{}, err
		}
		if lr.down, err = f.GEMM(pd, FP8Buffers{A: aq, AS: as, W: wDn, WS: sDn, C: dn, Workspace: wsD, SortedIDs: sorted, ExpertIDs: experts}, s); err != nil {
			return LayerResult{}, err
		}
		if lr.act, err = g.SiluAndMul(gu, act, rows, I, s); err != nil {
			return LayerResult{}, err
		}
		if lr.sum, err = g.MoESum(T, k, H, 0, local, moeSumBuffers{Y: dn, Weights: dW, TopKIDs: dIDs, Out: out}, s); err != nil {
			return LayerResult{}, err
		}
		if err := cuda.Synchronize(); err != nil {
			return LayerResult{}, err
		}
		if err := checkAlignOnly(lr, s, al, sorted, experts, post); err != nil {
			return LayerResult{}, fmt.Errorf("%s tokens=%d routing %d: %w", c.Name, T, i, err)
		}
		if len(rts) == 0 {
			res.Blocks, res.GateUpVariant, res.DownVariant = al.Blocks(), pg.Kernel(), pd.Kernel()
		}
		rts = append(rts, lr)
		touched += int64(al.Touched)
		rotated += int64(al.Touched) * wb
	}
	if len(rts) == 0 {
		return LayerResult{}, fmt.Errorf("%s tokens=%d: no routing sent a token to this rank", c.Name, T)
	}
	res.Routings = len(rts)
	res.Touched = float64(touched) / float64(len(rts))
	res.WeightBytes = float64(rotated) / float64(len(rts))
	seq := func(fs ...func() error) func() error {
		return func() error {
			for _, f := range fs {
				if err := f(); err != nil {
					return err
				}
			}
			return nil
		}
	}
	pieces := []struct {
		tm  *unit.Timing
		get func(l fp8Routing) func() error
	}{
		{&res.Experts, func(l fp8Routing) func() error {
			return seq(l.align, l.quantX, l.gateUp, l.act, l.quantA, l.down, l.sum)
		}},
		{&res.Align, func(l fp8Routing) func() error { return l.align }},
		{&res.Quant, func(l fp8Routing) func() error { return seq(l.quantX, l.quantA) }},
		{&res.GateUp, func(l fp8Routing) func() error { return l.gateUp }},
		{&res.Act, func(l fp8Routing) func() error { return l.act }},
		{&res.Down, func(l fp8Routing) func() error { return l.down }},
		{&res.Sum, func(l fp8Routing) func() error { return l.sum }},
	}
	if c.WholeOnly {
		pieces = pieces[:1]
	}
	for _, p := range pieces {
		var launches []func() error
		for _, l := range rts {
			launches = append(launches, p.get(l))
		}
		if *p.tm, err = Time(s, launches, 200); err != nil {
			return LayerResult{}, fmt.Errorf("%s tokens=%d: %w", c.Name, T, err)
		}
	}
	res.Layer = res.Experts
	return res, nil
}

// fp8Routing is one routing's launches (gate_up and down: the GEMMs, with
// their split-K reductions; quantX and quantA: the quantisations of their
// inputs).
type fp8Routing struct {
	align, quantX, gateUp, act, quantA, down, sum func() error
}

// checkAlignOnly runs one routing's align kernel and checks the device's
// layout against the host's.
func checkAlignOnly(lr fp8Routing, s cuda.Stream, al *Aligned, sorted, experts, post cuda.DevicePtr) error {
	if err := lr.align(); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	p := make([]int32, 2)
	if err := cuda.CopyFromDevice(p, post); err != nil {
		return err
	}
	if int(p[0]) != len(al.SortedIDs) || int(p[1]) != al.Blocks() {
		return fmt.Errorf("device align: %d rows in %d blocks, host %d in %d", p[0], p[1], len(al.SortedIDs), al.Blocks())
	}
	gs, ge := make([]int32, len(al.SortedIDs)), make([]int32, al.Blocks())
	if err := cuda.CopyFromDevice(gs, sorted); err != nil {
		return err
	}
	if err := cuda.CopyFromDevice(ge, experts); err != nil {
		return err
	}
	if !slices.Equal(gs, al.SortedIDs) || !slices.Equal(ge, al.ExpertIDs) {
		return fmt.Errorf("device align: sorted or expert ids differ from the host's")
	}
	return nil
}
