package view

import (
	"fmt"
	"math"
	"strings"

	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/validate"
)

// ValidateTracePage is `validate trace --html`'s report: for each step
// the text output shows in full (all up to four, else each rank's step of
// median error), measured against predicted per category as grouped bars
// and the per-op table; then every step's totals.
func ValidateTracePage(sc *scenarios.Scenario, rep *validate.Report) *report.Page {
	pg := &report.Page{Title: "moecast validate trace: " + sc.Name, Header: scenarioHeader(sc), Warnings: rep.Warnings}
	pg.Header = append(pg.Header,
		report.Field{Label: "traces", Value: strings.Join(rep.Files, ", ")},
		report.Field{Label: "summary", Value: fmt.Sprintf("%d steps, median error %+.1f%%, worst category %s (%.3f ms missed in all)",
			len(rep.Steps), rep.MedianErrorPct, rep.WorstCategory, rep.WorstMiss.Ms())})
	for _, i := range detailSteps(rep) {
		st := &rep.Steps[i]
		c := &report.GroupedBars{Title: fmt.Sprintf("Rank %d, step %d: measured and predicted", st.Rank, st.Index),
			X: report.Axis{Label: "category"}, Y: report.Axis{Label: "time", Unit: "ms"}}
		meas, pred := report.Stack{Name: "measured"}, report.Stack{Name: "predicted"}
		for cat, cc := range st.Categories {
			if cc.Measured == 0 && cc.Predicted == 0 {
				continue
			}
			c.Labels = append(c.Labels, validateCatName(cat))
			meas.Values, pred.Values = append(meas.Values, math.Max(0, cc.Measured.Ms())), append(pred.Values, math.Max(0, cc.Predicted.Ms()))
		}
		c.Bars = []report.Stack{meas, pred}
		ops := &report.Table{Columns: []report.Column{{Name: "op"}, {Name: "category"}, {Name: "count"}, {Name: "predicted count", Text: "%g"},
			{Name: "measured us", Text: "%.2f"}, {Name: "predicted us", Text: "%.2f"}, {Name: "pred-meas ms", Text: "%+.3f"}, {Name: "source"}}}
		for _, o := range st.Ops {
			ops.Add(o.Op, o.Category.String(), o.Count, math.Round(o.PredictedCount*100)/100, o.Measured.Us(), o.Predicted.Us(),
				(o.PredictedTotal - o.MeasuredTotal).Ms(), o.Source)
		}
		sec := report.Section{Title: fmt.Sprintf("Rank %d, step %d %q: batch %d, context %d", st.Rank, st.Index, st.Label, st.Batch, st.Context),
			Text: fmt.Sprintf("%s. Measured %.3f ms of GPU busy time (wall %.3f, idle %.3f), predicted %.3f ms: error %+.1f%%. Bars: kernel time per category (busy).",
				st.File, st.Measured.Ms(), st.Wall.Ms(), st.Idle.Ms(), st.Predicted.Ms(), st.ErrorPct()),
			Chart:  c,
			Tables: []report.Titled{{Caption: "Ops, largest absolute miss first (count: kernels per step; time: mean per occurrence)", Table: ops}}}
		if len(st.LeftOut) > 0 {
			t := &report.Table{Columns: []report.Column{{Name: "kernel"}, {Name: "category"}, {Name: "op"}, {Name: "count"}, {Name: "total ms", Text: "%.3f"}}}
			for _, k := range st.LeftOut {
				t.Add(k.Name, k.Category.String(), k.Op, k.Count, k.Total.Ms())
			}
			sec.Tables = append(sec.Tables, report.Titled{Caption: "Left out of the prediction (kernels mapped to no op)", Table: t})
		}
		if len(st.Missing) > 0 {
			t := &report.Table{Columns: []report.Column{{Name: "op"}, {Name: "category"}, {Name: "predicted count", Text: "%g"},
				{Name: "predicted us", Text: "%.2f"}, {Name: "predicted ms", Text: "%.3f"}, {Name: "source"}}}
			for _, o := range st.Missing {
				t.Add(o.Op, o.Category.String(), o.PredictedCount, o.Predicted.Us(), o.PredictedTotal.Ms(), o.Source)
			}
			sec.Tables = append(sec.Tables, report.Titled{Caption: "Predicted but not in the trace", Table: t})
		}
		pg.Sections = append(pg.Sections, sec)
	}
	all := &report.Table{Columns: []report.Column{{Name: "file"}, {Name: "rank"}, {Name: "step"}, {Name: "batch"}, {Name: "context"},
		{Name: "measured ms", Text: "%.3f"}, {Name: "predicted ms", Text: "%.3f"}, {Name: "error", Text: "%+.1f%%"}}}
	for i := range rep.Steps {
		st := &rep.Steps[i]
		all.Add(st.File, st.Rank, st.Index, st.Batch, st.Context, st.Measured.Ms(), st.Predicted.Ms(), st.ErrorPct())
	}
	pg.Sections = append(pg.Sections, report.Section{Title: "All steps", Tables: []report.Titled{{Table: all}}})
	return pg
}

