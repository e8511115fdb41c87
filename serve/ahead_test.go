package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScheduleAhead: with ScheduleAhead (and async scheduling) a request
// that reaches the engine while a step runs misses the step already built
// and joins the one after it: one whole step later than without; a
// request that reaches an idle engine is scheduled at once; without
// async scheduling nothing changes.
func TestScheduleAhead(t *testing.T) {
	step := linear{Fixed: 10e-3} // every step 10 ms
	cfg := point(VLLM, 2, 2, 100, 4)
	// the API server hands request 0 over at 5 ms (idle engine: step 0
	// runs 5-15 ms) and request 1 at 10 ms, while step 0 runs
	cfg.FrontEnd = FrontEnd{PerRequest: 5e-3}
	off, _ := simRun(t, cfg, step)
	cfg.ScheduleAhead = true
	on, _ := simRun(t, cfg, step)
	within(t, off.reqs[0].ttft, 15e-3, 1e-9, "request 0 off: prefilled in step 0")
	within(t, on.reqs[0].ttft, 15e-3, 1e-9, "request 0 on: an idle engine schedules at once")
	within(t, off.reqs[1].ttft, 25e-3, 1e-9, "request 1 off: joins step 1 (15-25 ms)")
	within(t, on.reqs[1].ttft, 35e-3, 1e-9, "request 1 on: step 1 was built at 5 ms; it joins step 2 (25-35 ms)")

	cfg.AsyncScheduling = false
	sync, _ := simRun(t, cfg, step)
	within(t, sync.reqs[1].ttft, off.reqs[1].ttft, 1e-9, "without async scheduling: no lag")

	// a closed loop at C = 1 always meets an idle engine
	one := point(SGLang, 1, 4, 100, 4)
	a, _ := simRun(t, one, step)
	one.ScheduleAhead = true
	b, _ := simRun(t, one, step)
	for i := range a.reqs {
		assert.Equal(t, a.reqs[i].ttft, b.reqs[i].ttft, "C = 1, request %d", i)
	}
}
