package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostE4M3 checks the host rounding that fp8moe_quant is checked
// against: every finite value maps to its own code, midpoints go to the
// even code, values past 448 saturate, signs are kept.
func TestHostE4M3(t *testing.T) {
	for c := 0; c < 127; c++ {
		v := E4M3(c).Float32()
		require.Equal(t, E4M3(c), hostE4M3(v), "code %#x", c)
		require.Equal(t, E4M3(c)|0x80, hostE4M3(-v), "code -%#x", c)
		if c < 126 {
			mid := float32((float64(v) + float64(E4M3(c+1).Float32())) / 2)
			want := E4M3(c)
			if c%2 == 1 {
				want = E4M3(c + 1)
			}
			assert.Equal(t, want, hostE4M3(mid), "midpoint above code %#x", c)
		}
	}
	assert.Equal(t, E4M3(0x7e), hostE4M3(1e6))
	assert.Equal(t, E4M3(0x01), hostE4M3(float32(math.Ldexp(1, -9))))
	assert.Equal(t, E4M3(0), hostE4M3(float32(math.Ldexp(1, -11))))
}

// TestHostQuantFP8 checks the per-token-group quantisation: the group's
// largest magnitude becomes 448, and q x scale is within half an e4m3 step
// of x.
func TestHostQuantFP8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, k = 3, 256
	x := randomBF16(rng, rows*k)
	q, qs := hostQuantFP8(x, rows, k)
	require.Len(t, qs, rows*k/fp8Block)
	for r := 0; r < rows; r++ {
		for g := 0; g < k/fp8Block; g++ {
			top := E4M3(0)
			for j := 0; j < fp8Block; j++ {
				i := r*k + g*fp8Block + j
				top = max(top, q[i]&0x7f)
				got := float64(q[i].Float32()) * float64(qs[r*k/fp8Block+g])
				assert.InDelta(t, float64(x[i].Float32()), got, math.Abs(float64(x[i].Float32()))/16+1e-9)
			}
			assert.Equal(t, E4M3(0x7e), top, "row %d group %d", r, g)
		}
	}
	// A zero group gets the floor scale and zero codes.
	z := make([]BF16, fp8Block)
	q, qs = hostQuantFP8(z, 1, fp8Block)
	assert.Equal(t, float32(1e-10)/448, qs[0])
	assert.Equal(t, E4M3(0), q[0])
}

// TestFP8Plan checks the split of K: no empty slice, about two blocks per
// multiprocessor at small batches, none at large ones, errors for bad shapes.
func TestFP8Plan(t *testing.T) {
	f := &FP8MoE{SMs: 132}
	r, err := routeUniform(1, 1, 256, 8)
	require.NoError(t, err)
	al, err := Align(r, 16)
	require.NoError(t, err)
	p, err := f.PlanMoE(al, 512, 7168, 8, 0)
	require.NoError(t, err)
	kb := 7168 / 128
	per := (kb + p.Slices - 1) / p.Slices
	assert.Greater(t, p.Slices, 1)
	assert.Less(t, (p.Slices-1)*per, kb, "an empty slice")
	assert.GreaterOrEqual(t, p.MBlocks*4*p.Slices, 2*132-p.MBlocks*4)
	r, err = routeUniform(1, 4096, 256, 8)
	require.NoError(t, err)
	al, err = Align(r, 64)
	require.NoError(t, err)
	p, err = f.PlanMoE(al, 4096, 7168, 8, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, p.Slices)
	assert.Equal(t, int64(0), p.WorkspaceBytes())
	p, err = f.PlanMoE(al, 4096, 7168, 8, 7)
	require.NoError(t, err)
	assert.Equal(t, 7, p.Slices)
	_, err = f.PlanMoE(al, 4000, 7168, 8, 0)
	assert.Error(t, err)
	_, err = f.PlanMoE(al, 4096, 7168, 8, 57)
	assert.Error(t, err)
}
