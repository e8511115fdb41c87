package gpu

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/unit"
)

// MoELayerCase is one routed-expert layer on one GPU as vLLM's
// fused_marlin_moe runs it: Tokens tokens of Hidden through the router
// top-k (Router) over fp32 (or bf16) logits, moe_align, the gate_up GEMM
// (Hidden -> 2 x Inter), silu_and_mul, the down GEMM (Inter -> Hidden) and
// the top-k weighted sum. Inter is this GPU's slice of the expert width;
// Local > 0: the rank holds experts [0, Local) of Router.Experts (expert
// parallelism), 0: all of them.
type MoELayerCase struct {
	Name          string
	Tokens        int
	Hidden, Inter int
	Group         int
	Router        RouterConfig
	LogitsBF16    bool
	Local         int
	Seed          uint64
	Opt           Options // the GEMM plans' options (MT comes from the routing)
	// WholeOnly times the whole layer and the layer without its router
	// alone (no per-kernel graphs).
	WholeOnly bool
	// SwigluOAI runs gpt-oss's clamped SwiGLU (interleaved gate and up,
	// alpha 1.702, limit 7) instead of silu_and_mul.
	SwigluOAI bool
	// Hot also times the layer without its router on the first routing
	// alone (LayerResult.Hot): its weights left hot in L2 as far as they
	// fit. It is what a second call with rotateBytes 0 measures (the same
	// seed draws the same weights and first routing reaching the rank),
	// on the buffers this call has already filled.
	Hot bool
}

// LayerResult is one timed layer: the whole layer in one graph, and each
// kernel alone in its own graph over the same routings (per call).
type LayerResult struct {
	Name   string
	Tokens int
	Layer  unit.Timing
	// Experts is the layer without its router top-k (align, gate_up,
	// act, down, sum in one graph, on the ids the router wrote before):
	// what kernels.MoEShape prices (the router top-k is a cost of its own).
	Experts                               unit.Timing
	Router, Align, GateUp, Act, Down, Sum unit.Timing
	// Quant is the activation quantisations of a layer that has them
	// (block fp8: both GEMM inputs, per token and group of 128).
	Quant unit.Timing
	// Hot is Experts over the first routing alone (MoELayerCase.Hot).
	Hot                        unit.Timing
	Routings                   int     // routings rotated over (1: hot)
	Touched                    float64 // local experts the routings touch, mean
	WeightBytes                float64 // their gate_up + down weight bytes, mean
	Block                      int     // moe_align block (rows)
	Blocks                     int     // row blocks of the first routing
	GateUpVariant, DownVariant string
}

// layerRouting is one routing's buffers and launches.
type layerRouting struct {
	router, align, gateUp, act, down, sum func() error
}

