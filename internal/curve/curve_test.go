package curve

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCurveExactOnPointsAndBounded(t *testing.T) {
	x := []float64{256, 1024, 4096, 65536}
	y := []float64{5.1, 5.3, 6.4, 30.8}
	rows := []int{3, 4, 5, 6}
	for _, logScale := range []bool{true, false} {
		c, err := New(x, y, rows, logScale)
		require.NoError(t, err)
		for i := range x {
			r := c.At(x[i])
			assert.Equal(t, y[i], r.Y, "exact at x=%g (log=%v)", x[i], logScale)
			assert.Equal(t, rows[i], r.RowLo)
			assert.Equal(t, rows[i], r.RowHi)
			assert.Equal(t, Inside, r.Clamp)
		}
		for i := 0; i+1 < len(x); i++ {
			for _, f := range []float64{0.1, 0.5, 0.9} {
				q := x[i] + f*(x[i+1]-x[i])
				r := c.At(q)
				assert.GreaterOrEqual(t, r.Y, y[i], "x=%g", q)
				assert.LessOrEqual(t, r.Y, y[i+1], "x=%g", q)
				assert.Equal(t, rows[i], r.RowLo)
				assert.Equal(t, rows[i+1], r.RowHi)
			}
		}
	}
}

func TestCurveLogLogIsPowerLawExact(t *testing.T) {
	// y = 3 x^0.5 is a straight line in log-log: interpolation recovers it.
	x := []float64{1, 100, 10000}
	y := []float64{3, 30, 300}
	c, err := New(x, y, []int{1, 2, 3}, true)
	require.NoError(t, err)
	assert.InDelta(t, 3*math.Sqrt(50), c.At(50).Y, 1e-9)
	// Linear scale between 1 and 100 gives the chord instead.
	cl, err := New(x, y, []int{1, 2, 3}, false)
	require.NoError(t, err)
	assert.InDelta(t, 3+27*49.0/99, cl.At(50).Y, 1e-9)
}

func TestCurveClamp(t *testing.T) {
	c, err := New([]float64{2, 8}, []float64{10, 20}, []int{7, 8}, true)
	require.NoError(t, err)
	tests := []struct {
		name  string
		x     float64
		y     float64
		row   int
		clamp Clamp
	}{
		{"below", 1, 10, 7, Below},
		{"above", 100, 20, 8, Above},
		{"at low end", 2, 10, 7, Inside},
		{"at high end", 8, 20, 8, Inside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.At(tt.x)
			assert.Equal(t, tt.y, r.Y)
			assert.Equal(t, tt.row, r.RowLo)
			assert.Equal(t, tt.clamp, r.Clamp)
		})
	}
	one, err := New([]float64{4}, []float64{9}, []int{1}, true)
	require.NoError(t, err)
	assert.Equal(t, Result{Y: 9, RowLo: 1, RowHi: 1}, one.At(4))
	assert.Equal(t, Above, one.At(5).Clamp)
}

func TestCurveRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
		log  bool
	}{
		{"empty", nil, nil, true},
		{"not increasing", []float64{1, 1}, []float64{1, 2}, false},
		{"decreasing", []float64{2, 1}, []float64{1, 2}, false},
		{"zero in log", []float64{0, 1}, []float64{1, 2}, true},
		{"negative y in log", []float64{1, 2}, []float64{1, -2}, true},
		{"NaN", []float64{1, 2}, []float64{math.NaN(), 2}, false},
		{"Inf", []float64{1, math.Inf(1)}, []float64{1, 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := make([]int, len(tt.x))
			_, err := New(tt.x, tt.y, rows, tt.log)
			assert.Error(t, err)
		})
	}
}

