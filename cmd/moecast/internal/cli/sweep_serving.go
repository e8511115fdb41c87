package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/scenarios"
)

// `moecast sweep --serving`: each combination runs the serving simulation
// of its scenario variant, as `moecast simulate` runs the scenario
// (simulateScenario), and every point of every combination is a row.
// Keys of the serving workload and engine (workload.concurrency,
// workload.request_rate, workload.input_tokens, runtime.engine,
// runtime.max_num_batched_tokens, ...) are swept as any other key.

// servingSwept is what a serving sweep computed, ready to render.
type servingSwept struct {
	base     *scenarios.Scenario
	res      *plan.SweepResult[*simulation]
	warnings []string
}

func computeServingSweep(axes []plan.Axis, src *scenarios.Source, base *scenarios.Scenario, workers int, progress io.Writer) (*servingSwept, error) {
	apply := func(set []plan.Setting) (*simulation, error) {
		over := make([]scenarios.Override, 0, len(set))
		for _, st := range set {
			over = append(over, scenarios.Override{Key: st.Name, Value: st.Value})
		}
		sc, err := src.Parse(over)
		if err != nil {
			return nil, err
		}
		sn, err := simulateScenario(sc, nil)
		if err != nil {
			return nil, err
		}
		if len(sn.points) == 0 {
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
	counted := func(set []plan.Setting) (*simulation, error) {
		defer prog.done.Add(1)
		return apply(set)
	}
	res, err := plan.Sweep(axes, counted, workers)
	prog.Stop()
	if err != nil {
		return nil, inputErr(err)
	}
	if len(res.Points) == 0 {
		return nil, inputErrf("sweep --serving: every one of the %d combinations was skipped: %s", len(res.Skipped), reasonsLine(res.Reasons))
	}
	ss := &servingSwept{base: base, res: res}
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			ss.warnings = append(ss.warnings, w)
		}
	}
	for _, p := range res.Points {
		sn := p.Value
		for _, w := range sn.sc.Warnings {
			add(w)
		}
		for _, w := range sn.warnings[len(sn.sc.Warnings):] { // the points' own: name the combination
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

func (ss *servingSwept) setMap(i int) map[string]string {
	m := map[string]string{}
	for _, st := range ss.res.Settings(i) {
		m[st.Name] = st.Value
	}
	return m
}

func (ss *servingSwept) skipLines() []string { return skipLines(ss.res.Reasons) }

// servingSweepPointJSON is one element of "points": the settings, the
// engine the point ran, then simulate's point fields.
type servingSweepPointJSON struct {
	Set          map[string]string `json:"set"`
	Engine       string            `json:"engine"`
	EngineConfig engineJSON        `json:"engine_config"`
	simPointJSON
}

type servingSweepJSON struct {
	Scenario string                  `json:"scenario"`
	Axes     []sweepAxisJSON         `json:"axes"`
	Points   []servingSweepPointJSON `json:"points"`
	Skipped  []sweepSkipJSON         `json:"skipped"`
	Reasons  []reasonJSON            `json:"reasons"`
	Warnings []string                `json:"warnings"`
}

func (ss *servingSwept) json() servingSweepJSON {
	out := servingSweepJSON{Scenario: ss.base.Name, Axes: []sweepAxisJSON{}, Points: []servingSweepPointJSON{}, Skipped: []sweepSkipJSON{},
		Reasons: []reasonJSON{}, Warnings: append([]string{}, ss.warnings...)}
	for _, a := range ss.res.Axes {
		out.Axes = append(out.Axes, sweepAxisJSON{Key: a.Name, Values: a.Values})
	}
	for _, p := range ss.res.Points {
		set := ss.setMap(p.Index)
		sj := p.Value.json()
		for i, pj := range sj.Points {
			out.Points = append(out.Points, servingSweepPointJSON{Set: set, Engine: sj.Engine,
				EngineConfig: engineOf(p.Value.points[i].cfg), simPointJSON: pj})
		}
	}
	for _, k := range ss.res.Skipped {
		out.Skipped = append(out.Skipped, sweepSkipJSON{Set: ss.setMap(k.Index), Reason: k.Reason})
	}
	for _, r := range ss.res.Reasons {
		out.Reasons = append(out.Reasons, reasonJSON{Reason: r.Reason, Count: r.Count})
	}
	return out
}

// table is one row per point of every combination: the swept keys, the
// load (concurrency and request rate: CSV has both, one of them empty;
// text those some point has), then simulate's columns (text: those of
// simulate's text table; full: its CSV columns).
func (ss *servingSwept) table(full bool) *table {
	t := &table{}
	for _, a := range ss.res.Axes {
		t.Columns = append(t.Columns, column{Name: a.Name})
	}
	closed, open := full, full
	for _, p := range ss.res.Points {
		for _, pt := range p.Value.points {
			closed, open = closed || pt.at.Concurrency > 0, open || pt.at.Concurrency == 0
		}
	}
	switch {
	case full:
		t.Columns = append(t.Columns, column{Name: "concurrency"}, column{Name: "request_rate"})
	case closed && open:
		t.Columns = append(t.Columns, column{Name: "conc"}, column{Name: "rate/s"})
	case closed:
		t.Columns = append(t.Columns, column{Name: "conc"})
	default:
		t.Columns = append(t.Columns, column{Name: "rate/s"})
	}
	for n, p := range ss.res.Points {
		st := p.Value.table(full)
		if n == 0 {
			t.Columns = append(t.Columns, st.Columns[1:]...)
		}
		set := ss.res.Settings(p.Index)
		for i, r := range st.Rows {
			row := make([]any, 0, len(t.Columns))
			for _, s := range set {
				row = append(row, s.Value)
			}
			var conc, rate any
			if at := p.Value.points[i].at; at.Concurrency > 0 {
				conc = at.Concurrency
			} else {
				rate = r6(at.RequestRate)
			}
			if closed {
				row = append(row, conc)
			}
			if open {
				row = append(row, rate)
			}
			t.add(append(row, r[1:]...)...)
		}
	}
	return t
}

// text writes the header, the table, the skip reasons and the warnings.
func (ss *servingSwept) text(w io.Writer) error {
	return sweepText(w, ss.base, ss.res.Axes, len(ss.res.Points), len(ss.res.Skipped), "; serving simulation (simulate) at each", ss.table(false), ss.skipLines(), ss.warnings)
}

// servingOutput is what a serving sweep writes (html: --html, "" for none).
func servingOutput(ss *servingSwept, html string) output {
	return output{html: html, page: ss.page, json: func() any { return ss.json() },
		csv: func() *table { return ss.table(true) }, text: ss.text, warnings: ss.warnings,
		notes: ss.skipLines()}
}
