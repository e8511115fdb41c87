package cuda

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCUBLASLtCandidates(t *testing.T) {
	cu13 := "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublasLt.so.13"
	cu12 := "/usr/local/lib/python3.11/dist-packages/nvidia/cublas/lib/libcublasLt.so.12"
	toolkit := "/usr/local/cuda/lib64/libcublasLt.so.12"
	var tried []string
	fail := func(p string) (uintptr, error) {
		tried = append(tried, p)
		return 0, fmt.Errorf("%s: cannot open shared object file\nmore", p)
	}
	_, _, err := openAny(CUBLASLtLibraries, fakeFinder(nil, []string{cu12, cu13, toolkit, "/usr/local/cuda/lib64/libcublasLt.so.12.8.4.1"}), fail)
	require.Error(t, err)
	assert.Equal(t, []string{"libcublasLt.so.13", cu12, cu13, toolkit, "libcublasLt.so.12"}, tried,
		"loader path, then wheels and toolkit folders, then the older soname; no versioned file names")
	assert.True(t, errors.Is(err, ErrNoCUBLASLt))
	assert.True(t, NoCUBLASLt(err))
	assert.False(t, NoGPU(err), "a GPU box without cuBLASLt still has a GPU")
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), "MOECAST_CUBLASLT")

	tried = nil
	h, path, err := openAny(CUBLASLtLibraries, fakeFinder(nil, []string{cu13}), func(p string) (uintptr, error) {
		tried = append(tried, p)
		if p == cu13 {
			return 7, nil
		}
		return 0, errors.New("no")
	})
	require.NoError(t, err)
	assert.Equal(t, uintptr(7), h)
	assert.Equal(t, cu13, path)
	assert.Equal(t, []string{"libcublasLt.so.13", cu13}, tried)

	tried = nil
	_, _, err = openAny(CUBLASLtLibraries, fakeFinder(map[string]string{"MOECAST_CUBLASLT": "/x/libcublasLt.so"}, []string{cu13}), fail)
	assert.Equal(t, []string{"/x/libcublasLt.so"}, tried, "an override is tried alone")
	assert.Contains(t, err.Error(), "MOECAST_CUBLASLT=/x/libcublasLt.so")
	assert.True(t, errors.Is(err, ErrNoCUBLASLt))
}

// TestNoCUBLASLtHere runs where there is no GPU: every cuBLASLt call fails
// with one line that NoCUBLASLt recognises.
func TestNoCUBLASLtHere(t *testing.T) {
	if err := InitCUBLASLt(); err == nil || !NoCUBLASLt(err) {
		t.Skipf("cuBLASLt is usable here (%v)", err)
	}
	calls := map[string]func() error{
		"InitCUBLASLt": InitCUBLASLt,
		"Version":      func() error { _, _, err := CUBLASLtVersion(); return err },
		"NewBLASLt":    func() error { _, err := NewBLASLt(); return err },
		"NewMatmul":    func() error { _, err := (&BLASLt{}).NewMatmul(MatmulSpec{M: 1, N: 1, K: 1}); return err },
	}
	for name, call := range calls {
		err := call()
		require.Error(t, err, name)
		assert.True(t, NoCUBLASLt(err), "%s: %v", name, err)
		assert.Equal(t, 1, len(strings.Split(err.Error(), "\n")), "%s: %q", name, err)
	}
	assert.Equal(t, "", CUBLASLtPath())
}

func TestMatmulSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec MatmulSpec
		want MatmulSpec // defaults filled
		err  string
	}{
		{"packed", MatmulSpec{M: 3, N: 8, K: 16}, MatmulSpec{M: 3, N: 8, K: 16, LDX: 16, LDW: 16, LDY: 8}, ""},
		{"weight k,n", MatmulSpec{M: 3, N: 8, K: 16, WeightKN: true}, MatmulSpec{M: 3, N: 8, K: 16, WeightKN: true, LDX: 16, LDW: 8, LDY: 8}, ""},
		{"batch strides default to packed", MatmulSpec{M: 4, N: 512, K: 128, Batch: 16, LDX: 16 * 192},
			MatmulSpec{M: 4, N: 512, K: 128, Batch: 16, LDX: 16 * 192, LDW: 128, LDY: 512, StrideX: 4 * 16 * 192, StrideW: 512 * 128, StrideY: 4 * 512}, ""},
		{"zero m", MatmulSpec{M: 0, N: 8, K: 16}, MatmulSpec{}, "must be positive"},
		{"ld too small", MatmulSpec{M: 2, N: 8, K: 16, LDX: 8}, MatmulSpec{}, "leading dimensions"},
		{"fp8 with w[k,n]", MatmulSpec{Kind: MatmulFP8, M: 2, N: 16, K: 16, WeightKN: true}, MatmulSpec{}, "W must be [N, K]"},
		{"workspace bytes without pointer", MatmulSpec{M: 2, N: 16, K: 16, WorkspaceBytes: 1024}, MatmulSpec{}, "without a workspace pointer"},
		{"block fp8 batch", MatmulSpec{Kind: MatmulFP8Block128, M: 2, N: 128, K: 128, Batch: 2}, MatmulSpec{}, "batches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec
			err := s.validate()
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, s)
		})
	}
}

func TestScaleLens(t *testing.T) {
	x, w := MatmulSpec{Kind: MatmulFP8Block128, M: 5, N: 300, K: 7168}.ScaleLens()
	assert.Equal(t, 56*8, x, "ceil(K/128) x M rounded up to 4")
	assert.Equal(t, 3*56, w, "ceil(N/128) x ceil(K/128)")
	x, w = MatmulSpec{Kind: MatmulFP8, M: 5, N: 300, K: 7168}.ScaleLens()
	assert.Equal(t, []int{1, 1}, []int{x, w})
	x, w = MatmulSpec{Kind: MatmulBF16, M: 5, N: 300, K: 7168}.ScaleLens()
	assert.Equal(t, []int{0, 0}, []int{x, w})
	assert.Equal(t, "fp8-b128 m=5 n=300 k=7168", MatmulSpec{Kind: MatmulFP8Block128, M: 5, N: 300, K: 7168}.String())
	assert.Equal(t, "bf16 m=4 n=512 k=128 batch=16 w[k,n]", MatmulSpec{M: 4, N: 512, K: 128, Batch: 16, WeightKN: true}.String())
}

func TestBLASErrors(t *testing.T) {
	err := blasCheck("cublasLtMatmul", 15)
	assert.EqualError(t, err, "cublaslt: cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED (15)")
	assert.True(t, errors.Is(err, ErrNoAlgorithm))
	assert.False(t, errors.Is(blasCheck("x", 7), ErrNoAlgorithm))
	assert.EqualError(t, blasCheck("x", 99), "cublaslt: x: CUBLAS_STATUS_UNKNOWN (99)")
	assert.NoError(t, blasCheck("x", 0))
	assert.Equal(t, uintptr(96), unsafe.Sizeof(blasHeuristic{}), "cublasLtMatmulHeuristicResult_t")
	assert.Equal(t, uintptr(64), unsafe.Sizeof(blasAlgo{}), "cublasLtMatmulAlgo_t")
	assert.Equal(t, "13.1.0", FormatCUBLASLtVersion(130100))
}

// bf16 helpers for the device test (kernels/gpu has the full ones).
// bf16 rounds to nearest even (inputs here are finite).
func bf16(f float32) uint16 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func bf16f(h uint16) float32    { return math.Float32frombits(uint32(h) << 16) }
func smallInt(i, j int) float32 { return float32((i*7+j*3)%9 - 4) }

