package view

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

// Explained is `predict --explain`: every op of one layer of each kind at
// one batch and context, with its shape, bytes, FLOPs, time, interval and
// source, and the step they add up to.
type Explained struct {
	Scenario *scenarios.Scenario
	Batch    int
	Context  int
	Point    sim.Point // the step at Batch and Context
	Ops      []sim.Op
	Warnings []string
}

// ExplainOpJSON is one op in `predict --explain --format json`.
type ExplainOpJSON struct {
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

// ExplainJSON is `predict --explain --format json`.
type ExplainJSON struct {
	Scenario string          `json:"scenario"`
	Batch    int             `json:"batch"`
	Context  int             `json:"context"`
	StepMs   float64         `json:"step_ms"`
	Ops      []ExplainOpJSON `json:"ops"`
	// Reserve is the memory kept outside the KV cache per GPU, term by
	// term with its source (sim.Memory.ReserveParts).
	Reserve  []ReserveJSON `json:"reserve"`
	Warnings []string      `json:"warnings"`
}

// ReserveJSON is one term of the memory reserve.
type ReserveJSON struct {
	Name     string  `json:"name"`
	GBPerGPU float64 `json:"gb_per_gpu"`
	Source   string  `json:"source"`
}

// reserveJSON lists the reserve's terms of m.
func reserveJSON(m sim.Memory) []ReserveJSON {
	out := []ReserveJSON{}
	for _, r := range m.ReserveParts {
		out = append(out, ReserveJSON{Name: r.Name, GBPerGPU: Round6(r.Bytes.GB()), Source: r.Source})
	}
	return out
}

// reserveText is the reserve's line: each term with its source, and
// aiconfigurator's fixed figure beside a profiled one.
func reserveText(m sim.Memory, gpus int) string {
	parts := make([]string, 0, len(m.ReserveParts))
	for _, r := range m.ReserveParts {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", r.Name, r.Bytes, r.Source))
	}
	line := fmt.Sprintf("reserve   per GPU: %s = %s", m.Reserve, strings.Join(parts, " + "))
	if f := sim.FixedReserve(gpus); f != m.Reserve {
		line += fmt.Sprintf("; aiconfigurator's fixed figure would be %s", f)
	}
	return line
}

// JSON is the --format json document.
func (ex *Explained) JSON() ExplainJSON {
	p := ex.Point
	out := ExplainJSON{Scenario: ex.Scenario.Name, Batch: ex.Batch, Context: ex.Context, StepMs: Round6(p.Step.Time.Ms()),
		Ops: []ExplainOpJSON{}, Reserve: reserveJSON(p.Memory), Warnings: ex.Warnings}
	for _, o := range ex.Ops {
		e := o.Estimate
		out.Ops = append(out.Ops, ExplainOpJSON{
			Layer: o.Layer, Name: o.Name, Category: o.Category.String(), Shape: o.Shape, Count: o.Count,
			Bytes: Round6(float64(e.Bytes)), FLOPs: Round6(float64(e.FLOPs)), TimeUs: Round6(e.Time.Us()), TimeUsLo: Round6(e.Lo.Us()),
			TimeUsHi: Round6(e.Hi.Us()), LaunchUs: Round6(o.Launch.Us()), Source: e.Source.Describe(),
		})
	}
	return out
}

// Table is the ops' table: full (CSV) has one column per figure in base
// units; else the text columns, with the interval, the share of the step
// and the launch cost in the source.
func (ex *Explained) Table(full bool) *report.Table {
	p := ex.Point
	t := &report.Table{Columns: []report.Column{{Name: "layer"}, {Name: "op"}, {Name: "category"}, {Name: "count", Text: "%g"},
		{Name: "shape (per rank)"}, {Name: "bytes"}, {Name: "FLOPs"}, {Name: "time us", Text: "%.2f"},
		{Name: "interval us", Left: true}, {Name: "step share", Text: "%.1f%%"}, {Name: "source", Left: true}}}
	if full {
		t.Columns = []report.Column{{Name: "layer"}, {Name: "op"}, {Name: "category"}, {Name: "count"}, {Name: "shape"},
			{Name: "bytes"}, {Name: "flops"}, {Name: "time_us"}, {Name: "time_us_lo"}, {Name: "time_us_hi"},
			{Name: "launch_us"}, {Name: "source"}}
	}
	for _, o := range ex.Ops {
		e := o.Estimate
		per := e.Time + o.Launch
		if full {
			t.Add(o.Layer, o.Name, o.Category.String(), o.Count, o.Shape, Round6(float64(e.Bytes)), Round6(float64(e.FLOPs)),
				Round6(e.Time.Us()), Round6(e.Lo.Us()), Round6(e.Hi.Us()), Round6(o.Launch.Us()), e.Source.Describe())
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
	return t
}

// Text writes the scenario header, the ops' table, the sum of the ops
// against the step time, and the warnings.
func (ex *Explained) Text(w io.Writer) error {
	p := ex.Point
	var sum unit.Seconds
	for _, o := range ex.Ops {
		sum += unit.Seconds(o.Count) * (o.Estimate.Time + o.Launch)
	}
	if err := WriteHeader(w, ex.Scenario, ex.Context); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "explain   batch %d: each op of one layer of each kind; count = occurrences per step, time = one occurrence\n\n", ex.Batch); err != nil {
		return err
	}
	if err := ex.Table(false).Render(w, report.Text); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "\nstep %.3f ms = sum over ops of count x (time + launch) = %.3f ms (interval %s ms)\n",
		p.Step.Time.Ms(), sum.Ms(), Interval(p.Step)); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, reserveText(p.Memory, ex.Scenario.Config.GPUs)); err != nil {
		return err
	}
	for _, warn := range ex.Warnings {
		if _, err := fmt.Fprintln(w, "warning: "+warn); err != nil {
			return err
		}
	}
	return nil
}

// Views of an explanation; a CSV table's warnings go to stderr.
func (ex *Explained) Views() report.Views {
	return report.Views{JSON: func() any { return ex.JSON() }, CSV: func() *report.Table { return ex.Table(true) },
		Text: ex.Text, Warnings: ex.Warnings}
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
