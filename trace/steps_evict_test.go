package trace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Kernels whose launch never comes (a trace without runtime events) wait as
// pending and are routed at the end; gap steps take them in reading order,
// so the steps do not depend on map order. Before the fix the same trace
// gave one step or two from run to run.
func TestGapStepsPendingKernelsDeterministic(t *testing.T) {
	var evs []Event
	for i := range 20 {
		evs = append(evs, kern("gemm_kernel", 7, float64(1000+100*i), 50, int64(i+1)))
	}
	for range 50 {
		res := run(t, Options{}, append([]Event(nil), evs...)...)
		require.Len(t, res.Steps, 1)
		assert.Equal(t, 20, res.Steps[0].KernelEvents)
		assert.InDelta(t, 1950, res.Steps[0].Wall.Us(), tol)
		assert.InDelta(t, 1000, res.Steps[0].Busy.Us(), tol)
	}
}

// A trace of more distinct kernel names than MaxKernelNames keeps that many
// records: later names count together in one unclassified record, with a
// warning, and every event's time is still counted.
func TestKernelNamesCapped(t *testing.T) {
	var evs []Event
	n := MaxKernelNames + 10
	for i := range n {
		evs = append(evs, kern(fmt.Sprintf("gemm_kernel_%d", i), 7, float64(1000+10*i), 5, int64(i+1)))
	}
	res := run(t, Options{}, evs...)
	assert.EqualValues(t, n, res.KernelCount)
	assert.Len(t, res.Kernels, MaxKernelNames+1, "the names kept, and one record for the rest")
	folded := 0
	for _, k := range res.Kernels {
		if k.Name == foldedKernelName {
			folded += int(k.Count)
			assert.Equal(t, "unclassified", k.Class.Op)
		}
	}
	assert.Equal(t, 10, folded, "the names past the cap, counted together")
	require.NotEmpty(t, res.Warnings)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "distinct kernel names")
}