// TestCUBLASLtOnDevice loads cuBLASLt and runs bf16 matmuls whose inputs
// are small integers (exact in bf16, sums exact in fp32 and bf16), so the
// result must equal the host's exactly: plain, W as [K, N], a strided batch
// over a wider activation (MLA's per-head absorbed GEMM), and inside a
// captured graph.
func TestCUBLASLtOnDevice(t *testing.T) {
	onDevice(t)
	require.NoError(t, InitCUBLASLt())
	v, rt, err := CUBLASLtVersion()
	require.NoError(t, err)
	t.Logf("cuBLASLt %s (cudart %d) from %s", FormatCUBLASLtVersion(v), rt, CUBLASLtPath())
	h, err := NewBLASLt()
	require.NoError(t, err)
	defer h.Destroy()
	const wsBytes = 32 << 20
	ws, err := Alloc(wsBytes)
	require.NoError(t, err)
	defer Free(ws)
	s, err := NewStream(StreamNonBlocking)
	require.NoError(t, err)
	defer s.Destroy()

	cases := []MatmulSpec{
		{M: 5, N: 72, K: 40},
		{M: 64, N: 256, K: 384},
		{M: 3, N: 48, K: 32, WeightKN: true},
		{M: 4, N: 64, K: 32, Batch: 3, LDX: 3 * 48, StrideX: 48}, // heads of x [M, 3, 48], first 32 of each
	}
	for _, sp := range cases {
		sp.Workspace, sp.WorkspaceBytes = ws, wsBytes
		for _, graph := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s graph=%v", sp, graph), func(t *testing.T) {
				mm, err := h.NewMatmul(sp)
				require.NoError(t, err)
				defer mm.Destroy()
				p := mm.Spec
				t.Logf("%s: %s", p, mm.Algo)
				batch := max(p.Batch, 1)
				wRows, wCols := p.N, p.K
				if p.WeightKN {
					wRows, wCols = p.K, p.N
				}
				xLen := int64(batch-1)*p.StrideX + int64(p.M-1)*int64(p.LDX) + int64(p.K)
				wLen := int64(batch-1)*p.StrideW + int64(wRows-1)*int64(p.LDW) + int64(wCols)
				yLen := int64(batch-1)*p.StrideY + int64(p.M-1)*int64(p.LDY) + int64(p.N)
				xh, wh := make([]uint16, xLen), make([]uint16, wLen)
				for i := range xh {
					xh[i] = bf16(smallInt(i, 1))
				}
				for i := range wh {
					wh[i] = bf16(smallInt(i, 2) / 4)
				}
				x, _ := Alloc(xLen * 2)
				w, _ := Alloc(wLen * 2)
				y, _ := Alloc(yLen * 2)
				defer Free(x)
				defer Free(w)
				defer Free(y)
				require.NoError(t, CopyToDevice(x, xh))
				require.NoError(t, CopyToDevice(w, wh))
				require.NoError(t, Memset8(y, 0xff, yLen*2))
				require.NoError(t, Synchronize())
				if graph {
					require.NoError(t, s.BeginCapture(CaptureModeThreadLocal))
					require.NoError(t, mm.Enqueue(x, w, y, s))
					g, err := s.EndCapture()
					require.NoError(t, err)
					defer g.Destroy()
					ge, err := g.Instantiate()
					require.NoError(t, err)
					defer ge.Destroy()
					require.NoError(t, ge.Launch(s))
				} else {
					require.NoError(t, mm.Enqueue(x, w, y, s))
				}
				require.NoError(t, s.Synchronize())
				got := make([]uint16, yLen)
				require.NoError(t, CopyFromDevice(got, y))
				bad := 0
				for b := 0; b < batch; b++ {
					for m := 0; m < p.M; m++ {
						for n := 0; n < p.N; n++ {
							var ref float32
							for k := 0; k < p.K; k++ {
								wi := int64(b)*p.StrideW + int64(n)*int64(p.LDW) + int64(k)
								if p.WeightKN {
									wi = int64(b)*p.StrideW + int64(k)*int64(p.LDW) + int64(n)
								}
								ref += bf16f(xh[int64(b)*p.StrideX+int64(m)*int64(p.LDX)+int64(k)]) * bf16f(wh[wi])
							}
							g := bf16f(got[int64(b)*p.StrideY+int64(m)*int64(p.LDY)+int64(n)])
							if g != bf16f(bf16(ref)) && bad < 5 {
								bad++
								t.Errorf("batch %d y[%d][%d] = %g, want %g", b, m, n, g, ref)
							}
						}
					}
				}
			})
		}
	}
}
