package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/moecast/moecast/internal/cuda"
)

// FP8MoE is fp8moe.cu's kernels loaded into the current context: the
// block-fp8 MoE grouped GEMM (e4m3 weights with one fp32 scale per 128 x
// 128 block, e4m3 activations with one fp32 scale per token and group of
// 128), its split-K reduction and the per-token-group activation
// quantisation (docs/decisions/0010-block-fp8-moe.md).
type FP8MoE struct {
	gemm          map[int]cuda.Function // by MT (1, 2, 4)
	reduce, quant cuda.Function
	Image         string
	SMs           int
}

// fp8Block is the quantisation block: 128 x 128 weights share a scale,
// 128 activations of a token share one.
const fp8Block = 128

// fp8Stages is fp8moe.cu's pipeline depth.
const fp8Stages = 3

// fp8Smem is the dynamic shared memory of the MT kernel: per stage 128
// rows of weights and 16*MT of activations (128 bytes each), the rows'
// scales and the weight block's scale.
func fp8Smem(mt int) int { return fp8Stages * (fp8Block*fp8Block + 16*mt*fp8Block + 16*mt*4 + 16) }

// fp8Name is the GEMM kernel with MT m16 tiles.
func fp8Name(mt int) string { return fmt.Sprintf("fp8moe_mt%d", mt) }

// LoadFP8MoE loads fp8moe.cu's kernels for dev (the image
// MOECAST_FP8MOE_MODULE names, else the embedded one).
func LoadFP8MoE(dev cuda.Device) (*FP8MoE, error) {
	sms, err := dev.Attribute(cuda.AttrMultiprocessorCount)
	if err != nil {
		return nil, err
	}
	mod, name, err := loadImage(dev, "fp8moe")
	if err != nil {
		return nil, err
	}
	f := &FP8MoE{gemm: map[int]cuda.Function{}, Image: name, SMs: sms}
	for _, mt := range []int{1, 2, 4} {
		fn, err := mod.Function(fp8Name(mt))
		if err != nil {
			return nil, err
		}
		if err := fn.SetAttribute(cuda.FuncMaxDynamicSharedMemory, fp8Smem(mt)); err != nil {
			return nil, fmt.Errorf("fp8moe: %s: %d B of shared memory: %w", fp8Name(mt), fp8Smem(mt), err)
		}
		f.gemm[mt] = fn
	}
	if f.reduce, err = mod.Function("fp8moe_reduce"); err != nil {
		return nil, err
	}
	if f.quant, err = mod.Function("fp8moe_quant"); err != nil {
		return nil, err
	}
	return f, nil
}

// FP8Plan is one grouped GEMM launch: MBlocks row blocks of 16*MT rows x
// N/128 column tiles x Slices slices of K (split-K: fp32 partial sums,
// then fp8moe_reduce).
type FP8Plan struct {
	M, N, K, MT, MBlocks, Slices, ADiv int
}

// Kernel names the plan's kernels.
func (p FP8Plan) Kernel() string {
	if p.Slices > 1 {
		return fmt.Sprintf("%s_k%d+reduce", fp8Name(p.MT), p.Slices)
	}
	return fp8Name(p.MT)
}

// WorkspaceBytes is the split-K partial sums' buffer: Slices x M x N fp32.
func (p FP8Plan) WorkspaceBytes() int64 {
	if p.Slices <= 1 {
		return 0
	}
	return int64(p.Slices) * int64(p.M) * int64(p.N) * 4
}

// fp8MaxWorkspace bounds the split-K workspace a default plan takes.
const fp8MaxWorkspace = 256 << 20

