package cuda

// cuBLASLt, loaded at run time like the driver: the dense GEMMs the engines
// run for attention projections, shared experts, dense MLPs and lm_head
// (torch.mm / F.linear reach cuBLASLt), so that the calibration campaign
// times what the engines call rather than a kernel of ours.
//
// Prototypes, enum values and struct sizes are from cublasLt.h,
// cublas_api.h and library_types.h of CUDA 11.8 (Debian 12's
// nvidia-cuda-toolkit, /usr/include), unless a comment says otherwise;
// cuBLASLt keeps them stable across 12.x and 13.x (the values below are the
// ones CUDA 12.9/13 bindings list: NVIDIA nvmath-python's
// nvmath.bindings.cublasLt enums MatmulDescAttribute, MatmulMatrixScale).
// The block-scaling modes (A/B_SCALE_MODE = 31/32, VEC128_32F = 4,
// BLK128x128_32F = 5) are CUDA 12.9+ only and not in the 11.8 header: their
// values are from nvmath-python's MatmulDescAttribute / MatmulMatrixScale
// pages (docs.nvidia.com/cuda/nvmath-python, "See cublasLtMatmulMatrixScale_t").

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// ErrNoCUBLASLt is wrapped by every error that comes from libcublasLt not
// being found or not loading.
var ErrNoCUBLASLt = errors.New("no cuBLASLt library (libcublasLt.so.13 or .12) could be loaded")

// NoCUBLASLt reports whether err says that cuBLASLt cannot be used here: no
// GPU (NoGPU), or no cuBLASLt library.
func NoCUBLASLt(err error) bool { return NoGPU(err) || errors.Is(err, ErrNoCUBLASLt) }

// cublasLtGlobs are the NVIDIA Python wheels (nvidia-cublas-cu12 keeps
// nvidia/cublas/lib/libcublasLt.so.12; the cu13 wheels put every library in
// nvidia/cu13/lib) and the toolkit folders, searched after the loader path.
var cublasLtGlobs = func() []string {
	var out []string
	for _, site := range []string{
		"$VIRTUAL_ENV/lib/python3*/site-packages",
		"/usr/local/lib/python3*/dist-packages",
		"/usr/local/lib/python3*/site-packages",
		"/usr/lib/python3/dist-packages",
		"$HOME/.local/lib/python3*/site-packages",
		"/opt/*/.venv/lib/python3*/site-packages",
		"/opt/*/lib/python3*/site-packages",
	} {
		out = append(out, site+"/nvidia/cu1[0-9]/lib/libcublasLt.so.1[0-9]", site+"/nvidia/cublas/lib/libcublasLt.so.1[0-9]")
	}
	return append(out,
		"/opt/conda/lib/libcublasLt.so.1[0-9]",
		"/usr/local/cuda/lib64/libcublasLt.so.1[0-9]",
		"/usr/local/cuda-1[0-9]*/lib64/libcublasLt.so.1[0-9]",
		"/usr/lib/x86_64-linux-gnu/libcublasLt.so.1[0-9]",
		"/usr/lib/aarch64-linux-gnu/libcublasLt.so.1[0-9]")
}()

// CUBLASLtLibraries are cuBLASLt's sonames, newest first, each searched in
// turn: MOECAST_CUBLASLT (alone, when set), then libcublasLt.so.13 and
// libcublasLt.so.12 on the loader path, then the wheels and toolkit folders
// (the first library's globs).
var CUBLASLtLibraries = []Library{
	{Name: "libcublasLt.so.13", Env: "MOECAST_CUBLASLT", Globs: cublasLtGlobs, Missing: ErrNoCUBLASLt},
	{Name: "libcublasLt.so.12", Env: "MOECAST_CUBLASLT", Missing: ErrNoCUBLASLt},
}

