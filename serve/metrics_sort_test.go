package serve

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSortWeighted: the radix sort orders samples as the comparison sort
// does (values equal, position by position) on sets of every size around
// radixMin, with repeats, negatives, zeros of both signs, tiny and huge
// values, and weightedStats gives the same Stats either way. The last size
// sorts with a larger scratch buffer than it needs, left by the one
// before in weightedPool.
func TestSortWeighted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	for _, n := range []int{0, 1, 2, radixMin - 1, radixMin, radixMin + 1, 1000, 20000, 300} {
		for trial := range 4 {
			w := make([]weighted, n)
			for i := range w {
				var v float64
				switch rng.IntN(8) {
				case 0:
					v = 0
				case 1:
					v = math.Copysign(0, -1)
				case 2:
					v = -rng.Float64() * 10
				case 3:
					v = float64(rng.IntN(5)) * 0.01 // repeats
				case 4:
					v = rng.Float64() * 1e-300
				case 5:
					v = rng.Float64() * 1e300
				default:
					v = rng.Float64() * 0.05
				}
				if trial == 3 {
					v = math.Abs(v) * 0.02 // ITL-like: non-negative, one exponent range
				}
				w[i] = weighted{v: v, n: 1 + rng.IntN(4)}
			}
			want := slices.Clone(w)
			slices.SortFunc(want, byValue)
			got := slices.Clone(w)
			sortWeighted(got)
			require.Len(t, got, n)
			for i := range got {
				require.True(t, got[i].v == want[i].v, "n %d trial %d position %d: %g, want %g", n, trial, i, got[i].v, want[i].v)
			}
			var sumGot, sumWant int
			for i := range got {
				sumGot += got[i].n * int(math.Float64bits(got[i].v)%7+1)
				sumWant += want[i].n * int(math.Float64bits(want[i].v)%7+1)
			}
			require.Equal(t, sumWant, sumGot, "n %d trial %d: samples lost or changed", n, trial)
			byCmp := weightedStatsBy(slices.Clone(w), sortedRanks(func(w []weighted) { slices.SortFunc(w, byValue) }))
			require.Equal(t, byCmp, weightedStatsBy(slices.Clone(w), sortedRanks(sortWeighted)), "n %d trial %d", n, trial)
			require.Equal(t, byCmp, weightedStats(slices.Clone(w)), "n %d trial %d: selection", n, trial)
		}
	}
}

// TestSelectRanks: the selection finds the value at every asked rank of
// the expanded list as a sorted list gives it, on shapes that defeat a
// naive quickselect (all equal, sorted either way, organ pipe, two values,
// a sawtooth) and random ones, with weights; and weightedStats by
// selection equals weightedStats by sorting on each.
func TestSelectRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	shapes := map[string]func(i, n int) float64{
		"equal":      func(i, n int) float64 { return 0.02 },
		"ascending":  func(i, n int) float64 { return float64(i) * 1e-4 },
		"descending": func(i, n int) float64 { return float64(n-i) * 1e-4 },
		"organ pipe": func(i, n int) float64 { return float64(min(i, n-i)) * 1e-4 },
		"two values": func(i, n int) float64 { return 0.01 + 0.01*float64(i%2) },
		"sawtooth":   func(i, n int) float64 { return float64(i%17) * 1e-3 },
		"random":     func(i, n int) float64 { return rng.Float64() * 0.05 },
		"few random": func(i, n int) float64 { return float64(rng.IntN(7)) * 0.004 },
	}
	for name, f := range shapes {
		for _, n := range []int{1, 3, 64, 65, 300, 5000, 100000} {
			w := make([]weighted, n)
			total := 0
			for i := range w {
				w[i] = weighted{v: f(i, n), n: 1 + rng.IntN(3)}
				total += w[i].n
			}
			sorted := slices.Clone(w)
			slices.SortFunc(sorted, byValue)
			var ks []int
			if total <= 400 {
				for k := range total {
					ks = append(ks, k)
				}
			} else {
				for range 40 {
					ks = append(ks, rng.IntN(total))
				}
				ks = append(ks, 0, total-1)
				slices.Sort(ks)
				ks = slices.Compact(ks)
			}
			want := make([]float64, len(ks))
			ranksOfSorted(sorted, ks, 0, want)
			got := make([]float64, len(ks))
			selectRanks(slices.Clone(w), ks, got)
			require.Equal(t, want, got, "%s n %d", name, n)
			byCmp := weightedStatsBy(slices.Clone(w), sortedRanks(func(w []weighted) { slices.SortFunc(w, byValue) }))
			require.Equal(t, byCmp, weightedStats(slices.Clone(w)), "%s n %d", name, n)
		}
	}
}