// MeasureMoELayer times the whole MoE layer: one CUDA graph per call of
// router top-k -> moe_align -> gate_up GEMM -> silu_and_mul -> down GEMM
// -> moe_sum, rotating over routings drawn from c.Seed (uniform top-k,
// turned into logits that the router's top-k maps back to them) until
// their touched weights total rotateBytes (4 to 64 routings; rotateBytes
// 0: one routing, the weights left hot in L2 as far as they fit), timed as
// Time does; and each of the six kernels alone, in its own graph over the
// same rotation. The align kernel runs on the device on the router's ids
// and the GEMMs read its sorted and expert ids; their grids are sized from
// the host's alignment of the same routing (checked equal to the device's
// once per routing), not for the worst case as vLLM's Marlin MoE sizes it.
func MeasureMoELayer(m *Module, g *Glue, c MoELayerCase, rotateBytes int64, s cuda.Stream) (LayerResult, error) {
	rc := c.Router
	if err := rc.Check(); err != nil {
		return LayerResult{}, err
	}
	if rc.Groups != 1 {
		return LayerResult{}, fmt.Errorf("moe layer: %d router groups: the measurement draws ungrouped routings", rc.Groups)
	}
	if c.Tokens <= 0 {
		return LayerResult{}, fmt.Errorf("moe layer: %d tokens: want > 0", c.Tokens)
	}
	if err := checkShape(2*c.Inter, c.Hidden, c.Group); err != nil {
		return LayerResult{}, err
	}
	if err := checkShape(c.Hidden, c.Inter, c.Group); err != nil {
		return LayerResult{}, err
	}
	E, k, T, H, I := rc.Experts, rc.TopK, c.Tokens, c.Hidden, c.Inter
	local := E
	if c.Local > 0 {
		local = c.Local
	}
	rows := T * k
	rng := rand.New(rand.NewPCG(c.Seed, 11))
	var bufs deviceBuffers
	defer bufs.free()
	alloc := bufs.alloc
	upload := func(p cuda.DevicePtr, err error) (cuda.DevicePtr, error) {
		if err == nil {
			bufs = append(bufs, p)
		}
		return p, err
	}
	guQ, guS, err := randomDeviceWeights(rng, 2*I, H, c.Group, local)
	bufs = append(bufs, guQ, guS)
	if err != nil {
		return LayerResult{}, err
	}
	dnQ, dnS, err := randomDeviceWeights(rng, H, I, c.Group, local)
	bufs = append(bufs, dnQ, dnS)
	if err != nil {
		return LayerResult{}, err
	}
	// Activations shared by every routing (one stream runs them in turn).
	x, err := upload(Upload(randomBF16(rng, T*H), 2))
	if err != nil {
		return LayerResult{}, err
	}
	bias := randomBias(rng, E)
	dBias, err := upload(Upload(bias, 4))
	if err != nil {
		return LayerResult{}, err
	}
	var gu, act, dn, out cuda.DevicePtr
	for _, b := range []struct {
		p *cuda.DevicePtr
		n int64
	}{{&gu, int64(rows * 2 * I * 2)}, {&act, int64(rows * I * 2)}, {&dn, int64(rows * H * 2)}, {&out, int64(T * H * 2)}} {
		if *b.p, err = alloc(b.n); err != nil {
			return LayerResult{}, err
		}
	}
	if err := cuda.Memset8(dn, 0, int64(rows*H*2)); err != nil { // EP: rows of remote slots stay 0
		return LayerResult{}, err
	}
	wbGU := int64(2*I*H/2 + 2*I*H/c.Group*2)
	wbDn := int64(H*I/2 + H*I/c.Group*2)
	avg := float64(rows) * float64(local) / float64(E) / float64(min(rows, local))
	block := m.moeBlock(avg, c.Opt, 2*I, H)
	capRows, capBlocks := alignCapacity(rows, local, block)

	res := LayerResult{Name: c.Name, Tokens: T, Block: block}
	var rts []layerRouting
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
		logits := logitsFor(rng, r)
		ids, _, _, err := hostRouter(rc, logits, bias, T)
		if err != nil {
			return LayerResult{}, err
		}
		if got := routingOf(ids, E, k); !slices.EqualFunc(got.TopK, r.TopK, slices.Equal[[]int]) {
			return LayerResult{}, fmt.Errorf("moe layer: the host router does not map the drawn logits back to their routing")
		}
		al, err := alignLocal(r, block, 0, local)
		if err != nil {
			return LayerResult{}, err
		}
		if al.Blocks() == 0 {
			if rotateBytes == 0 {
				n++ // hot: the first routing that reaches this rank
			}
			continue
		}
		pg, err := m.PlanMoE(al, 2*I, H, c.Group, k, c.Opt)
		if err != nil {
			return LayerResult{}, err
		}
		pd, err := m.PlanMoE(al, H, I, c.Group, 1, c.Opt)
		if err != nil {
			return LayerResult{}, err
		}
		var dLogits cuda.DevicePtr
		if c.LogitsBF16 {
			lb := make([]BF16, len(logits))
			for j, v := range logits {
				lb[j] = toBF16(v)
			}
			dLogits, err = upload(Upload(lb, 2))
		} else {
			dLogits, err = upload(Upload(logits, 4))
		}
		if err != nil {
			return LayerResult{}, err
		}
		var dIDs, dW, sorted, experts, post, wsG, ctrG, wsD, ctrD cuda.DevicePtr
		for _, b := range []struct {
			p *cuda.DevicePtr
			n int64
		}{{&dIDs, int64(rows * 4)}, {&dW, int64(rows * 4)}, {&sorted, int64(capRows * 4)}, {&experts, int64(capBlocks * 4)},
			{&post, 8}, {&wsG, pg.WorkspaceBytes()}, {&ctrG, pg.CounterBytes()}, {&wsD, pd.WorkspaceBytes()}, {&ctrD, pd.CounterBytes()}} {
			if *b.p, err = alloc(b.n); err != nil {
				return LayerResult{}, err
			}
		}
		for _, ctr := range []struct {
			p cuda.DevicePtr
			n int64
		}{{ctrG, pg.CounterBytes()}, {ctrD, pd.CounterBytes()}} {
			if err := cuda.Memset8(ctr.p, 0, max(ctr.n, 16)); err != nil {
				return LayerResult{}, err
			}
		}
		var lr layerRouting
		if lr.router, err = g.Router(rc, T, routerBuffers{Logits: dLogits, Bias: dBias, IDs: dIDs, Weights: dW, LogitsBF16: c.LogitsBF16}, s); err != nil {
			return LayerResult{}, err
		}
		if lr.align, err = g.Align(rows, 0, local, block, alignBuffers{TopKIDs: dIDs, SortedIDs: sorted, ExpertIDs: experts, Post: post}, s); err != nil {
			return LayerResult{}, err
		}
		ga, err := pg.Args(Buffers{A: x, W: guQ, S: guS, C: gu, Workspace: wsG, Counters: ctrG, SortedIDs: sorted, ExpertIDs: experts})
		if err != nil {
			return LayerResult{}, err
		}
		da, err := pd.Args(Buffers{A: act, W: dnQ, S: dnS, C: dn, Workspace: wsD, Counters: ctrD, SortedIDs: sorted, ExpertIDs: experts})
		if err != nil {
			return LayerResult{}, err
		}
		lr.gateUp = func() error { return m.LaunchArgs(pg, ga, s) }
		lr.down = func() error { return m.LaunchArgs(pd, da, s) }
		if c.SwigluOAI {
			lr.act, err = g.SwigluOAI(gu, act, rows, I, SwigluOAIAlpha, SwigluOAILimit, s)
		} else {
			lr.act, err = g.SiluAndMul(gu, act, rows, I, s)
		}
		if err != nil {
			return LayerResult{}, err
		}
		if lr.sum, err = g.MoESum(T, k, H, 0, local, moeSumBuffers{Y: dn, Weights: dW, TopKIDs: dIDs, Out: out}, s); err != nil {
			return LayerResult{}, err
		}
		// The device's top-k and alignment must be the host's: the GEMM
		// grids come from it.
		if err := cuda.Synchronize(); err != nil {
			return LayerResult{}, err
		}
		if err := checkDeviceAlign(lr, s, al, sorted, experts, post); err != nil {
			return LayerResult{}, fmt.Errorf("%s tokens=%d routing %d: %w", c.Name, T, i, err)
		}
		if len(rts) == 0 {
			res.Blocks, res.GateUpVariant, res.DownVariant = al.Blocks(), pg.Variant().Name(), pd.Variant().Name()
		}
		rts = append(rts, lr)
		touched += int64(al.Touched)
		rotated += int64(al.Touched) * (wbGU + wbDn)
	}
	if len(rts) == 0 {
		return LayerResult{}, fmt.Errorf("%s tokens=%d: no routing sent a token to this rank", c.Name, T)
	}
	res.Routings = len(rts)
	res.Touched = float64(touched) / float64(len(rts))
	res.WeightBytes = float64(rotated) / float64(len(rts))
	pieces := []layerPiece[layerRouting]{
		{&res.Layer, func(l layerRouting) func() error { return chain(l.router, l.align, l.gateUp, l.act, l.down, l.sum) }},
		{&res.Experts, func(l layerRouting) func() error { return chain(l.align, l.gateUp, l.act, l.down, l.sum) }},
		{&res.Router, func(l layerRouting) func() error { return l.router }},
		{&res.Align, func(l layerRouting) func() error { return l.align }},
		{&res.GateUp, func(l layerRouting) func() error { return l.gateUp }},
		{&res.Act, func(l layerRouting) func() error { return l.act }},
		{&res.Down, func(l layerRouting) func() error { return l.down }},
		{&res.Sum, func(l layerRouting) func() error { return l.sum }},
	}
	if c.WholeOnly {
		pieces = pieces[:2]
	}
	if err := timePieces(s, rts, pieces); err != nil {
		return LayerResult{}, fmt.Errorf("%s tokens=%d: %w", c.Name, T, err)
	}
	if c.Hot {
		if err := timePieces(s, rts[:1], []layerPiece[layerRouting]{{&res.Hot, pieces[1].get}}); err != nil {
			return LayerResult{}, fmt.Errorf("%s tokens=%d hot: %w", c.Name, T, err)
		}
	}
	return res, nil
}

