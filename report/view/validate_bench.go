package view

import (
	"fmt"
	"io"
	"math"

	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/validate"
)

// BenchCase is one result object with its simulated point.
type BenchCase struct {
	Result validate.BenchResult
	Point  SimPoint
	Rows   []validate.BenchRow
}

// BenchName names a result in messages: the file, and the line for a
// file of many records.
func BenchName(r validate.BenchResult) string { return r.Name() }

func RowName(r validate.BenchRow) string {
	if r.Stat == "" {
		return r.Metric
	}
	return r.Stat + " " + r.Metric
}

// finite is a pointer to x rounded as every JSON number is (r6), or nil
// (JSON null) when x is not finite.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	x = Round6(x)
	return &x
}

type benchRowJSON struct {
	Metric    string   `json:"metric"`
	Stat      string   `json:"stat,omitempty"`
	Unit      string   `json:"unit"`
	Measured  *float64 `json:"measured"`
	Predicted *float64 `json:"predicted"`
	ErrorPct  *float64 `json:"error_pct"`
}

type benchCaseJSON struct {
	File              string         `json:"file"`
	Line              int            `json:"line"`
	Family            string         `json:"family"`
	Concurrency       int            `json:"concurrency,omitempty"`
	RequestRate       *float64       `json:"request_rate,omitempty"`
	Replay            bool           `json:"replay,omitempty"`
	Requests          int            `json:"requests"`
	InputTokens       int            `json:"input_tokens"`
	OutputTokens      int            `json:"output_tokens"`
	Unservable        string         `json:"unservable,omitempty"`
	Rows              []benchRowJSON `json:"rows"`
	WorstMeanErrorPct *float64       `json:"worst_mean_error_pct"`
}

type BenchJSON struct {
	Scenario string          `json:"scenario"`
	Results  []benchCaseJSON `json:"results"`
	Warnings []string        `json:"warnings"`
}

func BenchJSONOf(scenario string, cases []BenchCase, warnings []string) BenchJSON {
	out := BenchJSON{Scenario: scenario, Results: []benchCaseJSON{}, Warnings: warnings}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, c := range cases {
		j := benchCaseJSON{File: c.Result.File, Line: c.Result.Line, Family: c.Result.Family, Concurrency: c.Point.At.Concurrency,
			Requests: c.Point.Config.Workload.Requests, InputTokens: c.Point.Config.Workload.InputTokens,
			OutputTokens: c.Point.Config.Workload.OutputTokens, Unservable: c.Point.Unservable, Rows: []benchRowJSON{}}
		if c.Point.At.RequestRate > 0 {
			j.RequestRate = finite(c.Point.At.RequestRate)
		}
		if c.Point.At.Replay {
			j.Replay = true
			if c.Point.Result != nil {
				j.RequestRate = finite(c.Point.Result.RequestRate)
			}
		}
		for _, r := range c.Rows {
			j.Rows = append(j.Rows, benchRowJSON{Metric: r.Metric, Stat: r.Stat, Unit: r.Unit,
				Measured: finite(r.Measured), Predicted: finite(r.Predicted), ErrorPct: finite(r.ErrorPct())})
		}
		if worst, _, ok := validate.WorstMeanErrorPct(c.Rows); ok {
			j.WorstMeanErrorPct = finite(worst)
		}
		out.Results = append(out.Results, j)
	}
	return out
}

// BenchTable is one row per figure; full adds the file columns (CSV).
func BenchTable(cases []BenchCase, full bool) *report.Table {
	t := &report.Table{Columns: []report.Column{{Name: "metric", Left: true}, {Name: "stat", Left: true}, {Name: "unit", Left: true},
		{Name: "measured", Text: "%.2f"}, {Name: "predicted", Text: "%.2f"}, {Name: "error_pct", Text: "%+.1f"}}}
	if full {
		t.Columns = append([]report.Column{{Name: "file", Left: true}, {Name: "line"}}, t.Columns...)
	}
	for _, c := range cases {
		for _, r := range c.Rows {
			cells := []any{r.Metric, r.Stat, r.Unit, numOrNil(r.Measured), numOrNil(r.Predicted), numOrNil(r.ErrorPct())}
			if full {
				cells = append([]any{c.Result.File, c.Result.Line}, cells...)
			}
			t.Add(cells...)
		}
	}
	return t
}

// numOrNil is x, or nil (an empty cell) when x is not finite.
func numOrNil(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// Bench is `validate bench`'s result: each result file's record beside
// its simulation, and the warnings collapsed.
type Bench struct {
	Scenario string
	Cases    []BenchCase
	Warnings []string
}

// Views of a bench comparison: the text report ends with its warnings on
// stderr (WarnAfter), CSV has them before, JSON holds them.
func (b *Bench) Views() report.Views {
	return report.Views{
		Page:      func() *report.Page { return ValidateBenchPage(b.Scenario, b.Cases, b.Warnings) },
		JSON:      func() any { return BenchJSONOf(b.Scenario, b.Cases, b.Warnings) },
		CSV:       func() *report.Table { return BenchTable(b.Cases, true) },
		Text:      func(w io.Writer) error { return BenchText(w, b.Scenario, b.Cases) },
		Warnings:  b.Warnings,
		WarnAfter: []report.Format{report.Text},
	}
}

// BenchText is the text report: per result its load, the table of
// figures and the worst mean (the warnings follow on stderr: Views).
func BenchText(out io.Writer, scenario string, cases []BenchCase) error {
	fmt.Fprintf(out, "scenario  %s\n", scenario)
	for _, c := range cases {
		load := fmt.Sprintf("concurrency %d", c.Point.At.Concurrency)
		switch {
		case c.Point.At.Replay:
			load = fmt.Sprintf("its %d requests replayed (arrivals and lengths)", len(c.Result.Requests))
		case c.Point.At.RequestRate > 0:
			load = fmt.Sprintf("request rate %g/s", c.Point.At.RequestRate)
		}
		fmt.Fprintf(out, "\n%s (%s): %s, %d requests, %d in / %d out tokens\n", BenchName(c.Result), c.Result.Family, load,
			c.Point.Config.Workload.Requests, c.Point.Config.Workload.InputTokens, c.Point.Config.Workload.OutputTokens)
		if c.Point.Unservable != "" {
			fmt.Fprintln(out, "  no prediction: "+c.Point.Unservable)
			continue
		}
		if err := BenchTable([]BenchCase{c}, false).Render(out, report.Text); err != nil {
			return err
		}
		if worst, row, ok := validate.WorstMeanErrorPct(c.Rows); ok {
			fmt.Fprintf(out, "worst mean or throughput: %s %+.1f%%\n", RowName(row), worst)
		}
	}
	return nil
}
