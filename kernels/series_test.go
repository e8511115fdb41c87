package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/moecast/moecast/internal/curve"
	"github.com/stretchr/testify/require"
)

// mapSeries2 is buildSeries2 as it was built before its one stable sort:
// points grouped by key and by a in maps, each group sorted stably by b.
func mapSeries2[K comparable](pts []pt2[K]) (series2[K], []float64, error) {
	var s series2[K]
	groups := map[K]map[float64][]pt2[K]{}
	for _, p := range pts {
		if groups[p.key] == nil {
			groups[p.key] = map[float64][]pt2[K]{}
			s.keys = append(s.keys, p.key)
		}
		groups[p.key][p.a] = append(groups[p.key][p.a], p)
	}
	var loo []float64
	for _, k := range s.keys {
		var as []float64
		for a := range groups[k] {
			as = append(as, a)
		}
		sort.Float64s(as)
		var curves []*curve.Curve
		for _, a := range as {
			g := groups[k][a]
			x, y, rows := make([]float64, len(g)), make([]float64, len(g)), make([]int, len(g))
			for i, p := range g {
				x[i], y[i], rows[i] = p.b, p.y, p.row
			}
			sortByX(x, y, rows)
			c, err := curve.New(x, y, rows, true)
			if err != nil {
				return s, nil, fmt.Errorf("series %v at %g: %w", k, a, err)
			}
			curves = append(curves, c)
		}
		g, err := curve.NewGrid(as, curves, true)
		if err != nil {
			return s, nil, fmt.Errorf("series %v: %w", k, err)
		}
		s.grids = append(s.grids, g)
		loo = g.LOO(loo)
	}
	return s, loo, nil
}

// TestBuildSeries2 holds buildSeries2 to the map-grouped build it
// replaced, on shuffled tables of several keys: the same keys in the same
// order, the same grids (a values, each curve's points, and every
// answer: values, rows and clamps, on and between the points), the same
// leave-one-out errors in the same order, bit for bit; and the same error
// where a curve's b repeats (rows named in the order of the input).
func TestBuildSeries2(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var pts []pt2[[2]int]
	row := 0
	for _, k := range [][2]int{{8, 1}, {2, 1}, {32, 8}, {4, 4}} {
		for _, a := range []int{1, 2, 4, 8, 16, 64, 256} {
			for _, b := range []int{2, 16, 128, 1024, 8192, 65536} {
				if k == [2]int{4, 4} && a == 64 && b == 128 {
					continue // a curve one point short
				}
				row++
				pts = append(pts, pt2[[2]int]{key: k, a: float64(a), b: float64(b) + float64(a%3), y: (5 + float64(b)*float64(a)/1e3) * (1 + rng.Float64()/10), row: row})
			}
		}
	}
	rng.Shuffle(len(pts), func(i, j int) { pts[i], pts[j] = pts[j], pts[i] })
	got, gotLOO, err := buildSeries2(pts)
	require.NoError(t, err)
	want, wantLOO, err := mapSeries2(pts)
	require.NoError(t, err)
	require.Equal(t, want.keys, got.keys)
	require.Len(t, gotLOO, len(wantLOO))
	for i := range wantLOO {
		require.Equal(t, math.Float64bits(wantLOO[i]), math.Float64bits(gotLOO[i]), "LOO error %d", i)
	}
	for gi, wg := range want.grids {
		gg := got.grids[gi]
		require.Equal(t, wg.A(), gg.A(), "key %v", want.keys[gi])
		for ci := range wg.A() {
			wc, gc := wg.Curve(ci), gg.Curve(ci)
			require.Equal(t, wc.Points(), gc.Points(), "key %v curve %d", want.keys[gi], ci)
			for _, x := range wc.Points() {
				for _, q := range []float64{x, x * 1.3, x / 1.7} {
					require.Equal(t, wc.At(q), gc.At(q), "key %v curve %d at %g", want.keys[gi], ci, q)
				}
			}
		}
		for _, a := range []float64{1, 3, 48, 300} {
			for _, b := range []float64{3, 500, 100000} {
				require.Equal(t, wg.At(a, b), gg.At(a, b), "key %v at (%g, %g)", want.keys[gi], a, b)
			}
		}
	}
	// b repeated within a curve: both refuse it, naming the same rows
	dup := append([]pt2[[2]int](nil), pts...)
	dup = append(dup, pt2[[2]int]{key: [2]int{2, 1}, a: 16, b: 1025, y: 7, row: row + 1}, pt2[[2]int]{key: [2]int{2, 1}, a: 16, b: 1025, y: 8, row: row + 2})
	_, _, gotErr := buildSeries2(dup)
	_, _, wantErr := mapSeries2(dup)
	require.Error(t, wantErr)
	require.EqualError(t, gotErr, wantErr.Error())
}
