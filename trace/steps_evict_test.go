package trace

import (
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
