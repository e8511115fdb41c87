package gpu

import (
	"fmt"

	"github.com/moecast/moecast/internal/cuda"
)

// Glue is glue.cu's kernels loaded into the current context: what a MoE
// layer runs around its two expert GEMMs as vLLM's fused_marlin_moe runs
// them (router top-k, moe_align_block_size, silu_and_mul, moe_sum) and the
// small elementwise kernels of a step (RMSNorm, residual add). Each
// launcher checks its shapes, marshals the arguments once and returns a
// function that launches on the stream (for eager runs and graph capture).
type Glue struct {
	routerF32, routerBF16, align, silu, swiglu, sum, rmsnorm, add cuda.Function
	Image                                                         string // the image's name or path
	SMs                                                           int
}

// Kernel shapes of glue.cu.
const (
	routerWarps      = 4    // tokens per router block (one warp each)
	alignThreads     = 1024 // the align kernel's one block
	alignWarps       = alignThreads / 32
	maxLocalExperts  = 512                // align: experts one rank holds, at most (shared memory: 72 KB)
	alignChunk       = 8 * alignThreads   // pairs an align chunk takes
	maxAlignPairs    = 65535 * alignChunk // chunks carry a 16-bit stamp
	maxRouterExperts = 512
	elementThreads   = 256
	maxElementBlocks = 1 << 16
)

// LoadGlue loads glue.cu's kernels for dev into the current context (the
// image MOECAST_GLUE_MODULE names, else the embedded one).
func LoadGlue(dev cuda.Device) (*Glue, error) {
	sms, err := dev.Attribute(cuda.AttrMultiprocessorCount)
	if err != nil {
		return nil, err
	}
	mod, name, err := loadImage(dev, "glue")
	if err != nil {
		return nil, err
	}
	g := &Glue{Image: name, SMs: sms}
	for _, f := range []struct {
		fn   *cuda.Function
		name string
	}{{&g.routerF32, "moecast_router_f32"}, {&g.routerBF16, "moecast_router_bf16"}, {&g.align, "moecast_moe_align"},
		{&g.silu, "moecast_silu_and_mul"}, {&g.swiglu, "moecast_swiglu_oai"}, {&g.sum, "moecast_moe_sum"}, {&g.rmsnorm, "moecast_rmsnorm"}, {&g.add, "moecast_add"}} {
		if *f.fn, err = mod.Function(f.name); err != nil {
			return nil, err
		}
	}
	if err := g.align.SetAttribute(cuda.FuncMaxDynamicSharedMemory, alignSmem(maxLocalExperts)); err != nil {
		return nil, fmt.Errorf("glue: moecast_moe_align: %d B of shared memory: %w", alignSmem(maxLocalExperts), err)
	}
	return g, nil
}

// RouterConfig is a MoE router's top-k: sigmoid scores (plus a correction
// bias for the choice), Groups groups of which the TopKGroups best are kept
// (a group's score: the sum of its two best biased scores; 1 and 1: plain
// top-k), the TopK best biased scores, weights the unbiased scores,
// renormalised to sum 1 when Renormalize, times Scale.
type RouterConfig struct {
	Experts, TopK, Groups, TopKGroups int
	Renormalize                       bool
	Scale                             float32
}

// KimiRouter is Kimi-K2.5's router (noaux_tc, n_group 1, topk_group 1,
// norm_topk_prob, routed_scaling_factor 2.827).
var KimiRouter = RouterConfig{Experts: 384, TopK: 8, Groups: 1, TopKGroups: 1, Renormalize: true, Scale: 2.827}

// deepSeekV3Router is DeepSeek-V3's (256 experts, 8 groups, 4 kept, 2.5).
var deepSeekV3Router = RouterConfig{Experts: 256, TopK: 8, Groups: 8, TopKGroups: 4, Renormalize: true, Scale: 2.5}

// Check says what is wrong with c for the kernel.
func (c RouterConfig) Check() error {
	switch {
	case c.Experts <= 0 || c.TopK <= 0 || c.TopK > 32 || c.TopK > c.Experts:
		return fmt.Errorf("router: top-%d of %d experts: want 0 < k <= 32 and k <= experts", c.TopK, c.Experts)
	case c.Groups <= 0 || c.Groups > 32 || c.Experts%c.Groups != 0:
		return fmt.Errorf("router: %d groups of %d experts: want 1..32 groups dividing the experts", c.Groups, c.Experts)
	case c.TopKGroups <= 0 || c.TopKGroups > c.Groups || c.TopKGroups*(c.Experts/c.Groups) < c.TopK:
		return fmt.Errorf("router: %d of %d groups kept for top-%d: want 1..groups groups holding at least k experts", c.TopKGroups, c.Groups, c.TopK)
	case c.Experts > maxRouterExperts:
		return fmt.Errorf("router: %d experts: at most %d", c.Experts, maxRouterExperts)
	}
	return nil
}