// TestLOOHandTable checks the leave-one-out error on a table small enough to
// work out by hand.
func TestLOOHandTable(t *testing.T) {
	// Linear scale, x = 1,2,3,4, y = 10,14,18,30.
	// Point 2 (x=2): neighbours (1,10),(3,18) -> 14, error 0.
	// Point 3 (x=3): neighbours (2,14),(4,30) -> 22, |22-18|/18 = 0.2222.
	c, err := New([]float64{1, 2, 3, 4}, []float64{10, 14, 18, 30}, []int{1, 2, 3, 4}, false)
	require.NoError(t, err)
	errs := c.LOO(nil)
	require.Len(t, errs, 2)
	assert.InDelta(t, 0, errs[0], 1e-12)
	assert.InDelta(t, 4.0/18, errs[1], 1e-12)
	assert.InDelta(t, 4.0/18, P90(errs), 1e-12)

	// Log-log: x = 1, 10, 100; y = 1, 5, 100. Neighbours of x=10 predict
	// sqrt(1*100) = 10, error |10-5|/5 = 1.
	cl, err := New([]float64{1, 10, 100}, []float64{1, 5, 100}, []int{1, 2, 3}, true)
	require.NoError(t, err)
	errs = cl.LOO(nil)
	require.Len(t, errs, 1)
	assert.InDelta(t, 1.0, errs[0], 1e-12)
}

func TestP90(t *testing.T) {
	assert.Equal(t, 0.0, P90(nil))
	e := []float64{0.5, 0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9, 1.0}
	assert.Equal(t, 0.9, P90(e)) // nearest rank: ceil(0.9*10) = 9th of 10
	assert.Equal(t, 0.5, e[0], "P90 must not reorder its input")
	assert.Equal(t, 0.3, P90([]float64{0.3}))
}

// TestNth: selection gives the value a sort puts at every rank, on
// samples with many ties, sorted, reversed, organ-pipe and random, of
// sizes around the small-part cutoff and large; with a NaN or a -0 the
// sort's own answer (its placement of those).
func TestNth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func(i, n int) float64{
		"random":     func(int, int) float64 { return rng.Float64() },
		"two-valued": func(int, int) float64 { return float64(rng.IntN(2)) },
		"few-ties":   func(int, int) float64 { return float64(rng.IntN(7)) / 4 },
		"sorted":     func(i, _ int) float64 { return float64(i) },
		"reversed":   func(i, n int) float64 { return float64(n - i) },
		"organ-pipe": func(i, n int) float64 { return float64(min(i, n-i)) },
		"equal":      func(int, int) float64 { return 0.25 },
		"nan":        func(i, _ int) float64 { return []float64{math.NaN(), 1, 0.5}[i%3] },
		"signed-zero": func(i, _ int) float64 {
			return []float64{math.Copysign(0, -1), 0, 0.5}[i%3]
		},
	}
	for name, f := range shapes {
		for _, n := range []int{1, 2, 3, 15, 16, 17, 18, 33, 100, 1000, 7001} {
			v := make([]float64, n)
			for i := range v {
				v[i] = f(i, n)
			}
			want := slices.Clone(v)
			sort.Float64s(want)
			ks := []int{0, n / 2, n - 1, int(math.Ceil(0.9*float64(n))) - 1}
			if n <= 100 {
				ks = ks[:0]
				for k := range n {
					ks = append(ks, k)
				}
			}
			for _, k := range ks {
				got := nth(slices.Clone(v), k)
				if math.Float64bits(got) != math.Float64bits(want[k]) && !(math.IsNaN(got) && math.IsNaN(want[k])) {
					t.Fatalf("%s n=%d: nth(k=%d) = %v, sorted[k] = %v", name, n, k, got, want[k])
				}
			}
		}
	}
}

