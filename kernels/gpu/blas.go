package gpu

// Dense GEMMs through cuBLASLt (internal/cuda), as the engines run their
// attention projections, shared experts, dense MLPs and lm_head:
// Y[M, N] = X[M, K] x W^T with W [N, K] row-major (nn.Linear), the
// heuristic's first algorithm with a workspace, timed inside a captured
// graph (Time) with the weights rotated over copies beyond L2 ("streamed").

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/moecast/moecast/internal/cuda"
)

// BLASWorkspace is the workspace cuBLASLt's algorithms may use: 32 MiB, what
// PyTorch gives cuBLASLt on Hopper (CUBLASLT_WORKSPACE_SIZE's default on sm_90).
const BLASWorkspace = 32 << 20

// E4M3 is an fp8 e4m3 (OCP E4M3FN) bit pattern: sign, 4 exponent bits (bias
// 7), 3 mantissa bits; no infinities, S.1111.111 is NaN.
type E4M3 uint8

// Float32 widens the fp8 value exactly.
func (b E4M3) Float32() float32 {
	sign := float32(1)
	if b&0x80 != 0 {
		sign = -1
	}
	e, m := int(b>>3&0xf), float64(b&7)
	if e == 15 && m == 7 {
		return float32(math.NaN())
	}
	if e == 0 {
		return sign * float32(math.Ldexp(m/8, -6))
	}
	return sign * float32(math.Ldexp(1+m/8, e-7))
}

// RandomE4M3 draws n fp8 values of magnitude 2^-3..2^1.9 (exponent field 4
// to 8, any mantissa) with random signs: exactly representable, so a host
// reference multiplies exactly what the GPU reads.
func RandomE4M3(rng *rand.Rand, n int) []E4M3 {
	out := make([]E4M3, n)
	for i := range out {
		out[i] = E4M3(rng.IntN(2)<<7 | (4+rng.IntN(5))<<3 | rng.IntN(8))
	}
	return out
}

// MatmulCase is one dense GEMM to time: Y[M, N] = X[M, K] x W[N, K]^T.
type MatmulCase struct {
	Name    string
	Kind    cuda.MatmulKind
	M, N, K int
}

// MatmulResult is one timed case. Seconds are per call; bytes count the
// weights (and their scales), X read and Y written once.
type MatmulResult struct {
	Case          MatmulCase
	Algo          cuda.Algo
	Copies        int // weight copies rotated over
	CallsPerGraph int
	GraphSeconds  float64
	GraphMin      float64
	GraphMax      float64
	LaunchSeconds float64
	Bytes         float64
	BytesPerSec   float64
	FLOPsPerSec   float64
}

// weightBytes is one copy of W with its scales, rounded up to 256 bytes.
func weightBytes(c MatmulCase) (w, scales int64) {
	w = int64(c.N) * int64(c.K) * int64(c.Kind.ElemBytes())
	_, ws := cuda.MatmulSpec{Kind: c.Kind, M: c.M, N: c.N, K: c.K}.ScaleLens()
	scales = int64(ws) * 4
	return (w + 255) / 256 * 256, (scales + 255) / 256 * 256
}

// deviceBuffers allocates and frees the buffers of one measurement.
type deviceBuffers []cuda.DevicePtr

func (b *deviceBuffers) alloc(n int64) (cuda.DevicePtr, error) {
	p, err := cuda.Alloc(max(n, 256))
	if err == nil {
		*b = append(*b, p)
	}
	return p, err
}

func (b *deviceBuffers) upload(host any, n int64) (cuda.DevicePtr, error) {
	p, err := b.alloc(n)
	if err != nil {
		return 0, err
	}
	switch h := host.(type) {
	case []BF16:
		err = cuda.CopyToDevice(p, h)
	case []E4M3:
		err = cuda.CopyToDevice(p, h)
	case []float32:
		err = cuda.CopyToDevice(p, h)
	default:
		err = fmt.Errorf("upload: unsupported %T", host)
	}
	return p, err
}

func (b *deviceBuffers) free() {
	for _, p := range *b {
		cuda.Free(p)
	}
	*b = nil
}

// randomOperand draws n random elements of kind's input type.
func randomOperand(rng *rand.Rand, kind cuda.MatmulKind, n int) any {
	if kind == cuda.MatmulBF16 {
		return RandomBF16(rng, n)
	}
	return RandomE4M3(rng, n)
}

