package cli

import (
	"fmt"
	"strconv"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

// explainOpJSON is one op in `predict --explain --format json`.
type explainOpJSON struct {
	Layer    string  `json:"layer"`
	Name     string  `json:"name"`
	Category string  `json:"category"`
	Shape    string  `json:"shape"`
	Count    float64 `json:"count"` // occurrences per step
	Bytes    float64 `json:"bytes"`
	FLOPs    float64 `json:"flops"`
	TimeUs   float64 `json:"time_us"` // one occurrence
	TimeUsLo float64 `json:"time_us_lo"`
	TimeUsHi float64 `json:"time_us_hi"`
	LaunchUs float64 `json:"launch_us"` // host launch per occurrence (eager only)
	Source   string  `json:"source"`
}

type explainJSON struct {
	Scenario string          `json:"scenario"`
	Batch    int             `json:"batch"`
	Context  int             `json:"context"`
	StepMs   float64         `json:"step_ms"`
	Ops      []explainOpJSON `json:"ops"`
	Warnings []string        `json:"warnings"`
}

// runExplain prints every op of one layer of each kind at (batch,
// context): shape, bytes, FLOPs, time, interval and source.
func runExplain(s *streams, sc *scenarios.Scenario, sm *sim.Sim, batch, context int, format string) error {
	ops, err := sm.Explain(batch, context)
	if err != nil {
		return sc.KeyError(err)
	}
	p, err := sm.Step(batch, context)
	if err != nil {
		return sc.KeyError(err)
	}
	if err := checkPointFinite(p); err != nil {
		return inputErrf("%s: %w", sc.File, err)
	}
	warnings := append(append([]string{}, sc.Warnings...), sc.ContextWarnings(context)...)
	if w := fitWarning(p); w != "" {
		warnings = append(warnings, w)
	}
	if format == formatJSON {
		out := explainJSON{Scenario: sc.Name, Batch: batch, Context: context, StepMs: view.Round6(p.Step.Time.Ms()),
			Ops: []explainOpJSON{}, Warnings: warnings}
		for _, o := range ops {
			e := o.Estimate
			out.Ops = append(out.Ops, explainOpJSON{
				Layer: o.Layer, Name: o.Name, Category: o.Category.String(), Shape: o.Shape, Count: o.Count,
				Bytes: view.Round6(float64(e.Bytes)), FLOPs: view.Round6(float64(e.FLOPs)), TimeUs: view.Round6(e.Time.Us()), TimeUsLo: view.Round6(e.Lo.Us()),
				TimeUsHi: view.Round6(e.Hi.Us()), LaunchUs: view.Round6(o.Launch.Us()), Source: e.Source.Describe(),
			})
		}
		return writeJSON(s.Out, out)
	}
	full := format == formatCSV
	t := &report.Table{Columns: []report.Column{{Name: "layer"}, {Name: "op"}, {Name: "category"}, {Name: "count", Text: "%g"},
		{Name: "shape (per rank)"}, {Name: "bytes"}, {Name: "FLOPs"}, {Name: "time us", Text: "%.2f"},
		{Name: "interval us", Left: true}, {Name: "step share", Text: "%.1f%%"}, {Name: "source", Left: true}}}
	if full {
		t.Columns = []report.Column{{Name: "layer"}, {Name: "op"}, {Name: "category"}, {Name: "count"}, {Name: "shape"},
			{Name: "bytes"}, {Name: "flops"}, {Name: "time_us"}, {Name: "time_us_lo"}, {Name: "time_us_hi"},
			{Name: "launch_us"}, {Name: "source"}}
	}
	var sum unit.Seconds
	for _, o := range ops {
		e := o.Estimate
		per := e.Time + o.Launch
		sum += unit.Seconds(o.Count) * per
		if full {
			t.Add(o.Layer, o.Name, o.Category.String(), o.Count, o.Shape, view.Round6(float64(e.Bytes)), view.Round6(float64(e.FLOPs)),
				view.Round6(e.Time.Us()), view.Round6(e.Lo.Us()), view.Round6(e.Hi.Us()), view.Round6(o.Launch.Us()), e.Source.Describe())
			continue
		}
		iv := "-"
		if e.Lo != 0 || e.Hi != 0 {
			iv = fmt.Sprintf("%.2f-%.2f", e.Lo.Us(), e.Hi.Us())
		}
		share := 0.0
		if p.Step.Time > 0 {
			share = 100 * float64(unit.Seconds(o.Count)*per/p.Step.Time)
		}
		src := e.Source.Describe()
		if o.Launch > 0 {
			src += fmt.Sprintf(" + %.2fus launch", o.Launch.Us())
		}
		t.Add(o.Layer, o.Name, o.Category.String(), o.Count, o.Shape, e.Bytes.String(), flopsString(e.FLOPs),
			e.Time.Us(), iv, share, src)
	}
	if full {
		for _, w := range warnings {
			fmt.Fprintln(s.Err, "warning: "+w)
		}
		return t.Render(s.Out, report.CSV)
	}
	if err := view.WriteHeader(s.Out, sc, context); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.Out, "explain   batch %d: each op of one layer of each kind; count = occurrences per step, time = one occurrence\n\n", batch); err != nil {
		return err
	}
	if err := t.Render(s.Out, report.Text); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.Out, "\nstep %.3f ms = sum over ops of count x (time + launch) = %.3f ms (interval %s ms)\n",
		p.Step.Time.Ms(), sum.Ms(), view.Interval(p.Step)); err != nil {
		return err
	}
	for _, w := range warnings {
		if _, err := fmt.Fprintln(s.Out, "warning: "+w); err != nil {
			return err
		}
	}
	return nil
}

// flopsString formats an operation count with a decimal prefix: "3.52G".
func flopsString(f unit.FLOPs) string {
	v := float64(f)
	switch {
	case v == 0:
		return "0"
	case v >= 1e12:
		return strconv.FormatFloat(v/1e12, 'f', 2, 64) + "T"
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 2, 64) + "G"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 2, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