// openAny loads the first candidate of libs that the loader accepts: the
// override alone when set, else each library's candidates in order.
func openAny(libs []Library, f Finder, dl func(string) (uintptr, error)) (uintptr, string, error) {
	var tried []string
	seen := map[string]bool{}
	var last error
	for i, lib := range libs {
		paths, override := f.Candidates(lib)
		if override && i > 0 {
			break
		}
		for _, p := range paths {
			if seen[p] {
				continue
			}
			seen[p] = true
			tried = append(tried, p)
			h, err := dl(p)
			if err == nil {
				return h, p, nil
			}
			last = err
		}
		if override {
			return 0, "", &LoadError{Lib: lib, Override: true, Tried: tried, Last: oneLine(last)}
		}
	}
	return 0, "", &LoadError{Lib: libs[0], Tried: tried, Last: oneLine(last)}
}

// BLASStatus is a cublasStatus_t.
type BLASStatus int32

// cublasStatus_t values (cublas_api.h).
var blasStatusNames = map[BLASStatus]string{
	0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
	7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED",
	16: "CUBLAS_STATUS_LICENSE_ERROR",
}

// BLASError is a failed cuBLASLt call.
type BLASError struct {
	Call   string
	Status BLASStatus
	Name   string // CUBLAS_STATUS_NOT_SUPPORTED
}

func (e *BLASError) Error() string {
	return fmt.Sprintf("cublaslt: %s: %s (%d)", e.Call, e.Name, int32(e.Status))
}

// blasNotSupported is CUBLAS_STATUS_NOT_SUPPORTED.
const blasNotSupported = 15

// ErrNoAlgorithm is matched (errors.Is) by the error of a matmul that
// cuBLASLt has no algorithm for on this device (its heuristic returned none,
// or CUBLAS_STATUS_NOT_SUPPORTED): a type or scaling mode this library or GPU
// lacks, as fp8 block scaling before CUDA 12.9 or off sm_90.
var ErrNoAlgorithm = errors.New("cuBLASLt has no algorithm for this matmul here")

// Is makes CUBLAS_STATUS_NOT_SUPPORTED match ErrNoAlgorithm.
func (e *BLASError) Is(target error) bool {
	return target == ErrNoAlgorithm && e.Status == blasNotSupported
}

func blasCheck(call string, r BLASStatus) error {
	if r == 0 {
		return nil
	}
	name, ok := blasStatusNames[r]
	if !ok {
		name = "CUBLAS_STATUS_UNKNOWN"
	}
	return &BLASError{Call: call, Status: r, Name: name}
}

// Enum values (cublasLt.h, cublas_api.h, library_types.h of CUDA 11.8 unless
// noted; unchanged in 12.x and 13.x).
const (
	cudaR32F     = 0  // CUDA_R_32F
	cudaR16BF    = 14 // CUDA_R_16BF
	cudaR8FE4M3  = 28 // CUDA_R_8F_E4M3
	computeF32   = 68 // CUBLAS_COMPUTE_32F
	blasOpN      = 0  // CUBLAS_OP_N
	blasOpT      = 1  // CUBLAS_OP_T
	descTransA   = 3  // CUBLASLT_MATMUL_DESC_TRANSA, int32
	descTransB   = 4  // CUBLASLT_MATMUL_DESC_TRANSB, int32
	descAScale   = 17 // CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, const void* (device)
	descBScale   = 18 // CUBLASLT_MATMUL_DESC_B_SCALE_POINTER
	descAScaleMd = 31 // CUBLASLT_MATMUL_DESC_A_SCALE_MODE, int32 (CUDA 12.9+; nvmath-python)
	descBScaleMd = 32 // CUBLASLT_MATMUL_DESC_B_SCALE_MODE, int32 (CUDA 12.9+; nvmath-python)
	scaleVec128  = 4  // CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F (CUDA 12.9+; nvmath-python)
	scaleBlk128  = 5  // CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F (CUDA 12.9+; nvmath-python)
	layoutBatch  = 5  // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32
	layoutStride = 6  // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64
	prefMaxWS    = 1  // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64
	// cublasLtMatmulAlgoConfigAttributes_t, each uint32 (int32 for the id).
	algoID      = 0 // CUBLASLT_ALGO_CONFIG_ID
	algoTile    = 1 // CUBLASLT_ALGO_CONFIG_TILE_ID
	algoSplitK  = 2 // CUBLASLT_ALGO_CONFIG_SPLITK_NUM
	algoSwizzle = 4 // CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING
	algoStages  = 6 // CUBLASLT_ALGO_CONFIG_STAGES_ID
)