// randomScales draws n fp32 scales 2^-6..2^-3 (powers of two, so a host
// reference applies them exactly).
func randomScales(rng *rand.Rand, n int) []float32 {
	out := make([]float32, max(n, 1))
	for i := range out {
		out[i] = float32(math.Ldexp(1, -6+rng.IntN(4)))
	}
	return out
}

// MeasureMatmul times one case on s with weights (and their scales) rotated
// over copies totalling at least rotateBytes, so that every call reads W
// from HBM; ws is a workspace of wsBytes (BLASWorkspace) for cuBLASLt.
func MeasureMatmul(h *cuda.BLASLt, c MatmulCase, rotateBytes int64, ws cuda.DevicePtr, wsBytes int64, s cuda.Stream) (MatmulResult, error) {
	spec := cuda.MatmulSpec{Kind: c.Kind, M: c.M, N: c.N, K: c.K, Workspace: ws, WorkspaceBytes: wsBytes}
	mm, err := h.NewMatmul(spec)
	if err != nil {
		return MatmulResult{}, err
	}
	defer mm.Destroy()
	var bufs deviceBuffers
	defer bufs.free()
	rng := rand.New(rand.NewPCG(uint64(c.M*131+c.N), uint64(c.K)))
	wb, sb := weightBytes(c)
	copies := int(min(maxCopies, max(2, (rotateBytes+wb+sb-1)/(wb+sb))))
	w, err := bufs.alloc(int64(copies) * wb)
	if err != nil {
		return MatmulResult{}, err
	}
	elem := int64(c.Kind.ElemBytes())
	if err := uploadTo(w, randomOperand(rng, c.Kind, c.N*c.K)); err != nil {
		return MatmulResult{}, err
	}
	for i := 1; i < copies; i++ {
		if err := cuda.CopyDevice(w+cuda.DevicePtr(int64(i)*wb), w, int64(c.N*c.K)*elem); err != nil {
			return MatmulResult{}, err
		}
	}
	x, err := bufs.upload(randomOperand(rng, c.Kind, c.M*c.K), int64(c.M*c.K)*elem)
	if err != nil {
		return MatmulResult{}, err
	}
	y, err := bufs.alloc(int64(c.M) * int64(c.N) * 2)
	if err != nil {
		return MatmulResult{}, err
	}
	var xs, wsc cuda.DevicePtr
	if c.Kind != cuda.MatmulBF16 {
		xl, wl := spec.ScaleLens()
		if xs, err = bufs.upload(randomScales(rng, xl), int64(xl)*4); err != nil {
			return MatmulResult{}, err
		}
		if wsc, err = bufs.alloc(int64(copies) * sb); err != nil {
			return MatmulResult{}, err
		}
		if err := uploadTo(wsc, randomScales(rng, wl)); err != nil {
			return MatmulResult{}, err
		}
		for i := 1; i < copies; i++ {
			if err := cuda.CopyDevice(wsc+cuda.DevicePtr(int64(i)*sb), wsc, int64(wl)*4); err != nil {
				return MatmulResult{}, err
			}
		}
	}
	if err := cuda.Synchronize(); err != nil {
		return MatmulResult{}, err
	}
	launches := make([]func() error, copies)
	for i := range launches {
		wi, si := w+cuda.DevicePtr(int64(i)*wb), wsc+cuda.DevicePtr(int64(i)*sb)
		if c.Kind == cuda.MatmulBF16 {
			launches[i] = func() error { return mm.Enqueue(x, wi, y, s) }
		} else {
			launches[i] = func() error { return mm.EnqueueScaled(x, wi, y, xs, si, s) }
		}
	}
	tm, err := Time(s, launches, 200)
	if err != nil {
		return MatmulResult{}, fmt.Errorf("%s %s: %w", c.Name, spec, err)
	}
	bytes := float64(int64(c.N)*int64(c.K)*elem + sbActual(spec) + int64(c.M)*int64(c.K)*elem + int64(c.M)*int64(c.N)*2)
	return MatmulResult{Case: c, Algo: mm.Algo, Copies: copies, CallsPerGraph: tm.Calls, GraphSeconds: tm.Graph,
		GraphMin: tm.GraphMin, GraphMax: tm.GraphMax, LaunchSeconds: tm.Eager, Bytes: bytes, BytesPerSec: bytes / tm.Graph,
		FLOPsPerSec: 2 * float64(c.M) * float64(c.N) * float64(c.K) / tm.Graph}, nil
}

// sbActual is the bytes of W's scales (unrounded).
func sbActual(s cuda.MatmulSpec) int64 {
	_, wl := s.ScaleLens()
	return int64(wl) * 4
}

