package gpu

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestE4M3(t *testing.T) {
	tests := []struct {
		b    E4M3
		want float32
	}{
		{0x00, 0}, {0x38, 1}, {0xb8, -1}, {0x40, 2}, {0x3c, 1.5}, {0x7e, 448}, {0xfe, -448},
		{0x01, float32(math.Ldexp(1, -9))}, {0x08, float32(math.Ldexp(1, -6))},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.b.Float32(), "%#x", uint8(tt.b))
	}
	assert.True(t, math.IsNaN(float64(E4M3(0x7f).Float32())))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, v := range randomE4M3(rng, 1000) {
		f := math.Abs(float64(v.Float32()))
		require.True(t, f >= 0.125 && f < 4, "%#x = %g", uint8(v), f)
	}
}

func TestWeightBytes(t *testing.T) {
	w, s := weightBytes(MatmulCase{Kind: cuda.MatmulBF16, M: 1, N: 576, K: 7168})
	assert.Equal(t, int64(576*7168*2), w)
	assert.Equal(t, int64(0), s)
	w, s = weightBytes(MatmulCase{Kind: cuda.MatmulFP8Block128, M: 1, N: 2112, K: 7168})
	assert.Equal(t, int64(2112*7168), w)
	assert.Equal(t, int64((20*56*4+255)/256*256), s, "17 x 56 block scales, dimensions padded to 4")
}

// onBLAS makes device 0 current and creates a cuBLASLt handle and a stream,
// or skips without a GPU or cuBLASLt.
func onBLAS(t *testing.T) (*cuda.BLASLt, cuda.Stream) {
	t.Helper()
	_, s := onGPU(t, cuda.InitCUBLASLt, cuda.NoCUBLASLt)
	v, rt, err := cuda.CUBLASLtVersion()
	require.NoError(t, err)
	t.Logf("cuBLASLt %s (cudart %d) from %s", cuda.FormatCUBLASLtVersion(v), rt, cuda.CUBLASLtPath())
	h, err := cuda.NewBLASLt()
	require.NoError(t, err)
	t.Cleanup(func() { h.Destroy() })
	return h, s
}

// TestMatmulOnDevice checks bf16 and per-tensor fp8 matmuls against the host
// reference (CheckMatmul's tolerance), at aligned and odd shapes, W as
// [N, K] and [K, N], and a strided batch.
func TestMatmulOnDevice(t *testing.T) {
	h, s := onBLAS(t)
	cases := []cuda.MatmulSpec{
		{Kind: cuda.MatmulBF16, M: 1, N: 576, K: 512},
		{Kind: cuda.MatmulBF16, M: 7, N: 136, K: 264},
		{Kind: cuda.MatmulBF16, M: 64, N: 256, K: 384},
		{Kind: cuda.MatmulBF16, M: 5, N: 512, K: 128, WeightKN: true},
		{Kind: cuda.MatmulBF16, M: 4, N: 128, K: 64, Batch: 4, LDX: 4 * 96, StrideX: 96},
		{Kind: cuda.MatmulFP8, M: 16, N: 256, K: 384},
		{Kind: cuda.MatmulFP8, M: 64, N: 512, K: 1024},
	}
	for i, sp := range cases {
		c, err := CheckMatmul(h, sp, uint64(i+1), false, s)
		require.NoError(t, err, "%s", sp)
		t.Log(c)
		assert.True(t, c.Pass(), "%s", c)
	}
}

// TestMatmulBlockOnDevice runs fp8-b128 (1x128 X, 128x128 W scales): with
// uniform scales (any scale order gives the same result) it must match the
// host; with random per-block scales, one of blockScaleLayouts must (the
// log names which). Skipped where cuBLASLt has no such algorithm (before
// CUDA 12.9, or off sm_90).
func TestMatmulBlockOnDevice(t *testing.T) {
	h, s := onBLAS(t)
	for i, sp := range []cuda.MatmulSpec{
		{Kind: cuda.MatmulFP8Block128, M: 8, N: 384, K: 512},
		{Kind: cuda.MatmulFP8Block128, M: 32, N: 384, K: 512},
		{Kind: cuda.MatmulFP8Block128, M: 64, N: 256, K: 384},  // K/128 = 3: padded W scales
		{Kind: cuda.MatmulFP8Block128, M: 12, N: 640, K: 1280}, // M = 12, N/128 = 5, K/128 = 10
	} {
		c, err := CheckMatmul(h, sp, uint64(i+10), true, s)
		if errors.Is(err, cuda.ErrNoAlgorithm) {
			t.Skipf("%s: %v", sp, err)
		}
		require.NoError(t, err, "%s", sp)
		t.Logf("uniform scales: %s", c)
		assert.True(t, c.Pass(), "uniform scales: %s", c)
		c, err = CheckMatmul(h, sp, uint64(i+20), false, s)
		require.NoError(t, err)
		t.Logf("per-block scales, best layout: %s", c)
		assert.True(t, c.Pass(), "per-block scales: no candidate layout matches: %s", c)
	}
}