// blasAlgo is cublasLtMatmulAlgo_t: uint64_t data[8].
type blasAlgo [8]uint64

// blasHeuristic is cublasLtMatmulHeuristicResult_t: the algorithm, size_t
// workspaceSize, cublasStatus_t state, float wavesCount, int reserved[4]
// (96 bytes).
type blasHeuristic struct {
	Algo      blasAlgo
	Workspace uint64
	State     int32
	Waves     float32
	_         [4]int32
}

type ltLib struct {
	path string

	cublasLtGetVersion                   func() uintptr
	cublasLtGetCudartVersion             func() uintptr
	cublasLtCreate                       func(h *uintptr) BLASStatus
	cublasLtDestroy                      func(h uintptr) BLASStatus
	cublasLtMatmulDescCreate             func(d *uintptr, compute, scale int32) BLASStatus
	cublasLtMatmulDescDestroy            func(d uintptr) BLASStatus
	cublasLtMatmulDescSetAttribute       func(d uintptr, attr int32, buf unsafe.Pointer, size uintptr) BLASStatus
	cublasLtMatrixLayoutCreate           func(l *uintptr, dtype int32, rows, cols uint64, ld int64) BLASStatus
	cublasLtMatrixLayoutDestroy          func(l uintptr) BLASStatus
	cublasLtMatrixLayoutSetAttribute     func(l uintptr, attr int32, buf unsafe.Pointer, size uintptr) BLASStatus
	cublasLtMatmulPreferenceCreate       func(p *uintptr) BLASStatus
	cublasLtMatmulPreferenceDestroy      func(p uintptr) BLASStatus
	cublasLtMatmulPreferenceSetAttribute func(p uintptr, attr int32, buf unsafe.Pointer, size uintptr) BLASStatus
	cublasLtMatmulAlgoGetHeuristic       func(h, desc, a, b, c, d, pref uintptr, want int32, res *blasHeuristic, got *int32) BLASStatus
	cublasLtMatmulAlgoConfigGetAttribute func(algo *blasAlgo, attr int32, buf unsafe.Pointer, size uintptr, written *uintptr) BLASStatus
	cublasLtMatmul                       func(h, desc uintptr, alpha unsafe.Pointer, a DevicePtr, adesc uintptr, b DevicePtr, bdesc uintptr,
		beta unsafe.Pointer, c DevicePtr, cdesc uintptr, d DevicePtr, ddesc uintptr, algo *blasAlgo, ws DevicePtr, wsSize uintptr, s Stream) BLASStatus
}