// routerBuffers are the router's device tensors: Logits [tokens][experts]
// (fp32, or bf16 when LogitsBF16), Bias [experts] fp32 (0: none), IDs and
// Weights [tokens][k] (int32, fp32).
type routerBuffers struct {
	Logits, Bias, IDs, Weights cuda.DevicePtr
	LogitsBF16                 bool
}

// Router returns the launch of the router top-k over tokens tokens.
func (g *Glue) Router(c RouterConfig, tokens int, b routerBuffers, s cuda.Stream) (func() error, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if tokens <= 0 {
		return nil, fmt.Errorf("router: %d tokens: want > 0", tokens)
	}
	renorm := int32(0)
	if c.Renormalize {
		renorm = 1
	}
	args, err := cuda.MarshalParams(b.Logits, b.Bias, b.IDs, b.Weights, int32(tokens), int32(c.Experts), int32(c.TopK),
		int32(c.Groups), int32(c.TopKGroups), renorm, c.Scale)
	if err != nil {
		return nil, err
	}
	f := g.routerF32
	if b.LogitsBF16 {
		f = g.routerBF16
	}
	grid := cuda.Dim3{X: (tokens + routerWarps - 1) / routerWarps, Y: 1, Z: 1}
	smem := 2 * routerWarps * c.Experts * 4
	return func() error { return f.LaunchParams(grid, cuda.Dim3{X: 32 * routerWarps, Y: 1, Z: 1}, smem, s, args) }, nil
}

// alignCapacity is the rows and blocks the align kernel may write for pairs
// (token, slot) pairs over count local experts in blocks of block rows:
// the size of SortedIDs and ExpertIDs.
func alignCapacity(pairs, count, block int) (rows, blocks int) {
	blocks = (pairs + block - 1) / block
	blocks += min(pairs, count) // each touched expert pads at most one block
	return blocks * block, blocks
}

// alignBuffers are the align kernel's tensors: TopKIDs [pairs] int32 in;
// SortedIDs and ExpertIDs (alignCapacity) and Post (2 int32: padded rows,
// blocks) out.
type alignBuffers struct {
	TopKIDs, SortedIDs, ExpertIDs, Post cuda.DevicePtr
}

// Align returns the launch of moe_align_block_size on the device: the
// pairs routed to experts [first, first+count) laid out as alignLocal lays
// them out (ExpertIDs count from first).
func (g *Glue) Align(pairs, first, count, block int, b alignBuffers, s cuda.Stream) (func() error, error) {
	if pairs <= 0 || pairs > maxAlignPairs || first < 0 || count <= 0 || count > maxLocalExperts || block <= 0 || block > 1<<15 {
		return nil, fmt.Errorf("align: %d pairs, experts [%d,%d), block %d: want 1..%d pairs, 1..%d local experts, block 1..32768",
			pairs, first, first+count, block, maxAlignPairs, maxLocalExperts)
	}
	args, err := cuda.MarshalParams(b.TopKIDs, int32(pairs), int32(first), int32(count), int32(block), b.SortedIDs, b.ExpertIDs, b.Post)
	if err != nil {
		return nil, err
	}
	smem := alignSmem(count)
	return func() error {
		return g.align.LaunchParams(cuda.Dim3{X: 1, Y: 1, Z: 1}, cuda.Dim3{X: alignThreads, Y: 1, Z: 1}, smem, s, args)
	}, nil
}

// alignSmem is the align kernel's shared memory for count local experts:
// 32 rows of count|1 counters, 4 arrays of count and 32 words.
func alignSmem(count int) int { return (alignWarps*(count|1)+4*count)*4 + 128 }

// elementGrid is the blocks of 256 threads for work items, one wave-sized
// grid at most (the kernels loop).
func elementGrid(items int64) cuda.Dim3 {
	return cuda.Dim3{X: int(min(maxElementBlocks, max(1, (items+elementThreads-1)/elementThreads))), Y: 1, Z: 1}
}