// PlanMoE plans the grouped GEMM over an aligned batch (rows a.Tokens*a.K,
// aDiv maps an id to its row of A); slices 0 chooses the split of K: about
// two blocks per multiprocessor where the tiles are fewer, at least 4
// K blocks a slice.
func (f *FP8MoE) PlanMoE(a *Aligned, N, K, aDiv, slices int) (FP8Plan, error) {
	if N <= 0 || K <= 0 || N%fp8Block != 0 || K%fp8Block != 0 {
		return FP8Plan{}, fmt.Errorf("fp8moe: %d x %d: N and K must be positive multiples of %d", N, K, fp8Block)
	}
	if a.Block != 16 && a.Block != 32 && a.Block != 64 {
		return FP8Plan{}, fmt.Errorf("fp8moe: moe block %d: want 16, 32 or 64", a.Block)
	}
	if aDiv <= 0 {
		return FP8Plan{}, fmt.Errorf("fp8moe: a_div %d: want > 0", aDiv)
	}
	p := FP8Plan{M: a.Tokens * a.K, N: N, K: K, MT: a.Block / 16, MBlocks: a.Blocks(), ADiv: aDiv}
	if p.MBlocks == 0 {
		return FP8Plan{}, fmt.Errorf("fp8moe: batch has no rows")
	}
	kb := K / fp8Block
	if slices == 0 {
		tiles := p.MBlocks * (N / fp8Block)
		slices = max(1, min((2*max(1, f.SMs)+tiles-1)/tiles, kb/4))
		for slices > 1 && int64(slices)*int64(p.M)*int64(N)*4 > fp8MaxWorkspace {
			slices--
		}
	}
	if slices < 1 || slices > kb {
		return FP8Plan{}, fmt.Errorf("fp8moe: %d slices of %d K blocks", slices, kb)
	}
	per := (kb + slices - 1) / slices
	p.Slices = (kb + per - 1) / per // no empty slice
	return p, nil
}

// FP8Buffers are one launch's device buffers: A [rows of A][K] e4m3 and AS
// [rows of A][K/128] fp32, W [experts][N][K] e4m3 and WS
// [experts][N/128][K/128] fp32, C [M][N] bf16, the split-K workspace and
// the sorted and expert ids.
type FP8Buffers struct {
	A, AS, W, WS, C, Workspace, SortedIDs, ExpertIDs cuda.DevicePtr
}

// GEMM returns the launch(es) of the plan on the stream.
func (f *FP8MoE) GEMM(p FP8Plan, b FP8Buffers, s cuda.Stream) (func() error, error) {
	fn, ok := f.gemm[p.MT]
	if !ok {
		return nil, fmt.Errorf("fp8moe: no kernel with MT %d", p.MT)
	}
	if b.SortedIDs == 0 || b.ExpertIDs == 0 {
		return nil, fmt.Errorf("fp8moe: the grouped GEMM needs sorted and expert ids")
	}
	if p.Slices > 1 && b.Workspace == 0 {
		return nil, fmt.Errorf("fp8moe: %d slices need a workspace", p.Slices)
	}
	args, err := cuda.MarshalParams(b.A, b.AS, b.W, b.WS, b.C, b.Workspace, b.SortedIDs, b.ExpertIDs,
		int32(p.M), int32(p.N), int32(p.K), int32(p.ADiv))
	if err != nil {
		return nil, err
	}
	grid := cuda.Dim3{X: p.N / fp8Block, Y: p.MBlocks, Z: p.Slices}
	block := cuda.Dim3{X: threads, Y: 1, Z: 1}
	smem := fp8Smem(p.MT)
	if p.Slices == 1 {
		return func() error { return fn.LaunchParams(grid, block, smem, s, args) }, nil
	}
	rows := p.MBlocks * 16 * p.MT
	rargs, err := cuda.MarshalParams(b.Workspace, b.C, b.SortedIDs, int32(rows), int32(p.M), int32(p.N), int32(p.Slices))
	if err != nil {
		return nil, err
	}
	rgrid := cuda.Dim3{X: int((int64(rows)*int64(p.N/8) + elementThreads - 1) / elementThreads), Y: 1, Z: 1}
	return func() error {
		if err := fn.LaunchParams(grid, block, smem, s, args); err != nil {
			return err
		}
		return f.reduce.LaunchParams(rgrid, cuda.Dim3{X: elementThreads, Y: 1, Z: 1}, 0, s, rargs)
	}, nil
}

// Quant returns the launch of the per-token-group quantisation of x [rows][K]
// bf16 into q [rows][K] e4m3 and qs [rows][K/128] fp32: every row, or with
// sorted (n entries of moe_align's sorted ids) the rows they name.
func (f *FP8MoE) Quant(x, q, qs cuda.DevicePtr, rows, K int, sorted cuda.DevicePtr, n int, s cuda.Stream) (func() error, error) {
	if rows <= 0 || K <= 0 || K%fp8Block != 0 {
		return nil, fmt.Errorf("fp8moe quant: %d rows of %d: want rows > 0 and K a positive multiple of %d", rows, K, fp8Block)
	}
	if sorted == 0 {
		n = rows
	} else if n <= 0 {
		return nil, fmt.Errorf("fp8moe quant: %d sorted ids: want > 0", n)
	}
	args, err := cuda.MarshalParams(x, q, qs, sorted, int32(n), int32(rows), int32(K))
	if err != nil {
		return nil, err
	}
	warps := int64(n) * int64(K/fp8Block)
	grid := cuda.Dim3{X: int((warps*32 + elementThreads - 1) / elementThreads), Y: 1, Z: 1}
	return func() error { return f.quant.LaunchParams(grid, cuda.Dim3{X: elementThreads, Y: 1, Z: 1}, 0, s, args) }, nil
}