func uploadTo(p cuda.DevicePtr, host any) error {
	switch h := host.(type) {
	case []BF16:
		return cuda.CopyToDevice(p, h)
	case []E4M3:
		return cuda.CopyToDevice(p, h)
	case []float32:
		return cuda.CopyToDevice(p, h)
	}
	return fmt.Errorf("upload: unsupported %T", host)
}

// MatmulCheck is a GPU matmul compared with a float64 host reference.
type MatmulCheck struct {
	Spec cuda.MatmulSpec
	Algo cuda.Algo
	// Worst is the largest |got - ref| / tol over the outputs (<= 1 passes);
	// at WorstIndex (m*N + n) with the values there.
	Worst         float64
	WorstIndex    int
	Got, Ref, Tol float64
	// Layout names the scale layout the check used (fp8-b128).
	Layout string
}

// Pass says whether every output is within its tolerance.
func (c MatmulCheck) Pass() bool { return c.Worst <= 1 }

func (c MatmulCheck) String() string {
	return fmt.Sprintf("%s (%s): worst |err|/tol %.3g at %d (got %g, ref %g, tol %g) %s", c.Spec, c.Algo, c.Worst,
		c.WorstIndex, c.Got, c.Ref, c.Tol, c.Layout)
}

// BlockScaleLayout is an order of an fp8-b128 matmul's scale tensors (which
// cuBLASLt's documentation fixes; CheckMatmul can test each): X's 1x128
// scales (m, kb) and W's 128x128 scales (nb, kb) as flat indices.
type BlockScaleLayout struct {
	Name string
	X    func(m, kb, M, KB int) int
	W    func(nb, kb, NB, KB int) int
}

// BlockScaleLayouts are the candidate orders: X's scales M-major (m + kb*Mpad,
// Mpad = M rounded up to 4) or K-major; W's K-block-major (kb + nb*KB) or
// N-block-major.
var BlockScaleLayouts = []BlockScaleLayout{
	{"x m-major, w k-major", func(m, kb, M, KB int) int { return m + kb*((M+3)/4*4) }, func(nb, kb, NB, KB int) int { return kb + nb*KB }},
	{"x m-major, w n-major", func(m, kb, M, KB int) int { return m + kb*((M+3)/4*4) }, func(nb, kb, NB, KB int) int { return nb + kb*NB }},
	{"x k-major, w k-major", func(m, kb, M, KB int) int { return kb + m*KB }, func(nb, kb, NB, KB int) int { return kb + nb*KB }},
	{"x k-major, w n-major", func(m, kb, M, KB int) int { return kb + m*KB }, func(nb, kb, NB, KB int) int { return nb + kb*NB }},
}

