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
			byCmp := weightedStatsBy(slices.Clone(w), func(w []weighted) { slices.SortFunc(w, byValue) })
			require.Equal(t, byCmp, weightedStats(slices.Clone(w)), "n %d trial %d", n, trial)
		}
	}
}