func (l *ltLib) symbols() []symbol {
	s := func(f any, names ...string) symbol { return symbol{fptr: f, names: names} }
	return []symbol{
		s(&l.cublasLtGetVersion, "cublasLtGetVersion"),
		s(&l.cublasLtGetCudartVersion, "cublasLtGetCudartVersion"),
		s(&l.cublasLtCreate, "cublasLtCreate"),
		s(&l.cublasLtDestroy, "cublasLtDestroy"),
		s(&l.cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate"),
		s(&l.cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy"),
		s(&l.cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute"),
		s(&l.cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate"),
		s(&l.cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy"),
		s(&l.cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute"),
		s(&l.cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate"),
		s(&l.cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy"),
		s(&l.cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute"),
		s(&l.cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic"),
		s(&l.cublasLtMatmulAlgoConfigGetAttribute, "cublasLtMatmulAlgoConfigGetAttribute"),
		s(&l.cublasLtMatmul, "cublasLtMatmul"),
	}
}

var (
	ltOnce   sync.Once
	ltLoaded *ltLib
	ltErr    error
)

// InitCUBLASLt loads cuBLASLt (CUBLASLtLibraries' search) after the driver
// (Init). Its error satisfies NoCUBLASLt: it wraps ErrNoDriver or
// ErrNoDevice without a GPU, ErrNoCUBLASLt without the library.
func InitCUBLASLt() error {
	if err := Init(); err != nil {
		return err
	}
	ltOnce.Do(func() {
		h, path, err := openAny(CUBLASLtLibraries, DefaultFinder(), dlopen)
		if err != nil {
			ltErr = err
			return
		}
		l := &ltLib{path: path}
		if err := bind(CUBLASLtLibraries[0], path, h, l.symbols()); err != nil {
			ltErr = err
			return
		}
		ltLoaded = l
	})
	return ltErr
}

func ltReady() (*ltLib, error) {
	if err := InitCUBLASLt(); err != nil {
		return nil, err
	}
	return ltLoaded, nil
}

// CUBLASLtPath is the path cuBLASLt was loaded from ("" before
// InitCUBLASLt).
func CUBLASLtPath() string {
	if ltLoaded == nil {
		return ""
	}
	return ltLoaded.path
}

// CUBLASLtVersion is cublasLtGetVersion (major*10000 + minor*100 + patch,
// e.g. 130100 for 13.1.0) and the CUDA runtime version it was built
// with (cublasLtGetCudartVersion, 1000*major + 10*minor).
func CUBLASLtVersion() (version, cudart int, err error) {
	l, err := ltReady()
	if err != nil {
		return 0, 0, err
	}
	return int(l.cublasLtGetVersion()), int(l.cublasLtGetCudartVersion()), nil
}

// FormatCUBLASLtVersion prints a cublasLtGetVersion number as 13.1.0.
func FormatCUBLASLtVersion(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
}

// BLASLt is a cuBLASLt handle (cublasLtHandle_t). It is bound to no stream
// or context of its own: matmuls run on the stream given at Enqueue, in the
// context current on the calling thread.
type BLASLt struct{ h uintptr }

// NewBLASLt creates a cuBLASLt handle (cublasLtCreate).
func NewBLASLt() (*BLASLt, error) {
	l, err := ltReady()
	if err != nil {
		return nil, err
	}
	var h uintptr
	if err := blasCheck("cublasLtCreate", l.cublasLtCreate(&h)); err != nil {
		return nil, err
	}
	return &BLASLt{h: h}, nil
}

// Destroy destroys the handle.
func (b *BLASLt) Destroy() error {
	l, err := ltReady()
	if err != nil || b == nil || b.h == 0 {
		return err
	}
	err = blasCheck("cublasLtDestroy", l.cublasLtDestroy(b.h))
	b.h = 0
	return err
}

// MatmulKind is the types and scaling of a matmul.
type MatmulKind uint8

const (
	// MatmulBF16: bf16 x bf16 -> bf16, fp32 accumulate and scale.
	MatmulBF16 MatmulKind = iota
	// MatmulFP8: fp8 e4m3 x e4m3 -> bf16, fp32 accumulate, one fp32 scale
	// per tensor for X and for W (device pointers).
	MatmulFP8
	// MatmulFP8Block128: fp8 e4m3 x e4m3 -> bf16 with DeepSeek-V3's
	// block scales: X one fp32 scale per 1x128 along K (per-token-group
	// quantization), W one per 128x128 block (cuBLASLt 12.9+ on sm_90:
	// VEC128_32F and BLK128x128_32F).
	MatmulFP8Block128
)

func (k MatmulKind) String() string {
	switch k {
	case MatmulBF16:
		return "bf16"
	case MatmulFP8:
		return "fp8"
	case MatmulFP8Block128:
		return "fp8-b128"
	}
	return fmt.Sprintf("matmul(%d)", uint8(k))
}

// ElemBytes is the size of one X or W element.
func (k MatmulKind) ElemBytes() int {
	if k == MatmulBF16 {
		return 2
	}
	return 1
}

// MatmulSpec is one GEMM (or a strided batch of them) as the engines
// write it, row-major: Y[M, N] = X[M, K] x W^T, W stored [N, K] as
// nn.Linear keeps it (F.linear), or [K, N] with WeightKN (torch.bmm's
// second operand: MLA's absorbed W_UK/W_UV). Leading dimensions and
// batch strides are in elements; zero means packed.
type MatmulSpec struct {
	Kind    MatmulKind
	M, N, K int
	// WeightKN: W is [K, N] row-major, Y = X x W (bf16 only: Hopper's fp8
	// GEMMs need W as [N, K]).
	WeightKN bool
	// Row strides (elements): X's rows (K when 0), W's rows (K, or N with
	// WeightKN, when 0), Y's rows (N when 0). A head's slice of a wider
	// activation (q_nope of q [M, heads, 192]) has LDX = heads*192.
	LDX, LDW, LDY int
	// Batch > 1: a strided batch (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT):
	// member i reads X + i*StrideX, W + i*StrideW and writes Y + i*StrideY
	// (elements; 0: the packed size of one member, M*LDX, rows*LDW, M*LDY).
	Batch                     int
	StrideX, StrideW, StrideY int64
	// Workspace for the algorithm (CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES;
	// 32 MiB is what torch gives cuBLASLt on Hopper); 0 bytes: algorithms
	// that need none. Matmuls on one stream may share it.
	Workspace      DevicePtr
	WorkspaceBytes int64
}

// Algo is the algorithm cuBLASLt's heuristic chose (its first answer).
type Algo struct {
	ID, Tile, Stages, SplitK, Swizzle int
	Workspace                         int64   // bytes it uses
	Waves                             float32 // the heuristic's device utilisation (1 = one full wave)
	Candidates                        int     // algorithms the heuristic returned
}

func (a Algo) String() string {
	return fmt.Sprintf("algo %d tile %d stages %d splitk %d swizzle %d ws %d waves %.2f", a.ID, a.Tile, a.Stages,
		a.SplitK, a.Swizzle, a.Workspace, a.Waves)
}

// Matmul is a planned GEMM: descriptors, layouts and the heuristic's
// algorithm, ready to enqueue on any stream (also while it is captured
// into a graph: the scalars alpha = 1, beta = 0 are read at enqueue).
type Matmul struct {
	Spec             MatmulSpec
	Algo             Algo
	h                *BLASLt
	desc, la, lb, ld uintptr
	algo             *blasAlgo
	alpha, beta      *float32
	scaleX, scaleW   DevicePtr // last scales set on the descriptor
}

// validate checks s and fills its defaults.
func (s *MatmulSpec) validate() error {
	if s.M <= 0 || s.N <= 0 || s.K <= 0 {
		return fmt.Errorf("cublaslt: matmul %dx%dx%d: m, n, k must be positive", s.M, s.N, s.K)
	}
	if s.Kind > MatmulFP8Block128 {
		return fmt.Errorf("cublaslt: unknown matmul kind %d", s.Kind)
	}
	if s.WeightKN && s.Kind != MatmulBF16 {
		return fmt.Errorf("cublaslt: %s matmul: W must be [N, K] (fp8 GEMMs on Hopper take W transposed only)", s.Kind)
	}
	if s.Kind == MatmulFP8Block128 && s.Batch > 1 {
		return fmt.Errorf("cublaslt: fp8-b128 matmul: batches are not supported here")
	}
	wCols := s.K
	if s.WeightKN {
		wCols = s.N
	}
	if s.LDX == 0 {
		s.LDX = s.K
	}
	if s.LDW == 0 {
		s.LDW = wCols
	}
	if s.LDY == 0 {
		s.LDY = s.N
	}
	if s.LDX < s.K || s.LDW < wCols || s.LDY < s.N {
		return fmt.Errorf("cublaslt: matmul %dx%dx%d: leading dimensions %d, %d, %d below the rows' lengths", s.M, s.N, s.K, s.LDX, s.LDW, s.LDY)
	}
	if s.Batch < 0 || s.WorkspaceBytes < 0 || s.StrideX < 0 || s.StrideW < 0 || s.StrideY < 0 {
		return fmt.Errorf("cublaslt: matmul: negative batch, stride or workspace")
	}
	if s.Batch > 1 {
		wRows := s.N
		if s.WeightKN {
			wRows = s.K
		}
		if s.StrideX == 0 {
			s.StrideX = int64(s.M) * int64(s.LDX)
		}
		if s.StrideW == 0 {
			s.StrideW = int64(wRows) * int64(s.LDW)
		}
		if s.StrideY == 0 {
			s.StrideY = int64(s.M) * int64(s.LDY)
		}
	}
	if s.WorkspaceBytes > 0 && s.Workspace == 0 {
		return fmt.Errorf("cublaslt: matmul: %d workspace bytes without a workspace pointer", s.WorkspaceBytes)
	}
	return nil
}

// ScaleLens are the lengths (fp32 values) of the scale tensors an
// fp8-b128 matmul reads: X's 1x128 scales, ceil(K/128) x M, and W's
// 128x128 scales, ceil(N/128) x ceil(K/128); 1 and 1 for per-tensor fp8;
// 0 and 0 for bf16. (The order of the values within each tensor is
// cuBLASLt's; a buffer of this length is enough.)
func (s MatmulSpec) ScaleLens() (x, w int) {
	switch s.Kind {
	case MatmulFP8:
		return 1, 1
	case MatmulFP8Block128:
		kb := (s.K + 127) / 128
		return kb * ((s.M + 3) / 4 * 4), (s.N + 127) / 128 * kb
	}
	return 0, 0
}

// NewMatmul plans s: descriptors, layouts and the heuristic's first
// algorithm within s.WorkspaceBytes. Its error matches ErrNoAlgorithm when
// cuBLASLt has none for s on this device.
func (b *BLASLt) NewMatmul(s MatmulSpec) (mm *Matmul, err error) {
	l, err := ltReady()
	if err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	mm = &Matmul{Spec: s, h: b, algo: new(blasAlgo), alpha: new(float32), beta: new(float32)}
	*mm.alpha = 1
	defer func() {
		if err != nil {
			mm.Destroy()
			mm = nil
		}
	}()
	if err = blasCheck("cublasLtMatmulDescCreate", l.cublasLtMatmulDescCreate(&mm.desc, computeF32, cudaR32F)); err != nil {
		return
	}
	// Row-major Y[M,N] is column-major Y^T (N x M, ld LDY) = op(A) x B with
	// A = W and B = X^T (X row-major [M,K] is column-major K x M, ld LDX):
	// W [N,K] row-major is column-major K x N, so op(A) = T; W [K,N]
	// row-major is column-major N x K, op(A) = N. fp8 on Hopper needs this
	// "TN" form, which is why W is A.
	transA := int32(blasOpT)
	aRows, aCols := s.K, s.N
	if s.WeightKN {
		transA, aRows, aCols = blasOpN, s.N, s.K
	}
	transB := int32(blasOpN)
	if err = mm.setDesc("TRANSA", descTransA, unsafe.Pointer(&transA), 4); err != nil {
		return
	}
	if err = mm.setDesc("TRANSB", descTransB, unsafe.Pointer(&transB), 4); err != nil {
		return
	}
	ab := int32(cudaR16BF)
	if s.Kind != MatmulBF16 {
		ab = cudaR8FE4M3
	}
	if s.Kind == MatmulFP8Block128 {
		wm, xm := int32(scaleBlk128), int32(scaleVec128)
		if err = mm.setDesc("A_SCALE_MODE (BLK128x128_32F; cuBLASLt 12.9+)", descAScaleMd, unsafe.Pointer(&wm), 4); err != nil {
			return
		}
		if err = mm.setDesc("B_SCALE_MODE (VEC128_32F; cuBLASLt 12.9+)", descBScaleMd, unsafe.Pointer(&xm), 4); err != nil {
			return
		}
	}
	if err = mm.layout(l, &mm.la, ab, aRows, aCols, s.LDW, s.StrideW); err != nil {
		return
	}
	if err = mm.layout(l, &mm.lb, ab, s.K, s.M, s.LDX, s.StrideX); err != nil {
		return
	}
	if err = mm.layout(l, &mm.ld, cudaR16BF, s.N, s.M, s.LDY, s.StrideY); err != nil {
		return
	}
	if s.Kind != MatmulBF16 {
		// The heuristic checks the scale pointers are set (a null pointer
		// means scale 1 for per-tensor, an error for block scaling): any
		// non-null device address does for planning; Enqueue sets the real ones.
		if err = mm.setScales(256, 256); err != nil {
			return
		}
	}
	var pref uintptr
	if err = blasCheck("cublasLtMatmulPreferenceCreate", l.cublasLtMatmulPreferenceCreate(&pref)); err != nil {
		return
	}
	defer l.cublasLtMatmulPreferenceDestroy(pref)
	ws := uint64(s.WorkspaceBytes)
	if err = blasCheck("cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)",
		l.cublasLtMatmulPreferenceSetAttribute(pref, prefMaxWS, unsafe.Pointer(&ws), 8)); err != nil {
		return
	}
	res := make([]blasHeuristic, 8)
	var got int32
	r := l.cublasLtMatmulAlgoGetHeuristic(b.h, mm.desc, mm.la, mm.lb, mm.ld, mm.ld, pref, int32(len(res)), &res[0], &got)
	runtime.KeepAlive(res)
	if err = blasCheck("cublasLtMatmulAlgoGetHeuristic("+s.String()+")", r); err != nil {
		return
	}
	pick := -1
	for i := 0; i < int(got); i++ {
		if res[i].State == 0 {
			pick = i
			break
		}
	}
	if pick < 0 {
		err = fmt.Errorf("cublaslt: %s: %w (the heuristic returned %d)", s.String(), ErrNoAlgorithm, got)
		return
	}
	*mm.algo = res[pick].Algo
	mm.Algo = Algo{Workspace: int64(res[pick].Workspace), Waves: res[pick].Waves, Candidates: int(got)}
	for _, f := range []struct {
		attr int32
		v    *int
	}{{algoID, &mm.Algo.ID}, {algoTile, &mm.Algo.Tile}, {algoStages, &mm.Algo.Stages}, {algoSplitK, &mm.Algo.SplitK}, {algoSwizzle, &mm.Algo.Swizzle}} {
		var v uint32
		var n uintptr
		if l.cublasLtMatmulAlgoConfigGetAttribute(mm.algo, f.attr, unsafe.Pointer(&v), 4, &n) == 0 {
			*f.v = int(v)
		}
	}
	return mm, nil
}

// String names the matmul: "bf16 m=8 n=7168 k=2048", with its batch and
// weight orientation when they are not the defaults.
func (s MatmulSpec) String() string {
	str := fmt.Sprintf("%s m=%d n=%d k=%d", s.Kind, s.M, s.N, s.K)
	if s.Batch > 1 {
		str += fmt.Sprintf(" batch=%d", s.Batch)
	}
	if s.WeightKN {
		str += " w[k,n]"
	}
	return str
}

func (mm *Matmul) setDesc(name string, attr int32, v unsafe.Pointer, size uintptr) error {
	l := ltLoaded
	return blasCheck("cublasLtMatmulDescSetAttribute("+name+")", l.cublasLtMatmulDescSetAttribute(mm.desc, attr, v, size))
}

func (mm *Matmul) layout(l *ltLib, out *uintptr, dtype int32, rows, cols, ld int, stride int64) error {
	if err := blasCheck("cublasLtMatrixLayoutCreate", l.cublasLtMatrixLayoutCreate(out, dtype, uint64(rows), uint64(cols), int64(ld))); err != nil {
		return err
	}
	if mm.Spec.Batch <= 1 {
		return nil
	}
	n := int32(mm.Spec.Batch)
	if err := blasCheck("cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)", l.cublasLtMatrixLayoutSetAttribute(*out, layoutBatch, unsafe.Pointer(&n), 4)); err != nil {
		return err
	}
	return blasCheck("cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)", l.cublasLtMatrixLayoutSetAttribute(*out, layoutStride, unsafe.Pointer(&stride), 8))
}

// setScales points the descriptor at X's and W's scales (A is W, B is X).
func (mm *Matmul) setScales(x, w DevicePtr) error {
	if x == mm.scaleX && w == mm.scaleW {
		return nil
	}
	pw, px := uint64(w), uint64(x)
	if err := mm.setDesc("A_SCALE_POINTER", descAScale, unsafe.Pointer(&pw), 8); err != nil {
		return err
	}
	if err := mm.setDesc("B_SCALE_POINTER", descBScale, unsafe.Pointer(&px), 8); err != nil {
		return err
	}
	mm.scaleX, mm.scaleW = x, w
	return nil
}

// Enqueue runs Y = X x W^T (bf16) on s: x, w, y are device pointers to
// the first batch member. It may be called while s is being captured.
func (mm *Matmul) Enqueue(x, w, y DevicePtr, s Stream) error {
	if mm.Spec.Kind != MatmulBF16 {
		return fmt.Errorf("cublaslt: %s matmul: use EnqueueScaled with the scales", mm.Spec.Kind)
	}
	return mm.enqueue(x, w, y, s)
}

// EnqueueScaled runs an fp8 matmul: xScale and wScale are device pointers
// to fp32 scales (one each for MatmulFP8; the ScaleLens tensors for
// MatmulFP8Block128). Y = (xScale X) x (wScale W)^T in bf16.
func (mm *Matmul) EnqueueScaled(x, w, y, xScale, wScale DevicePtr, s Stream) error {
	if mm.Spec.Kind == MatmulBF16 {
		return fmt.Errorf("cublaslt: bf16 matmul takes no scales")
	}
	if xScale == 0 || wScale == 0 {
		return fmt.Errorf("cublaslt: %s matmul: null scale pointer", mm.Spec.Kind)
	}
	if err := mm.setScales(xScale, wScale); err != nil {
		return err
	}
	return mm.enqueue(x, w, y, s)
}

func (mm *Matmul) enqueue(x, w, y DevicePtr, s Stream) error {
	l, err := ltReady()
	if err != nil {
		return err
	}
	if mm.desc == 0 || mm.h == nil || mm.h.h == 0 {
		return fmt.Errorf("cublaslt: matmul used after Destroy")
	}
	r := l.cublasLtMatmul(mm.h.h, mm.desc, unsafe.Pointer(mm.alpha), w, mm.la, x, mm.lb, unsafe.Pointer(mm.beta),
		y, mm.ld, y, mm.ld, mm.algo, mm.Spec.Workspace, uintptr(mm.Spec.WorkspaceBytes), s)
	runtime.KeepAlive(mm)
	return blasCheck("cublasLtMatmul("+mm.Spec.String()+")", r)
}

// Destroy frees the descriptors (not the workspace, which the caller owns).
func (mm *Matmul) Destroy() error {
	l, err := ltReady()
	if err != nil || mm == nil {
		return err
	}
	var errs []string
	for _, f := range []struct {
		p  *uintptr
		fn func(uintptr) BLASStatus
	}{{&mm.la, l.cublasLtMatrixLayoutDestroy}, {&mm.lb, l.cublasLtMatrixLayoutDestroy}, {&mm.ld, l.cublasLtMatrixLayoutDestroy},
		{&mm.desc, l.cublasLtMatmulDescDestroy}} {
		if *f.p != 0 {
			if err := blasCheck("destroy", f.fn(*f.p)); err != nil {
				errs = append(errs, err.Error())
			}
			*f.p = 0
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cublaslt: matmul destroy: %s", strings.Join(errs, "; "))
	}
	return nil
}