// SiluAndMul returns the launch of out[r] = silu(x[r, :n]) * x[r, n:] over
// rows rows (x [rows][2n], out [rows][n], bf16).
func (g *Glue) SiluAndMul(x, out cuda.DevicePtr, rows, n int, s cuda.Stream) (func() error, error) {
	if rows <= 0 || n <= 0 || n%8 != 0 {
		return nil, fmt.Errorf("silu_and_mul: %d rows of 2x%d: want rows > 0 and n a positive multiple of 8", rows, n)
	}
	args, err := cuda.MarshalParams(x, out, int32(rows), int32(n))
	if err != nil {
		return nil, err
	}
	grid := elementGrid(int64(rows) * int64(n/8))
	return func() error { return g.silu.LaunchParams(grid, cuda.Dim3{X: elementThreads, Y: 1, Z: 1}, 0, s, args) }, nil
}

// gpt-oss's clamped SwiGLU constants (vLLM's swigluoai_and_mul defaults,
// csrc/torch_bindings.cpp; transformers' GptOssExperts alpha and limit).
const (
	SwigluOAIAlpha = 1.702
	SwigluOAILimit = 7.0
)

// SwigluOAI returns the launch of gpt-oss's clamped SwiGLU over rows rows
// (x [rows][2n], gate and up interleaved, out [rows][n], bf16).
func (g *Glue) SwigluOAI(x, out cuda.DevicePtr, rows, n int, alpha, limit float32, s cuda.Stream) (func() error, error) {
	if rows <= 0 || n <= 0 || n%8 != 0 {
		return nil, fmt.Errorf("swiglu_oai: %d rows of 2x%d: want rows > 0 and n a positive multiple of 8", rows, n)
	}
	args, err := cuda.MarshalParams(x, out, int32(rows), int32(n), alpha, limit)
	if err != nil {
		return nil, err
	}
	grid := elementGrid(int64(rows) * int64(n/8))
	return func() error { return g.swiglu.LaunchParams(grid, cuda.Dim3{X: elementThreads, Y: 1, Z: 1}, 0, s, args) }, nil
}

// moeSumBuffers are moe_sum's tensors: Y [tokens*k][h] bf16 (the down
// GEMM's rows), Weights [tokens*k] fp32, TopKIDs [tokens*k], Out
// [tokens][h] bf16.
type moeSumBuffers struct {
	Y, Weights, TopKIDs, Out cuda.DevicePtr
}

// MoESum returns the launch of the top-k weighted sum of each token's
// slots routed to experts [first, first+count) (the others count 0).
func (g *Glue) MoESum(tokens, k, h, first, count int, b moeSumBuffers, s cuda.Stream) (func() error, error) {
	if tokens <= 0 || k <= 0 || h <= 0 || h%8 != 0 || first < 0 || count <= 0 {
		return nil, fmt.Errorf("moe_sum: %d tokens x top-%d x %d, experts [%d,%d): want positive sizes, h %% 8 == 0", tokens, k, h, first, first+count)
	}
	args, err := cuda.MarshalParams(b.Y, b.Weights, b.TopKIDs, b.Out, int32(tokens), int32(k), int32(h), int32(first), int32(count))
	if err != nil {
		return nil, err
	}
	grid := elementGrid(int64(tokens) * int64(h/8))
	return func() error { return g.sum.LaunchParams(grid, cuda.Dim3{X: elementThreads, Y: 1, Z: 1}, 0, s, args) }, nil
}

// RMSNorm returns the launch of out = x / sqrt(mean(x^2) + eps) * weight
// over tokens rows of h (bf16; one block a token).
func (g *Glue) RMSNorm(x, weight, out cuda.DevicePtr, tokens, h int, eps float32, s cuda.Stream) (func() error, error) {
	if tokens <= 0 || h <= 0 || h%8 != 0 || tokens > 1<<31-1 {
		return nil, fmt.Errorf("rmsnorm: %d tokens x %d: want positive sizes, h %% 8 == 0", tokens, h)
	}
	args, err := cuda.MarshalParams(x, weight, out, int32(h), eps)
	if err != nil {
		return nil, err
	}
	threads := min(1024, (h/8+31)/32*32)
	return func() error {
		return g.rmsnorm.LaunchParams(cuda.Dim3{X: tokens, Y: 1, Z: 1}, cuda.Dim3{X: threads, Y: 1, Z: 1}, 0, s, args)
	}, nil
}

// Add returns the launch of out = a + b over n bf16 elements (out may be a).
func (g *Glue) Add(a, b, out cuda.DevicePtr, n int64, s cuda.Stream) (func() error, error) {
	if n <= 0 || n%8 != 0 {
		return nil, fmt.Errorf("add: %d elements: want a positive multiple of 8", n)
	}
	args, err := cuda.MarshalParams(a, b, out, n)
	if err != nil {
		return nil, err
	}
	grid := elementGrid(n / 8)
	return func() error { return g.add.LaunchParams(grid, cuda.Dim3{X: elementThreads, Y: 1, Z: 1}, 0, s, args) }, nil
}
