package trace

// Idle gaps delimit steps when a trace has neither step annotations nor
// graph launches: a step ends where the GPU has been idle for longer than
// Options.Gap (DefaultGap). Label "gap step N".

import "fmt"

// addToGap puts a kernel in the current gap-delimited step, opening a new
// one (and closing the current one) after an idle gap longer than
// Options.Gap. Gap steps count only when the trace has neither step
// annotations nor graph launches; kernels arrive roughly in time order, so
// only the last gap step is open.
func (a *analyzer) addToGap(k kspan) {
	if len(a.gaps) == 0 || k.ts > a.gapEnd.Add(a.opts.Gap) {
		a.closeLastGap()
		a.gaps = append(a.gaps, &stepAcc{meta: stepMeta{label: fmt.Sprintf("gap step %d", len(a.gaps))}})
		a.gapEnd = k.end
	}
	a.gapEnd = max(a.gapEnd, k.end)
	g := a.gaps[len(a.gaps)-1]
	if !g.hasK {
		g.hasK, g.kmin, g.kmax = true, k.ts, k.end
	}
	g.kmin, g.kmax = min(g.kmin, k.ts), max(g.kmax, k.end)
	g.res.KernelEvents++
	g.addKernel(a.kernelList[k.kid], k.cat, k.dur)
	g.spans = append(g.spans, k)
}

func (a *analyzer) closeLastGap() {
	if n := len(a.gaps); n > 0 && !a.gaps[n-1].done {
		g := a.gaps[n-1]
		g.done = true
		breakdown(g.spans, &g.res)
		g.spans = nil
	}
}
