package view

import (
	"fmt"
	"strings"

	"github.com/moecast/moecast/report"
)

// Page is `sweep --serving`'s HTML report: mean TTFT and mean TPOT
// against the load, and the latency-throughput curve, one line per
// combination of the swept keys other than the load; every point's
// figures under them.
func (ss *ServingSwept) Page() *report.Page {
	pg := &report.Page{Title: "moecast sweep --serving: " + ss.Base.Name, Warnings: ss.Warnings,
		Header: sweepHeader(ss.Base, ss.Result.Axes, fmt.Sprintf("%d run, %d skipped; the serving simulation (simulate) at each", len(ss.Result.Points), len(ss.Result.Skipped)))}
	closed := ss.Result.Points[0].Value.Points[0].At.Concurrency > 0
	load := report.Axis{Label: "concurrency", Unit: "requests", Log: true}
	if !closed {
		load = report.Axis{Label: "request rate", Unit: "requests/s", Log: true}
	}
	ttft := &report.LineChart{Title: "Mean time to first token", X: load, Y: report.Axis{Label: "mean TTFT", Unit: "ms"}}
	tpot := &report.LineChart{Title: "Mean time per output token", X: load, Y: report.Axis{Label: "mean TPOT", Unit: "ms"}}
	curve := &report.LineChart{Title: "Latency-throughput", X: report.Axis{Label: "speed per user", Unit: "tokens/s"},
		Y: report.Axis{Label: "output throughput", Unit: "tokens/s"}}
	var order []string
	series := map[string]*[3]report.Series{}
	for _, p := range ss.Result.Points {
		var parts []string
		for _, st := range ss.Result.Settings(p.Index) {
			if st.Name != "workload.concurrency" && st.Name != "workload.request_rate" {
				parts = append(parts, st.Name+"="+st.Value)
			}
		}
		name := strings.Join(parts, " ")
		if name == "" {
			name = "all"
		}
		sr := series[name]
		if sr == nil {
			sr = &[3]report.Series{{Name: name}, {Name: name}, {Name: name}}
			series[name] = sr
			order = append(order, name)
		}
		for i := range p.Value.Points {
			pt := &p.Value.Points[i]
			if !latencyOK(pt) || (pt.At.Concurrency > 0) != closed {
				continue
			}
			x, t1, t2 := loadValue(pt), pt.Result.TTFT.Mean.Ms(), pt.Result.TPOT.Mean.Ms()
			if !allFinite(x, t1, t2) || !(x > 0) {
				continue
			}
			sr[0].X, sr[0].Y = append(sr[0].X, x), append(sr[0].Y, t1)
			sr[1].X, sr[1].Y = append(sr[1].X, x), append(sr[1].Y, t2)
			if pt.Result.TPOT.Mean > 0 && allFinite(pt.Result.OutputThroughput) {
				sr[2].X, sr[2].Y = append(sr[2].X, 1/float64(pt.Result.TPOT.Mean)), append(sr[2].Y, pt.Result.OutputThroughput)
			}
		}
	}
	order, note := capLines(order)
	for _, n := range order {
		sr := series[n]
		ttft.Series = append(ttft.Series, sortedSeries(sr[0]))
		tpot.Series = append(tpot.Series, sortedSeries(sr[1]))
		curve.Series = append(curve.Series, sortedSeries(sr[2]))
	}
	rows, rowNote := capRows((*report.Table)(ss.Table(true)))
	pg.Sections = []report.Section{
		{Title: "Mean TTFT against " + load.Label, Text: strings.TrimSpace("One line per combination of the swept keys other than the load. " + note), Chart: ttft},
		{Title: "Mean TPOT against " + load.Label, Chart: tpot},
		{Title: "Throughput against speed per user", Text: "Output tokens/s of the deployment against tokens/s per user (1 / mean TPOT).", Chart: curve},
		{Title: "All points", Text: rowNote, Tables: []report.Titled{{Caption: "sweep --serving --format csv", Table: rows}}},
	}
	if len(ss.Result.Reasons) > 0 {
		t := &report.Table{Columns: []report.Column{{Name: "skipped"}, {Name: "reason"}}}
		for _, r := range ss.Result.Reasons {
			t.Add(r.Count, r.Reason)
		}
		pg.Sections = append(pg.Sections, report.Section{Title: "Skipped combinations", Tables: []report.Titled{{Table: t}}})
	}
	return pg
}