func TestGrid(t *testing.T) {
	// Two batches; latency = batch * kv^0.5 exactly (log-log planes).
	mk := func(batch float64, row0 int) *Curve {
		kv := []float64{16, 64, 256}
		y := make([]float64, len(kv))
		rows := make([]int, len(kv))
		for i, k := range kv {
			y[i] = batch * math.Sqrt(k)
			rows[i] = row0 + i
		}
		c, err := New(kv, y, rows, true)
		require.NoError(t, err)
		return c
	}
	g, err := NewGrid([]float64{1, 4, 16}, []*Curve{mk(1, 1), mk(4, 4), mk(16, 7)}, true)
	require.NoError(t, err)
	r := g.At(4, 64)
	assert.Equal(t, 4*8.0, r.Y)
	assert.Equal(t, 5, r.RowLo)
	assert.Equal(t, 5, r.RowHi)
	r = g.At(2, 32)
	assert.InDelta(t, 2*math.Sqrt(32), r.Y, 1e-9)
	assert.Equal(t, 1, r.RowLo) // batch 1, kv 16
	assert.Equal(t, 5, r.RowHi) // batch 4, kv 64
	r = g.At(32, 1000)
	assert.Equal(t, Above, r.ClampA)
	assert.Equal(t, Above, r.ClampB)
	assert.Equal(t, 16*16.0, r.Y)
	// A power law is interpolated exactly, so every LOO error is ~0.
	for _, e := range g.LOO(nil) {
		assert.InDelta(t, 0, e, 1e-12)
	}
	assert.Len(t, g.LOO(nil), 3+3)
}

func TestAtDoesNotAllocate(t *testing.T) {
	c, err := New([]float64{1, 2, 4, 8}, []float64{1, 2, 3, 4}, []int{1, 2, 3, 4}, true)
	require.NoError(t, err)
	g, err := NewGrid([]float64{1, 2}, []*Curve{c, c}, true)
	require.NoError(t, err)
	var sink float64
	n := testing.AllocsPerRun(100, func() {
		sink += c.At(3).Y + g.At(1.5, 3).Y
	})
	assert.Zero(t, n)
	_ = sink
}

func TestCurveExtrapolateAbove(t *testing.T) {
	x := []float64{1, 2, 4}
	y := []float64{10, 14, 16}
	tests := []struct {
		name     string
		mode     Extrap
		minSlope float64
		xs       []float64
		ys       []float64
		n        int // points used
	}{
		{"clamp (default)", ClampAbove, 0, x, y, 3},
		// last segment log-log slope log(16/14)/log 2 = 0.193 < 1: raised to 1.
		{"log-log slope raised to the minimum", LogLogAbove, 1, x, y, 3},
		{"log-log slope above the minimum kept", LogLogAbove, 0.1, x, y, 3},
		{"log-log one point", LogLogAbove, 1, []float64{4}, []float64{16}, 1},
		{"linear last segment", LinearAbove, 0, x, y, 3},
		{"linear decreasing segment floored at slope 0", LinearAbove, 0, x, []float64{10, 16, 14}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.xs, tc.ys, []int{1, 2, 3}[:tc.n], true)
			require.NoError(t, err)
			c.SetAbove(tc.mode, tc.minSlope)
			assert.Equal(t, tc.mode != ClampAbove, c.Extrapolates())
			last := tc.ys[tc.n-1]
			r := c.At(4) // on the last point: exact whatever the mode
			assert.Equal(t, last, r.Y)
			assert.Equal(t, Inside, r.Clamp)
			r = c.At(16)
			assert.Equal(t, Above, r.Clamp)
			var want float64
			switch {
			case tc.mode == ClampAbove:
				want = last
			case tc.mode == LogLogAbove && tc.n == 1:
				want = 16 * 4
			case tc.mode == LogLogAbove && tc.minSlope == 1:
				want = 16 * 4
			case tc.mode == LogLogAbove:
				want = 16 * math.Pow(4, math.Log(16.0/14)/math.Log(2))
			case tc.ys[2] < tc.ys[1]:
				want = 14
			default:
				want = 16 + 1*12 // slope (16-14)/(4-2) = 1 per unit x
			}
			assert.InEpsilon(t, want, r.Y, 1e-12)
			assert.Equal(t, tc.n, r.RowHi)
			if tc.mode != ClampAbove && tc.n > 1 {
				assert.Equal(t, tc.n-1, r.RowLo, "the last segment's rows")
			}
		})
	}
}