// layerPiece is one graph a layer measurement times: the launch get picks
// from each routing and the timing it fills.
type layerPiece[R any] struct {
	tm  *unit.Timing
	get func(R) func() error
}

// timePieces times each piece as Time does, over one launch per routing.
func timePieces[R any](s cuda.Stream, rts []R, pieces []layerPiece[R]) error {
	for _, p := range pieces {
		var launches []func() error
		for _, l := range rts {
			launches = append(launches, p.get(l))
		}
		var err error
		if *p.tm, err = Time(s, launches, 200); err != nil {
			return err
		}
	}
	return nil
}

// chain is one launch that runs fs in order, stopping at the first error.
func chain(fs ...func() error) func() error {
	return func() error {
		for _, f := range fs {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkDeviceAlign runs one routing's router and align kernels and checks
// the device's layout against the host's.
func checkDeviceAlign(lr layerRouting, s cuda.Stream, al *Aligned, sorted, experts, post cuda.DevicePtr) error {
	if err := lr.router(); err != nil {
		return err
	}
	return checkAlign(lr.align, s, al, sorted, experts, post)
}

// checkAlign runs one routing's align kernel and checks the device's
// layout (post: rows and blocks; sorted and expert ids) against the host's.
func checkAlign(align func() error, s cuda.Stream, al *Aligned, sorted, experts, post cuda.DevicePtr) error {
	if err := align(); err != nil {
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

// Elementwise kernels MeasureElementwise times.
const (
	KernelRMSNorm    = "rmsnorm"      // Tokens x Width bf16, weight [Width]
	KernelAdd        = "add"          // residual add: two Tokens x Width bf16 into one
	KernelSiluAndMul = "silu_and_mul" // Tokens rows of 2 x Width into Width
)

// ElementwiseCase is one small kernel at one size.
type ElementwiseCase struct {
	Kernel        string
	Tokens, Width int
}

// Bytes is what the kernel reads and writes once, as kernels/elementwise.go
// counts it: RMSNorm 2 (2 T W + W), add 6 T W, silu_and_mul 6 T W.
func (c ElementwiseCase) Bytes() int64 {
	tw := int64(c.Tokens) * int64(c.Width)
	switch c.Kernel {
	case KernelRMSNorm:
		return 2 * (2*tw + int64(c.Width))
	case KernelAdd, KernelSiluAndMul:
		return 6 * tw
	}
	return 0
}

// MeasureElementwise times one kernel inside a graph (Time: median of 15
// replays of up to 200 calls) on the same buffers every call, so that a
// replay finds them in L2 when they fit (warm), as a step's small tensors
// usually are.
func MeasureElementwise(g *Glue, c ElementwiseCase, s cuda.Stream) (unit.Timing, error) {
	if c.Tokens <= 0 || c.Width <= 0 {
		return unit.Timing{}, fmt.Errorf("%s: %d x %d: want positive sizes", c.Kernel, c.Tokens, c.Width)
	}
	rng := rand.New(rand.NewPCG(uint64(c.Tokens), uint64(c.Width)))
	var bufs deviceBuffers
	defer bufs.free()
	up := func(n int) (cuda.DevicePtr, error) {
		p, err := Upload(randomBF16(rng, n), 2)
		if err == nil {
			bufs = append(bufs, p)
		}
		return p, err
	}
	tw := c.Tokens * c.Width
	var launch func() error
	var err error
	switch c.Kernel {
	case KernelRMSNorm:
		var x, w, out cuda.DevicePtr
		if x, err = up(tw); err == nil {
			if w, err = up(c.Width); err == nil {
				if out, err = up(tw); err == nil {
					launch, err = g.RMSNorm(x, w, out, c.Tokens, c.Width, 1e-6, s)
				}
			}
		}
	case KernelAdd:
		var a, b, out cuda.DevicePtr
		if a, err = up(tw); err == nil {
			if b, err = up(tw); err == nil {
				if out, err = up(tw); err == nil {
					launch, err = g.Add(a, b, out, int64(tw), s)
				}
			}
		}
	case KernelSiluAndMul:
		var x, out cuda.DevicePtr
		if x, err = up(2 * tw); err == nil {
			if out, err = up(tw); err == nil {
				launch, err = g.SiluAndMul(x, out, c.Tokens, c.Width, s)
			}
		}
	default:
		return unit.Timing{}, fmt.Errorf("elementwise kernel %q: want %s, %s or %s", c.Kernel, KernelRMSNorm, KernelAdd, KernelSiluAndMul)
	}
	if err != nil {
		return unit.Timing{}, fmt.Errorf("%s %d x %d: %w", c.Kernel, c.Tokens, c.Width, err)
	}
	if err := cuda.Synchronize(); err != nil {
		return unit.Timing{}, err
	}
	tm, err := Time(s, []func() error{launch}, 200)
	if err != nil {
		return unit.Timing{}, fmt.Errorf("%s %d x %d: %w", c.Kernel, c.Tokens, c.Width, err)
	}
	return tm, nil
}
