package gpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAlign(t *testing.T) {
	r := &Routing{Experts: 4, TopK: [][]int{{2, 0}, {2, 3}, {0, 2}}}
	a, err := Align(r, 4)
	require.NoError(t, err)
	// expert 0: ids 0*2+1=1, 2*2+0=4; expert 2: 0, 2, 5; expert 3: 3; sentinel 6.
	assert.Equal(t, []int32{1, 4, 6, 6, 0, 2, 5, 6, 3, 6, 6, 6}, a.SortedIDs)
	assert.Equal(t, []int32{0, 2, 3}, a.ExpertIDs)
	assert.Equal(t, 3, a.Touched)
	assert.Equal(t, 3, a.Blocks())

	a, err = Align(r, 2)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 4, 0, 2, 5, 6, 3, 6}, a.SortedIDs)
	assert.Equal(t, []int32{0, 2, 2, 3}, a.ExpertIDs)

	// Experts [2,4) on this rank: expert 2 (ids 0, 2, 5) and 3 (id 3), numbered 0 and 1.
	a, err = alignLocal(r, 2, 2, 2)
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 2, 5, 6, 3, 6}, a.SortedIDs)
	assert.Equal(t, []int32{0, 0, 1}, a.ExpertIDs)
	assert.Equal(t, 2, a.Touched)
	_, err = alignLocal(r, 2, 3, 2)
	assert.ErrorContains(t, err, "local experts [3,5) outside [0,4)")

	_, err = Align(&Routing{Experts: 2, TopK: [][]int{{0}, {5}}}, 4)
	assert.ErrorContains(t, err, "token 1 slot 0: expert 5 out of range [0,2)")
	_, err = Align(r, 0)
	assert.ErrorContains(t, err, "block 0")
}

func TestRouting(t *testing.T) {
	for _, name := range []string{"uniform", "powerlaw"} {
		t.Run(name, func(t *testing.T) {
			draw := func(seed uint64) *Routing {
				var r *Routing
				var err error
				if name == "uniform" {
					r, err = routeUniform(seed, 2000, 64, 8)
				} else {
					r, err = routePowerLaw(seed, 2000, 64, 8, 1.2)
				}
				require.NoError(t, err)
				return r
			}
			r := draw(7)
			assert.Equal(t, r, draw(7), "same seed, same routing")
			assert.NotEqual(t, r, draw(8))
			count := make([]int, 64)
			for _, sel := range r.TopK {
				require.Len(t, sel, 8)
				seen := map[int]bool{}
				for _, e := range sel {
					assert.False(t, seen[e], "expert %d twice", e)
					seen[e] = true
					count[e]++
				}
			}
			lo, hi := count[0], count[0]
			for _, c := range count {
				lo, hi = min(lo, c), max(hi, c)
			}
			if name == "uniform" {
				assert.Less(t, float64(hi)/float64(lo), 1.6, "uniform counts %v", count)
			} else {
				assert.Greater(t, float64(hi)/float64(lo), 5.0, "power-law counts %v", count)
			}
		})
	}
	_, err := routeUniform(1, 4, 8, 9)
	assert.ErrorContains(t, err, "top-9")
	_, err = routePowerLaw(1, 4, 8, 2, 0)
	assert.ErrorContains(t, err, "alpha 0")
}