// TestMatmulBlockSmallMOnDevice logs which m from 1 to 16 cuBLASLt has a
// block-scaled algorithm for (MeasureMatmuls pads the others).
func TestMatmulBlockSmallMOnDevice(t *testing.T) {
	h, _ := onBLAS(t)
	ws, err := cuda.Alloc(BLASWorkspace)
	require.NoError(t, err)
	defer cuda.Free(ws)
	var ok, no []int
	for m := 1; m <= 16; m++ {
		mm, err := h.NewMatmul(cuda.MatmulSpec{Kind: cuda.MatmulFP8Block128, M: m, N: 4096, K: 7168, Workspace: ws, WorkspaceBytes: BLASWorkspace})
		if err != nil {
			require.ErrorIs(t, err, cuda.ErrNoAlgorithm)
			no = append(no, m)
			continue
		}
		mm.Destroy()
		ok = append(ok, m)
	}
	t.Logf("fp8-b128 n=4096 k=7168: algorithm for m %v, none for m %v", ok, no)
}

// TestMatmulTimingOnDevice times a few projections streamed (weights
// rotated over 512 MiB) and writes them as JSON to $MOECAST_BLAS_BENCH.
func TestMatmulTimingOnDevice(t *testing.T) {
	h, s := onBLAS(t)
	ws, err := cuda.Alloc(BLASWorkspace)
	require.NoError(t, err)
	defer cuda.Free(ws)
	var out []MatmulResult
	for _, kind := range []cuda.MatmulKind{cuda.MatmulBF16, cuda.MatmulFP8, cuda.MatmulFP8Block128} {
		for _, sh := range []struct {
			name string
			n, k int
		}{{"gate_up 7168->4096", 4096, 7168}, {"down 2048->7168", 7168, 2048}, {"o_proj 8192->7168", 7168, 8192}, {"kv_a 7168->576", 576, 7168}} {
			for _, m := range []int{1, 8, 32, 512, 4096} {
				r, err := measureMatmul(h, MatmulCase{Name: sh.name, Kind: kind, M: m, N: sh.n, K: sh.k}, 512<<20, ws, BLASWorkspace, s)
				if errors.Is(err, cuda.ErrNoAlgorithm) {
					t.Logf("%s %s m=%d: %v", kind, sh.name, m, err)
					continue
				}
				require.NoError(t, err)
				t.Logf("%-8s %-18s m=%-5d %8.2f us (%.2f-%.2f) eager %.2f us  %6.2f TB/s %7.1f TFLOP/s  copies %d calls %d  %s",
					kind, sh.name, m, r.GraphSeconds*1e6, r.GraphMin*1e6, r.GraphMax*1e6, r.LaunchSeconds*1e6,
					r.BytesPerSec/1e12, r.FLOPsPerSec/1e12, r.Copies, r.CallsPerGraph, r.Algo)
				out = append(out, r)
			}
		}
	}
	if p := os.Getenv("MOECAST_BLAS_BENCH"); p != "" {
		b, err := json.MarshalIndent(out, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
}

func TestGraphPlan(t *testing.T) {
	tests := []struct {
		name           string
		n, minDistinct int
		eager          float64
		use, calls     int
	}{
		{"compute-bound o_proj m=4096: the distinct copies set the size", 18, 8, 96e-6, 8, 8},
		{"latency-bound tiny weights: 96 MiB of copies beyond BLASMaxCalls", 512, 193, 5e-6, 193, 193},
		{"lm_head m=8192: two copies", 2, 2, 27e-3, 2, 2},
		{"decode: whole passes up to the replay length", 10, 2, 5e-6, 10, 100},
		{"rounded up to whole passes", 3, 2, 10e-6, 3, 51},
		{"no eager figure: BLASMaxCalls", 200, 2, 0, 100, 100},
	}
	for _, tt := range tests {
		use, calls := graphPlan(tt.n, tt.minDistinct, tt.eager)
		assert.Equal(t, []int{tt.use, tt.calls}, []int{use, calls}, tt.name)
		assert.LessOrEqual(t, use, tt.n, tt.name)
		assert.Equal(t, 0, calls%use, "%s: whole passes over the copies used", tt.name)
	}
	assert.Equal(t, 8, distinctCopies(7168*1024*2), "14.7 MB: 7 copies hold 96 MiB, plus the one read again")
	assert.Equal(t, 2, distinctCopies(163840*7168*2))
	assert.Equal(t, 193, distinctCopies(512<<10))
}

func TestReplayCounts(t *testing.T) {
	tests := []struct {
		name       string
		dt         float64
		warm, time int
	}{
		{"short replays: 3 warm-up, 15 timed", 0.5e-3, 3, 15},
		{"Time's 5 ms replays: as before, 3 and 15", 5e-3, 3, 15},
		{"6 ms: 3 warm-up, 13 timed (75 ms)", 6e-3, 3, 13},
		{"10 ms: 2 warm-up, 8 timed", 10e-3, 2, 8},
		{"a 15 ms replay warms up alone, 5 timed", 15e-3, 1, 5},
		{"a 72 ms prefill call: 1 and 5", 72e-3, 1, 5},
	}
	for _, tt := range tests {
		warm, timed := replayCounts(tt.dt)
		assert.Equal(t, tt.warm, warm, tt.name)
		assert.Equal(t, tt.time, timed, tt.name)
	}
}
