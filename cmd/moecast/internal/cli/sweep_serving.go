package cli

import (
	"fmt"
	"strings"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
)

// `moecast sweep --serving`: each combination runs the serving simulation
// of its scenario variant, as `moecast simulate` runs the scenario
// (simulateScenario), and every point of every combination is a row.
// Keys of the serving workload and engine (workload.concurrency,
// workload.request_rate, workload.input_tokens, runtime.engine,
// runtime.max_num_batched_tokens, ...) are swept as any other key.

func computeServingSweep(in sweepInput) (*view.ServingSwept, error) {
	axes, src, base, workers, progress := in.Axes, in.Source, in.Base, in.Workers, in.Progress
	apply := func(set []plan.Setting) (*view.Simulation, error) {
		over := make([]scenarios.Override, 0, len(set))
		for _, st := range set {
			over = append(over, scenarios.Override{Key: st.Name, Value: st.Value})
		}
		sc, err := src.Parse(over)
		if err != nil {
			return nil, err
		}
		sn, err := simulateScenario(simulateInput{Scenario: sc})
		if err != nil {
			return nil, err
		}
		if len(sn.Points) == 0 {
			return nil, fmt.Errorf("%s: no serving point (workload.concurrency or workload.request_rate)", sc.File)
		}
		return sn, nil
	}
	total := 1
	for _, a := range axes {
		if total *= max(len(a.Values), 1); total > plan.MaxSweepPoints {
			break // plan.Sweep refuses it
		}
	}
	prog := startProgressLine(progress, func(done int64) string {
		return fmt.Sprintf("sweep --serving: %d/%d combinations", done, total)
	})
	counted := func(set []plan.Setting) (*view.Simulation, error) {
		defer prog.done.Add(1)
		return apply(set)
	}
	res, err := plan.Sweep(axes, counted, workers)
	prog.Stop()
	if err != nil {
		return nil, err // *plan.InputError
	}
	if len(res.Points) == 0 {
		return nil, inputErrf("sweep --serving: every one of the %d combinations was skipped: %s", len(res.Skipped), reasonsLine(res.Reasons))
	}
	ss := &view.ServingSwept{Base: base, Result: res}
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			ss.Warnings = append(ss.Warnings, w)
		}
	}
	for _, p := range res.Points {
		sn := p.Value
		for _, w := range sn.Scenario.Warnings {
			add(w)
		}
		for _, w := range sn.Warnings[len(sn.Scenario.Warnings):] { // the points' own: name the combination
			add(setString(res.Settings(p.Index)) + ": " + w)
		}
	}
	return ss, nil
}

// setString is "key=value key=value", or "(base)" for no settings.
func setString(set []plan.Setting) string {
	if len(set) == 0 {
		return "(base)"
	}
	parts := make([]string, len(set))
	for i, st := range set {
		parts[i] = st.Name + "=" + st.Value
	}
	return strings.Join(parts, " ")
}

// servingOutput is what a serving sweep writes (html: --html, "" for none).
func servingOutput(ss *view.ServingSwept, html string) output {
	return output{html: html, views: ss.Views()}
}
