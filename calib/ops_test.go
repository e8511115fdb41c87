package calib

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpRegistry: each op has one row, a build function, and a series
// layout made of its own columns.
func TestOpRegistry(t *testing.T) {
	seen := map[Op]bool{}
	for _, d := range ops {
		t.Run(string(d.op), func(t *testing.T) {
			assert.False(t, seen[d.op], "one row per op")
			seen[d.op] = true
			require.NotNil(t, d.build)
			require.NotNil(t, d.spec.keys)
			cols := slices.Concat(d.spec.ints, d.spec.nonneg, d.spec.reals)
			for _, c := range slices.Concat(d.series.keys, d.series.axes) {
				assert.Contains(t, cols, c, "series column of %s", d.op)
			}
			assert.NotEmpty(t, d.series.axes)
			got, ok := opFor(string(d.op))
			require.True(t, ok)
			assert.Equal(t, d.op, got.op)
		})
	}
	_, ok := opFor("conv")
	assert.False(t, ok)
	assert.Equal(t, "gemm, moe, mla, gqa, prefill, elementwise, unmapped, allreduce, allgather, reducescatter, alltoall, ep, gdn", opNames(),
		"the list unknown-op errors print")
}
