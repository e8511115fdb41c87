package plan

import (
	"cmp"
	"slices"
)

// Dominates reports whether (x1, y1) dominates (x2, y2) with both axes
// maximised: at least as good on both and better on one.
func Dominates(x1, y1, x2, y2 float64) bool {
	return x1 >= x2 && y1 >= y2 && (x1 > x2 || y1 > y2)
}

// Front finds the non-dominated points among idx (indices into xs and ys,
// both maximised; the values must not be NaN). It returns them ordered by x
// descending (y ascending, then index), and, in by, for each dominated
// index a front index that dominates it. Points with equal values are all
// on the front (neither dominates the other). O(n log n).
func Front(xs, ys []float64, idx []int) (front []int, by map[int]int) {
	order := slices.Clone(idx)
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(xs[b], xs[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(ys[b], ys[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	by = map[int]int{}
	best := -1 // highest y among points of strictly greater x (largest x among ties)
	for i := 0; i < len(order); {
		// One group of equal x, y descending; its first has the group's max y.
		j := i
		for j < len(order) && xs[order[j]] == xs[order[i]] {
			j++
		}
		head := order[i]
		for _, p := range order[i:j] {
			switch {
			case best >= 0 && ys[best] >= ys[p]:
				by[p] = best
			case ys[head] > ys[p]:
				by[p] = head
			default:
				front = append(front, p)
			}
		}
		if best < 0 || ys[head] > ys[best] {
			best = head
		}
		i = j
	}
	return front, by
}
