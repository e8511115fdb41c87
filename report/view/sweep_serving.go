package view

import (
	"io"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
)

// ServingSwept is what a serving sweep computed, ready to render.
type ServingSwept struct {
	Base     *scenarios.Scenario
	Result   *plan.SweepResult[*Simulation]
	Warnings []string
}

func (ss *ServingSwept) setMap(i int) map[string]string {
	m := map[string]string{}
	for _, st := range ss.Result.Settings(i) {
		m[st.Name] = st.Value
	}
	return m
}

func (ss *ServingSwept) SkipLines() []string { return skipLines(ss.Result.Reasons) }

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

func (ss *ServingSwept) JSON() servingSweepJSON {
	out := servingSweepJSON{Scenario: ss.Base.Name, Axes: []sweepAxisJSON{}, Points: []servingSweepPointJSON{}, Skipped: []sweepSkipJSON{},
		Reasons: []reasonJSON{}, Warnings: append([]string{}, ss.Warnings...)}
	for _, a := range ss.Result.Axes {
		out.Axes = append(out.Axes, sweepAxisJSON{Key: a.Name, Values: a.Values})
	}
	for _, p := range ss.Result.Points {
		set := ss.setMap(p.Index)
		sj := p.Value.JSON()
		for i, pj := range sj.Points {
			out.Points = append(out.Points, servingSweepPointJSON{Set: set, Engine: sj.Engine,
				EngineConfig: engineOf(p.Value.Points[i].Config), simPointJSON: pj})
		}
	}
	for _, k := range ss.Result.Skipped {
		out.Skipped = append(out.Skipped, sweepSkipJSON{Set: ss.setMap(k.Index), Reason: k.Reason})
	}
	for _, r := range ss.Result.Reasons {
		out.Reasons = append(out.Reasons, reasonJSON{Reason: r.Reason, Count: r.Count})
	}
	return out
}

// Table is one row per point of every combination: the swept keys, the
// load (concurrency and request rate: CSV has both, one of them empty;
// text those some point has), then simulate's columns (text: those of
// simulate's text table; full: its CSV columns).
func (ss *ServingSwept) Table(full bool) *report.Table {
	t := &report.Table{}
	for _, a := range ss.Result.Axes {
		t.Columns = append(t.Columns, report.Column{Name: a.Name})
	}
	closed, open := full, full
	for _, p := range ss.Result.Points {
		for _, pt := range p.Value.Points {
			closed, open = closed || pt.At.Concurrency > 0, open || pt.At.Concurrency == 0
		}
	}
	switch {
	case full:
		t.Columns = append(t.Columns, report.Column{Name: "concurrency"}, report.Column{Name: "request_rate"})
	case closed && open:
		t.Columns = append(t.Columns, report.Column{Name: "conc"}, report.Column{Name: "rate/s"})
	case closed:
		t.Columns = append(t.Columns, report.Column{Name: "conc"})
	default:
		t.Columns = append(t.Columns, report.Column{Name: "rate/s"})
	}
	for n, p := range ss.Result.Points {
		st := p.Value.Table(full)
		if n == 0 {
			t.Columns = append(t.Columns, st.Columns[1:]...)
		}
		set := ss.Result.Settings(p.Index)
		for i, r := range st.Rows {
			row := make([]any, 0, len(t.Columns))
			for _, s := range set {
				row = append(row, s.Value)
			}
			var conc, rate any
			if at := p.Value.Points[i].At; at.Concurrency > 0 {
				conc = at.Concurrency
			} else {
				rate = Round6(at.RequestRate)
			}
			if closed {
				row = append(row, conc)
			}
			if open {
				row = append(row, rate)
			}
			t.Add(append(row, r[1:]...)...)
		}
	}
	return t
}

// Text writes the header, the table, the skip reasons and the warnings.
func (ss *ServingSwept) Text(w io.Writer) error {
	return sweepText(w, ss.Base, ss.Result.Axes, len(ss.Result.Points), len(ss.Result.Skipped), "; serving simulation (simulate) at each", ss.Table(false), ss.SkipLines(), ss.Warnings)
}
