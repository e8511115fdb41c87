package trace

import (
	"fmt"
	"strings"
)

// Graph launches delimit steps when a trace has no step annotations: each
// cudaGraphLaunch (hipGraphLaunch) is one step, and the kernels replayed
// from it, which carry the launch's correlation id, belong to it. Label
// "graph launch N". With step annotations, a graph launch only routes its
// kernels to the step whose annotation encloses it (corrGraph).

// isGraphLaunch reports whether a runtime call launches a CUDA/HIP graph.
func isGraphLaunch(name string) bool { return strings.Contains(name, "GraphLaunch") }

// addGraphStep opens the step of a graph launch (trace without annotations).
func (a *analyzer) addGraphStep(ev *Event) {
	id := len(a.steps)
	a.steps = append(a.steps, &stepAcc{meta: stepMeta{label: fmt.Sprintf("graph launch %d", id), pid: ev.Pid, tid: ev.Tid, ts: ev.TS, end: ev.End()}})
	a.graphStep[ev.Correlation] = launchAt{id, ev.TS}
}