// CheckMatmul runs spec once on random inputs (bf16 uniform in [-1, 1);
// fp8 exactly representable values; power-of-two scales, the same for every
// block when uniform is set) and compares Y with a float64 host reference
// computed for each candidate scale layout (BlockScaleLayouts, for
// fp8-b128; one for the others): the result is the best-matching layout's.
// Tolerance per output: 2^-8 |ref| (bf16 rounding of Y) + 2^-10 x sum_k
// |x w| (accumulation order and Hopper's fp8 accumulator).
func CheckMatmul(h *cuda.BLASLt, spec cuda.MatmulSpec, seed uint64, uniform bool, s cuda.Stream) (MatmulCheck, error) {
	var bufs deviceBuffers
	defer bufs.free()
	if spec.WorkspaceBytes == 0 {
		ws, err := bufs.alloc(BLASWorkspace)
		if err != nil {
			return MatmulCheck{}, err
		}
		spec.Workspace, spec.WorkspaceBytes = ws, BLASWorkspace
	}
	mm, err := h.NewMatmul(spec)
	if err != nil {
		return MatmulCheck{}, err
	}
	defer mm.Destroy()
	sp := mm.Spec // defaults filled
	M, N, K := sp.M, sp.N, sp.K
	batch := max(sp.Batch, 1)
	rng := rand.New(rand.NewPCG(seed, 11))
	wRows, wCols := N, K
	if sp.WeightKN {
		wRows, wCols = K, N
	}
	elem := int64(sp.Kind.ElemBytes())
	xLen := int64(batch-1)*sp.StrideX + int64(M-1)*int64(sp.LDX) + int64(K)
	wLen := int64(batch-1)*sp.StrideW + int64(wRows-1)*int64(sp.LDW) + int64(wCols)
	yLen := int64(batch-1)*sp.StrideY + int64(M-1)*int64(sp.LDY) + int64(N)
	xh := randomOperand(rng, sp.Kind, int(xLen))
	wh := randomOperand(rng, sp.Kind, int(wLen))
	val := func(h any, i int64) float64 {
		if b, ok := h.([]BF16); ok {
			return float64(b[i].Float32())
		}
		return float64(h.([]E4M3)[i].Float32())
	}
	x, err := bufs.upload(xh, xLen*elem)
	if err != nil {
		return MatmulCheck{}, err
	}
	w, err := bufs.upload(wh, wLen*elem)
	if err != nil {
		return MatmulCheck{}, err
	}
	y, err := bufs.alloc(yLen * 2)
	if err != nil {
		return MatmulCheck{}, err
	}
	if err := cuda.Memset8(y, 0xff, yLen*2); err != nil { // NaN
		return MatmulCheck{}, err
	}
	xl, wl := sp.ScaleLens()
	var xsh, wsh []float32
	if sp.Kind != cuda.MatmulBF16 {
		xsh, wsh = randomScales(rng, xl), randomScales(rng, wl)
		if uniform {
			for i := range xsh {
				xsh[i] = xsh[0]
			}
			for i := range wsh {
				wsh[i] = wsh[0]
			}
		}
	}
	if err := cuda.Synchronize(); err != nil {
		return MatmulCheck{}, err
	}
	if sp.Kind == cuda.MatmulBF16 {
		err = mm.Enqueue(x, w, y, s)
	} else {
		var xs, wsc cuda.DevicePtr
		if xs, err = bufs.upload(xsh, int64(xl)*4); err != nil {
			return MatmulCheck{}, err
		}
		if wsc, err = bufs.upload(wsh, int64(wl)*4); err != nil {
			return MatmulCheck{}, err
		}
		if err = cuda.Synchronize(); err != nil {
			return MatmulCheck{}, err
		}
		err = mm.EnqueueScaled(x, w, y, xs, wsc, s)
	}
	if err != nil {
		return MatmulCheck{}, err
	}
	if err := s.Synchronize(); err != nil {
		return MatmulCheck{}, err
	}
	got := make([]BF16, yLen)
	if err := cuda.CopyFromDevice(got, y); err != nil {
		return MatmulCheck{}, err
	}
	layouts := []BlockScaleLayout{{Name: ""}}
	if sp.Kind == cuda.MatmulFP8Block128 {
		layouts = BlockScaleLayouts
	}
	var best MatmulCheck
	for li, lay := range layouts {
		c := MatmulCheck{Spec: sp, Algo: mm.Algo, Layout: lay.Name}
		KB, NB := (K+127)/128, (N+127)/128
		for b := 0; b < batch; b++ {
			for m := 0; m < M; m++ {
				for n := 0; n < N; n++ {
					var ref, abs float64
					for kb := 0; kb < KB; kb++ {
						var part, pabs float64
						for k := kb * 128; k < min(K, kb*128+128); k++ {
							xi := int64(b)*sp.StrideX + int64(m)*int64(sp.LDX) + int64(k)
							wi := int64(b)*sp.StrideW + int64(n)*int64(sp.LDW) + int64(k)
							if sp.WeightKN {
								wi = int64(b)*sp.StrideW + int64(k)*int64(sp.LDW) + int64(n)
							}
							p := val(xh, xi) * val(wh, wi)
							part += p
							pabs += math.Abs(p)
						}
						sc := 1.0
						switch sp.Kind {
						case cuda.MatmulFP8:
							sc = float64(xsh[0]) * float64(wsh[0])
						case cuda.MatmulFP8Block128:
							sc = float64(xsh[lay.X(m, kb, M, KB)]) * float64(wsh[lay.W(n/128, kb, NB, KB)])
						}
						ref += sc * part
						abs += sc * pabs
					}
					yi := int64(b)*sp.StrideY + int64(m)*int64(sp.LDY) + int64(n)
					g := float64(got[yi].Float32())
					tol := math.Ldexp(math.Abs(ref), -8) + math.Ldexp(abs, -10) + 1e-30
					e := math.Abs(g-ref) / tol
					if math.IsNaN(g) {
						e = math.Inf(1)
					}
					if e > c.Worst || (b == 0 && m == 0 && n == 0) {
						c.Worst, c.WorstIndex, c.Got, c.Ref, c.Tol = e, m*N+n, g, ref, tol
					}
				}
			}
		}
		if li == 0 || c.Worst < best.Worst {
			best = c
		}
	}
	return best, nil
}