// e4m3Values are the 127 non-negative finite e4m3 values, by code.
var e4m3Values = func() []float64 {
	v := make([]float64, 127)
	for c := range v {
		v[c] = float64(E4M3(c).Float32())
	}
	return v
}()

// hostE4M3 rounds v to the nearest e4m3 code, ties to the even code,
// saturating at 448 (the value vLLM's clamp to the format's range gives).
func hostE4M3(v float32) E4M3 {
	a := math.Abs(float64(v))
	var sign E4M3
	if math.Signbit(float64(v)) {
		sign = 0x80
	}
	i := sort.SearchFloat64s(e4m3Values, a) // first value >= a
	switch {
	case i >= len(e4m3Values):
		i = len(e4m3Values) - 1
	case i > 0 && e4m3Values[i] != a:
		lo, hi := a-e4m3Values[i-1], e4m3Values[i]-a
		if lo < hi || (lo == hi && (i-1)%2 == 0) {
			i--
		}
	}
	return sign | E4M3(i)
}

// hostQuantFP8 is the reference of fp8moe_quant: per row and group of 128,
// scale = max(max|x|, 1e-10) / 448 in fp32, q = e4m3(x / scale).
func hostQuantFP8(x []BF16, rows, k int) ([]E4M3, []float32) {
	q := make([]E4M3, rows*k)
	qs := make([]float32, rows*k/fp8Block)
	for r := 0; r < rows; r++ {
		for g := 0; g < k/fp8Block; g++ {
			amax := float32(0)
			for j := 0; j < fp8Block; j++ {
				amax = max(amax, float32(math.Abs(float64(x[r*k+g*fp8Block+j].Float32()))))
			}
			sc := max(amax, 1e-10) / 448
			qs[r*k/fp8Block+g] = sc
			for j := 0; j < fp8Block; j++ {
				i := r*k + g*fp8Block + j
				q[i] = hostE4M3(x[i].Float32() / sc)
			}
		}
	}
	return q, qs
}

// fp8Weights is one expert's block-fp8 matrix: Q [N][K] e4m3, S
// [N/128][K/128] fp32 (DeepSeek-V3's weight and weight_scale_inv).
type fp8Weights struct {
	N, K int
	Q    []E4M3
	S    []float32
}

// randomFP8Weights draws an N x K block-fp8 matrix: every finite code
// (subnormals too) with equal odds, block scales 2^-10..2^-6.
func randomFP8Weights(rng *rand.Rand, n, k int) *fp8Weights {
	w := &fp8Weights{N: n, K: k, Q: make([]E4M3, n*k), S: make([]float32, n*k/fp8Block/fp8Block)}
	for i := range w.Q {
		w.Q[i] = E4M3(rng.IntN(127)) | E4M3(rng.IntN(2)<<7)
	}
	for i := range w.S {
		w.S[i] = float32(math.Ldexp(1+rng.Float64(), -10+rng.IntN(4)))
	}
	return w
}

// at is W[n][k] in float64 (exact: code times its block's scale).
func (w *fp8Weights) at(n, k int) float64 {
	return float64(w.Q[n*w.K+k].Float32()) * float64(w.S[(n/fp8Block)*(w.K/fp8Block)+k/fp8Block])
}

// referenceFP8 is one output row in float64: sum over k of A's dequantised
// row (q times its group scale) times W[n][k].
func referenceFP8(q []E4M3, qs []float32, arow, k int, w *fp8Weights) []float64 {
	out := make([]float64, w.N)
	a := make([]float64, k)
	for j := range a {
		a[j] = float64(q[arow*k+j].Float32()) * float64(qs[arow*k/fp8Block+j/fp8Block])
	}
	for n := range out {
		s := 0.0
		for j := 0; j < k; j++ {
			s += a[j] * w.at(n, j)
		}
		out[n] = s
	}
	return out
}
