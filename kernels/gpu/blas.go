package gpu

// Dense GEMMs through cuBLASLt (internal/cuda), as the engines run their
// attention projections, shared experts, dense MLPs and lm_head:
// Y[M, N] = X[M, K] x W^T with W [N, K] row-major (nn.Linear), the
// heuristic's first algorithm with a workspace, timed inside a captured
// graph (Time) with the weights rotated over copies beyond L2 ("streamed").

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/unit"
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

// randomE4M3 draws n fp8 values of magnitude 2^-3..2^1.9 (exponent field 4
// to 8, any mantissa) with random signs: exactly representable, so a host
// reference multiplies exactly what the GPU reads.
func randomE4M3(rng *rand.Rand, n int) []E4M3 {
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
	Case MatmulCase
	// RunM is the m the matmul ran at: Case.M, or for fp8-b128 the next
	// multiple of 4, 8 or 16 when cuBLASLt has no block-scaled algorithm
	// at Case.M (its heuristic refuses m = 1 on sm_90 with cuBLASLt 13.1).
	RunM          int
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

// randomOperand draws n random elements of kind's input type.
func randomOperand(rng *rand.Rand, kind cuda.MatmulKind, n int) any {
	if kind == cuda.MatmulBF16 {
		return randomBF16(rng, n)
	}
	return randomE4M3(rng, n)
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

// measureMatmul times one case on s with weights (and their scales) rotated
// over copies totalling at least rotateBytes, so that every call reads W
// from HBM; ws is a workspace of wsBytes (BLASWorkspace) for cuBLASLt.
func measureMatmul(h *cuda.BLASLt, c MatmulCase, rotateBytes int64, ws cuda.DevicePtr, wsBytes int64, s cuda.Stream) (MatmulResult, error) {
	r, err := MeasureMatmuls(h, c, []int{c.M}, rotateBytes, ws, wsBytes, s)
	if err != nil {
		return MatmulResult{}, err
	}
	return r[0], nil
}

// MeasureMatmuls is measureMatmul at each of ms (c.M is ignored): the
// weight copies are made once and X and Y sized for the largest m.
func MeasureMatmuls(h *cuda.BLASLt, c MatmulCase, ms []int, rotateBytes int64, ws cuda.DevicePtr, wsBytes int64, s cuda.Stream) ([]MatmulResult, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	var bufs deviceBuffers
	defer bufs.free()
	maxM := slices.Max(ms)
	if c.Kind == cuda.MatmulFP8Block128 {
		maxM = (maxM + 15) / 16 * 16 // room for a padded m (timeMatmul)
	}
	c.M = maxM
	rng := rand.New(rand.NewPCG(uint64(c.N), uint64(c.K)))
	wb, sb := weightBytes(c)
	copies := int(min(maxCopies, max(2, (rotateBytes+wb+sb-1)/(wb+sb))))
	w, err := bufs.alloc(int64(copies) * wb)
	if err != nil {
		return nil, err
	}
	elem := int64(c.Kind.ElemBytes())
	if err := fillRandom(rng, w, c.Kind, int64(c.N)*int64(c.K)); err != nil {
		return nil, err
	}
	for i := 1; i < copies; i++ {
		if err := cuda.CopyDevice(w+cuda.DevicePtr(int64(i)*wb), w, int64(c.N*c.K)*elem); err != nil {
			return nil, err
		}
	}
	x, err := bufs.alloc(int64(maxM) * int64(c.K) * elem)
	if err != nil {
		return nil, err
	}
	if err := fillRandom(rng, x, c.Kind, int64(maxM)*int64(c.K)); err != nil {
		return nil, err
	}
	y, err := bufs.alloc(int64(maxM) * int64(c.N) * 2)
	if err != nil {
		return nil, err
	}
	var xs, wsc cuda.DevicePtr
	if c.Kind != cuda.MatmulBF16 {
		xl, wl := cuda.MatmulSpec{Kind: c.Kind, M: maxM, N: c.N, K: c.K}.ScaleLens()
		if xs, err = bufs.upload(randomScales(rng, xl), int64(xl)*4); err != nil {
			return nil, err
		}
		if wsc, err = bufs.alloc(int64(copies) * sb); err != nil {
			return nil, err
		}
		if err := uploadTo(wsc, randomScales(rng, wl)); err != nil {
			return nil, err
		}
		for i := 1; i < copies; i++ {
			if err := cuda.CopyDevice(wsc+cuda.DevicePtr(int64(i)*sb), wsc, int64(wl)*4); err != nil {
				return nil, err
			}
		}
	}
	if err := cuda.Synchronize(); err != nil {
		return nil, err
	}
	var out []MatmulResult
	for _, m := range ms {
		c.M = m
		r, err := timeMatmul(h, c, copies, w, wb, wsc, sb, x, xs, y, ws, wsBytes, s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// fillChunk is the random elements drawn on the host for a fill; the rest
// of a buffer repeats them (values do not change a GEMM's speed much,
// zeros aside, and drawing a 1.2e9-element lm_head on the host takes
// seconds).
const fillChunk = 1 << 18

// fillRandom fills n elements at p with random values of kind's input
// type: fillChunk drawn on the host, then repeated by device copies.
func fillRandom(rng *rand.Rand, p cuda.DevicePtr, kind cuda.MatmulKind, n int64) error {
	elem := int64(kind.ElemBytes())
	chunk := min(n, fillChunk)
	if err := uploadTo(p, randomOperand(rng, kind, int(chunk))); err != nil {
		return err
	}
	for done := chunk; done < n; {
		c := min(done, n-done)
		if err := cuda.CopyDevice(p+cuda.DevicePtr(done*elem), p, c*elem); err != nil {
			return err
		}
		done += c
	}
	return nil
}

// timeMatmul plans c and times it over the copies of W at w (stride wb)
// and their scales at wsc (stride sb).
func timeMatmul(h *cuda.BLASLt, c MatmulCase, copies int, w cuda.DevicePtr, wb int64, wsc cuda.DevicePtr, sb int64,
	x, xs, y, ws cuda.DevicePtr, wsBytes int64, s cuda.Stream) (MatmulResult, error) {
	runM := c.M
	spec := cuda.MatmulSpec{Kind: c.Kind, M: runM, N: c.N, K: c.K, Workspace: ws, WorkspaceBytes: wsBytes}
	mm, err := h.NewMatmul(spec)
	for _, p := range []int{4, 8, 16} {
		if c.Kind != cuda.MatmulFP8Block128 || !errors.Is(err, cuda.ErrNoAlgorithm) || runM%p == 0 {
			continue
		}
		runM = (c.M + p - 1) / p * p
		spec.M = runM
		mm, err = h.NewMatmul(spec)
	}
	if err != nil {
		return MatmulResult{}, err
	}
	defer mm.Destroy()
	launches := make([]func() error, copies)
	for i := range launches {
		wi, si := w+cuda.DevicePtr(int64(i)*wb), wsc+cuda.DevicePtr(int64(i)*sb)
		if c.Kind == cuda.MatmulBF16 {
			launches[i] = func() error { return mm.Enqueue(x, wi, y, s) }
		} else {
			launches[i] = func() error { return mm.EnqueueScaled(x, wi, y, xs, si, s) }
		}
	}
	tm, err := timeShort(s, launches, distinctCopies(wb+sb))
	if err != nil {
		return MatmulResult{}, fmt.Errorf("%s %s: %w", c.Name, spec, err)
	}
	elem := int64(c.Kind.ElemBytes())
	bytes := float64(int64(c.N)*int64(c.K)*elem + sbActual(spec) + int64(runM)*int64(c.K)*elem + int64(runM)*int64(c.N)*2)
	return MatmulResult{Case: c, RunM: runM, Algo: mm.Algo, Copies: copies, CallsPerGraph: tm.Calls, GraphSeconds: float64(tm.Median),
		GraphMin: float64(tm.Min), GraphMax: float64(tm.Max), LaunchSeconds: float64(tm.Eager), Bytes: bytes, BytesPerSec: bytes / float64(tm.Median),
		FLOPsPerSec: 2 * float64(runM) * float64(c.N) * float64(c.K) / float64(tm.Median)}, nil
}

// Graph sizes of timeShort: replays of about BLASReplaySeconds, at most
// BLASMaxCalls calls unless more distinct weight copies are needed, with
// at least BLASDistinctBytes of other weights read between two reads of
// one copy (1.5x the H200's 60 MiB L2), so that each call reads HBM.
const (
	BLASReplaySeconds = 0.5e-3
	BLASMaxCalls      = 100
	BLASDistinctBytes = 96 << 20
)

// distinctCopies is how many copies of wb bytes a graph cycles over so
// that BLASDistinctBytes pass between two reads of one copy (at least 2).
func distinctCopies(wb int64) int {
	return int(max(2, (BLASDistinctBytes+wb-1)/wb+1))
}

// graphPlan sizes timeShort's graph for n launches of eager seconds each,
// of which at least minDistinct distinct ones must be cycled: calls =
// max(minDistinct, min(BLASMaxCalls, BLASReplaySeconds/eager)) over the
// first use launches (use = calls when there are that many, else all n and
// calls rounded up to whole passes).
func graphPlan(n, minDistinct int, eager float64) (use, calls int) {
	want := BLASMaxCalls
	if eager > 0 {
		want = min(BLASMaxCalls, max(1, int(BLASReplaySeconds/eager)))
	}
	calls = max(min(n, minDistinct), want)
	if calls <= n {
		return calls, calls
	}
	return n, n * ((calls + n - 1) / n)
}

// timeShort is Time with shorter replays, for the campaign's many GEMM
// points (Time aims at 5 ms replays of up to 200 calls over every copy):
// the first min(len, minDistinct) launches once to warm up and once timed
// directly (Eager: seconds per launch of that pass), then a captured graph
// sized by graphPlan, replayed 3 times to warm up and 15 times timed: the
// median, least and most per call.
func timeShort(s cuda.Stream, launches []func() error, minDistinct int) (tm unit.Timing, err error) {
	pre := launches[:min(len(launches), max(1, minDistinct))]
	for _, l := range pre {
		if err = l(); err != nil {
			return
		}
	}
	e0, err := cuda.NewEvent(cuda.EventDefault)
	if err != nil {
		return
	}
	defer e0.Destroy()
	e1, err := cuda.NewEvent(cuda.EventDefault)
	if err != nil {
		return
	}
	defer e1.Destroy()
	var first float64
	if first, err = span(s, e0, e1, func() error {
		for _, l := range pre {
			if err := l(); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return
	}
	tm.Eager = unit.Seconds(first / float64(len(pre)))
	var n int
	n, tm.Calls = graphPlan(len(launches), minDistinct, float64(tm.Eager))
	var med, lo, hi float64
	med, lo, hi, err = replay(s, e0, e1, tm.Calls, func(i int) error { return launches[i%n]() })
	tm.Median, tm.Min, tm.Max = unit.Seconds(med), unit.Seconds(lo), unit.Seconds(hi)
	return tm, err
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

// matmulCheck is a GPU matmul compared with a float64 host reference.
type matmulCheck struct {
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
func (c matmulCheck) Pass() bool { return c.Worst <= 1 }

func (c matmulCheck) String() string {
	return fmt.Sprintf("%s (%s): worst |err|/tol %.3g at %d (got %g, ref %g, tol %g) %s", c.Spec, c.Algo, c.Worst,
		c.WorstIndex, c.Got, c.Ref, c.Tol, c.Layout)
}

// blockScaleLayout is an order of an fp8-b128 matmul's scale tensors (which
// cuBLASLt's documentation fixes; CheckMatmul tries each): X's 1x128
// scales (m, kb) and W's 128x128 scales (nb, kb) as flat indices.
type blockScaleLayout struct {
	Name string
	X    func(m, kb, M, KB int) int
	W    func(nb, kb, NB, KB int) int
}

func pad4(n int) int { return (n + 3) / 4 * 4 }

// blockScaleLayouts are the candidate orders: X's scales M-major (m +
// kb*ld) or K-major (kb + m*ld), W's K-block-major (kb + nb*ld) or
// N-block-major (nb + kb*ld), each with its leading dimension as is or
// rounded up to 4 (16 bytes).
var blockScaleLayouts = func() []blockScaleLayout {
	ld := func(pad bool, n int) int {
		if pad {
			return pad4(n)
		}
		return n
	}
	var out []blockScaleLayout
	for _, xm := range []bool{true, false} {
		for _, xp := range []bool{true, false} {
			for _, wk := range []bool{true, false} {
				for _, wp := range []bool{true, false} {
					name := fmt.Sprintf("x %s (ld padded %v), w %s (ld padded %v)", map[bool]string{true: "m-major", false: "k-major"}[xm], xp,
						map[bool]string{true: "k-major", false: "n-major"}[wk], wp)
					xm, xp, wk, wp := xm, xp, wk, wp
					out = append(out, blockScaleLayout{Name: name,
						X: func(m, kb, M, KB int) int {
							if xm {
								return m + kb*ld(xp, M)
							}
							return kb + m*ld(xp, KB)
						},
						W: func(nb, kb, NB, KB int) int {
							if wk {
								return kb + nb*ld(wp, KB)
							}
							return nb + kb*ld(wp, NB)
						}})
				}
			}
		}
	}
	return out
}()

// CheckMatmul runs spec once on random inputs (bf16 uniform in [-1, 1);
// fp8 exactly representable values; power-of-two scales, the same for every
// block when uniform is set) and compares Y with a float64 host reference
// computed for each candidate scale layout (blockScaleLayouts, for
// fp8-b128; one for the others): the result is the best-matching layout's.
// Tolerance per output: 2^-8 |ref| (bf16 rounding of Y) + 2^-10 x sum_k
// |x w| (accumulation order and Hopper's fp8 accumulator).
func CheckMatmul(h *cuda.BLASLt, spec cuda.MatmulSpec, seed uint64, uniform bool, s cuda.Stream) (matmulCheck, error) {
	var bufs deviceBuffers
	defer bufs.free()
	if spec.WorkspaceBytes == 0 {
		ws, err := bufs.alloc(BLASWorkspace)
		if err != nil {
			return matmulCheck{}, err
		}
		spec.Workspace, spec.WorkspaceBytes = ws, BLASWorkspace
	}
	mm, err := h.NewMatmul(spec)
	if err != nil {
		return matmulCheck{}, err
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
		return matmulCheck{}, err
	}
	w, err := bufs.upload(wh, wLen*elem)
	if err != nil {
		return matmulCheck{}, err
	}
	y, err := bufs.alloc(yLen * 2)
	if err != nil {
		return matmulCheck{}, err
	}
	if err := cuda.Memset8(y, 0xff, yLen*2); err != nil { // NaN
		return matmulCheck{}, err
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
		return matmulCheck{}, err
	}
	if sp.Kind == cuda.MatmulBF16 {
		err = mm.Enqueue(x, w, y, s)
	} else {
		var xs, wsc cuda.DevicePtr
		if xs, err = bufs.upload(xsh, int64(xl)*4); err != nil {
			return matmulCheck{}, err
		}
		if wsc, err = bufs.upload(wsh, int64(wl)*4); err != nil {
			return matmulCheck{}, err
		}
		if err = cuda.Synchronize(); err != nil {
			return matmulCheck{}, err
		}
		err = mm.EnqueueScaled(x, w, y, xs, wsc, s)
	}
	if err != nil {
		return matmulCheck{}, err
	}
	if err := s.Synchronize(); err != nil {
		return matmulCheck{}, err
	}
	got := make([]BF16, yLen)
	if err := cuda.CopyFromDevice(got, y); err != nil {
		return matmulCheck{}, err
	}
	layouts := []blockScaleLayout{{Name: ""}}
	if sp.Kind == cuda.MatmulFP8Block128 {
		layouts = blockScaleLayouts
	}
	var best matmulCheck
	for li, lay := range layouts {
		c := matmulCheck{Spec: sp, Algo: mm.Algo, Layout: lay.Name}
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