// ValidateBenchPage is `validate bench --html`'s report: for each result,
// measured against predicted as grouped bars, one chart per latency
// metric (its mean, median, p90, p99) and per throughput unit, and the
// table of every figure with its error.
func ValidateBenchPage(scenario string, cases []BenchCase, warnings []string) *report.Page {
	pg := &report.Page{Title: "moecast validate bench: " + scenario, Warnings: warnings}
	if sc, err := scenarios.Open(scenario); err == nil {
		pg.Header = scenarioHeader(sc)
	} else {
		pg.Header = []report.Field{{Label: "scenario", Value: scenario}}
	}
	for _, c := range cases {
		load := fmt.Sprintf("concurrency %d", c.Point.At.Concurrency)
		if c.Point.At.RequestRate > 0 {
			load = fmt.Sprintf("request rate %g/s", c.Point.At.RequestRate)
		}
		w := c.Point.Config.Workload
		title := fmt.Sprintf("%s (%s): %s, %d requests, %d in / %d out tokens", BenchName(c.Result), c.Result.Family, load, w.Requests, w.InputTokens, w.OutputTokens)
		if c.Point.Unservable != "" {
			pg.Sections = append(pg.Sections, report.Section{Title: title, Text: "No prediction: " + c.Point.Unservable})
			continue
		}
		text := "Measured (the benchmark's file) against predicted (moecast simulate on the same workload); figures the file lacks, or the simulator has no number for, are left out of the bars."
		if worst, row, ok := validate.WorstMeanErrorPct(c.Rows); ok {
			text += fmt.Sprintf(" Worst mean or throughput: %s %+.1f%%.", RowName(row), worst)
		}
		// One chart per latency metric (its stats side by side) and one per
		// throughput unit: bars of one chart share a scale.
		var groups []string
		byGroup := map[string]*report.GroupedBars{}
		for _, r := range c.Rows {
			if math.IsNaN(r.Measured) || math.IsNaN(r.Predicted) || math.IsInf(r.Measured, 0) || math.IsInf(r.Predicted, 0) {
				continue
			}
			key, title, label := r.Unit, "Throughput ("+r.Unit+")", r.Metric
			if r.Stat != "" {
				key, title, label = r.Metric, strings.ToUpper(r.Metric)+" ("+r.Unit+")", r.Stat
			}
			g := byGroup[key]
			if g == nil {
				g = &report.GroupedBars{Title: "Measured and predicted " + title, X: report.Axis{Label: "figure"},
					Y: report.Axis{Label: strings.ToUpper(r.Metric), Unit: r.Unit}, Bars: []report.Stack{{Name: "measured"}, {Name: "predicted"}}}
				if r.Stat == "" {
					g.Y.Label = "throughput"
				}
				byGroup[key] = g
				groups = append(groups, key)
			}
			g.Labels = append(g.Labels, label)
			g.Bars[0].Values = append(g.Bars[0].Values, math.Max(0, r.Measured))
			g.Bars[1].Values = append(g.Bars[1].Values, math.Max(0, r.Predicted))
		}
		for i, k := range groups {
			sec := report.Section{Title: title + ": " + byGroup[k].Title[len("Measured and predicted "):], Chart: byGroup[k]}
			if i == 0 {
				sec.Text = text
			}
			pg.Sections = append(pg.Sections, sec)
		}
		if len(groups) == 0 {
			pg.Sections = append(pg.Sections, report.Section{Title: title, Text: text})
		}
		pg.Sections[len(pg.Sections)-1].Tables = []report.Titled{{Caption: "Every figure", Table: (*report.Table)(BenchTable([]BenchCase{c}, false))}}
	}
	return pg
}
