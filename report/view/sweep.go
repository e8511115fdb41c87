package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
)

// SweepStep is the part of a sim.Point a sweep keeps (a sim.Point is
// kilobytes; a sweep may hold millions).
type SweepStep struct {
	Batch, Context     int
	StepMs, LoMs, HiMs float64
	TPOTMs, TokensStep float64
	TPS, PerUser       float64
	WeightsGB, KVGB    float64
	MaxBatch           int
	Fits               bool
	Breakdown          [cost.NumCategories]float64 // ms
}

// SweepValue is one combination's result: its predict points.
type SweepValue struct {
	Steps    []SweepStep
	Warnings []string // the scenario variant's warnings
}

// Swept is what sweep computed, ready to render.
type Swept struct {
	Base       *scenarios.Scenario // the scenario without overrides, for headers
	Result     *plan.SweepResult[SweepValue]
	Warnings   []string
	Categories []cost.Category
}

// SkipLines says once per distinct reason how many combinations it skipped.
func (sw *Swept) SkipLines() []string { return skipLines(sw.Result.Reasons) }

// skipLines says once per distinct reason how many combinations a sweep
// skipped (predict's and --serving's alike).
func skipLines(reasons []plan.ReasonCount) []string {
	var out []string
	for _, r := range reasons {
		out = append(out, fmt.Sprintf("skipped %d combination(s): %s", r.Count, r.Reason))
	}
	return out
}

// Table is one row per combination and batch: the swept keys, then the
// predict columns (text: the ones read first; full: every field).
func (sw *Swept) Table(full bool) *report.Table {
	t := &report.Table{}
	for _, a := range sw.Result.Axes {
		t.Columns = append(t.Columns, report.Column{Name: a.Name})
	}
	if full {
		for _, n := range []string{"batch", "context", "step_ms", "step_ms_lo", "step_ms_hi", "tpot_ms", "tokens_per_step",
			"tokens_per_s", "tokens_per_s_per_user", "weights_gb_per_gpu", "kv_gb_per_gpu", "max_batch", "fits"} {
			t.Columns = append(t.Columns, report.Column{Name: n})
		}
		for _, c := range sw.Categories {
			t.Columns = append(t.Columns, report.Column{Name: c.String() + "_ms"})
		}
	} else {
		t.Columns = append(t.Columns, report.Column{Name: "batch"}, report.Column{Name: "context"}, report.Column{Name: "step ms", Text: "%.3f"},
			report.Column{Name: "TPOT ms", Text: "%.3f"}, report.Column{Name: "tok/s", Text: "%.1f"}, report.Column{Name: "tok/s/user", Text: "%.1f"},
			report.Column{Name: "fits"})
	}
	for _, p := range sw.Result.Points {
		set := sw.Result.Settings(p.Index)
		for _, s := range p.Value.Steps {
			row := make([]any, 0, len(t.Columns))
			for _, st := range set {
				row = append(row, st.Value)
			}
			if full {
				row = append(row, s.Batch, s.Context, Round6(s.StepMs), Round6(s.LoMs), Round6(s.HiMs), Round6(s.TPOTMs), Round6(s.TokensStep),
					Round6(s.TPS), Round6(s.PerUser), Round6(s.WeightsGB), Round6(s.KVGB), s.MaxBatch, s.Fits)
				for _, c := range sw.Categories {
					row = append(row, Round6(s.Breakdown[c]))
				}
			} else {
				fits := "yes"
				if !s.Fits {
					fits = "NO"
				}
				row = append(row, s.Batch, s.Context, s.StepMs, s.TPOTMs, s.TPS, s.PerUser, fits)
			}
			t.Add(row...)
		}
	}
	return t
}

// Text writes the header, the table, the skip reasons and the warnings.
func (sw *Swept) Text(w io.Writer) error {
	return sweepText(w, sw.Base, sw.Result.Axes, len(sw.Result.Points), len(sw.Result.Skipped), "", sw.Table(false), sw.SkipLines(), sw.Warnings)
}

// sweepText writes a sweep's text report: the header (what note adds to
// the counts line), the table, the skip reasons and the warnings.
func sweepText(w io.Writer, base *scenarios.Scenario, ax []plan.Axis, run, skipped int, note string, t *report.Table, skips, warnings []string) error {
	var axes []string
	n := 1
	for _, a := range ax {
		axes = append(axes, fmt.Sprintf("%s (%d)", a.Name, len(a.Values)))
		n *= len(a.Values)
	}
	head := []string{
		"scenario  " + base.Name + " (" + base.File + ")",
		fmt.Sprintf("sweep     %s: %d combinations, %d run, %d skipped%s", strings.Join(axes, " x "), n, run, skipped, note),
		"",
	}
	if _, err := io.WriteString(w, strings.Join(head, "\n")+"\n"); err != nil {
		return err
	}
	if err := t.Render(w, report.Text); err != nil {
		return err
	}
	for _, l := range skips {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	for _, wn := range warnings {
		if _, err := fmt.Fprintln(w, "warning: "+wn); err != nil {
			return err
		}
	}
	return nil
}

// sweepPointJSON is one element of "points": the settings, then predict's
// point fields (without "sources": predict and --explain give those).
type sweepPointJSON struct {
	Set               map[string]string  `json:"set"`
	Batch             int                `json:"batch"`
	Context           int                `json:"context"`
	StepMs            float64            `json:"step_ms"`
	StepMsLo          float64            `json:"step_ms_lo"`
	StepMsHi          float64            `json:"step_ms_hi"`
	TPOTMs            float64            `json:"tpot_ms"`
	TokensPerStep     float64            `json:"tokens_per_step"`
	TokensPerS        float64            `json:"tokens_per_s"`
	TokensPerSPerUser float64            `json:"tokens_per_s_per_user"`
	BreakdownMs       map[string]float64 `json:"breakdown_ms"`
	Memory            memoryJSON         `json:"memory"`
	Fits              bool               `json:"fits"`
}

type sweepSkipJSON struct {
	Set    map[string]string `json:"set"`
	Reason string            `json:"reason"`
}

type sweepAxisJSON struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

type SweepJSON struct {
	Scenario string           `json:"scenario"`
	Axes     []sweepAxisJSON  `json:"axes"`
	Points   []sweepPointJSON `json:"points"`
	Skipped  []sweepSkipJSON  `json:"skipped"`
	Reasons  []reasonJSON     `json:"reasons"` // each distinct skip reason once, with its count
	Warnings []string         `json:"warnings"`
}

func (sw *Swept) setMap(i int) map[string]string {
	m := map[string]string{}
	for _, st := range sw.Result.Settings(i) {
		m[st.Name] = st.Value
	}
	return m
}

func (sw *Swept) JSON() SweepJSON {
	out := SweepJSON{Scenario: sw.Base.Name, Axes: []sweepAxisJSON{}, Points: []sweepPointJSON{}, Skipped: []sweepSkipJSON{},
		Reasons: []reasonJSON{}, Warnings: append([]string{}, sw.Warnings...)}
	for _, a := range sw.Result.Axes {
		out.Axes = append(out.Axes, sweepAxisJSON{Key: a.Name, Values: a.Values})
	}
	for _, p := range sw.Result.Points {
		set := sw.setMap(p.Index)
		for _, s := range p.Value.Steps {
			pj := sweepPointJSON{Set: set, Batch: s.Batch, Context: s.Context, StepMs: Round6(s.StepMs), StepMsLo: Round6(s.LoMs),
				StepMsHi: Round6(s.HiMs), TPOTMs: Round6(s.TPOTMs), TokensPerStep: Round6(s.TokensStep), TokensPerS: Round6(s.TPS),
				TokensPerSPerUser: Round6(s.PerUser), BreakdownMs: map[string]float64{},
				Memory: memoryJSON{WeightsGBPerGPU: Round6(s.WeightsGB), KVGBPerGPU: Round6(s.KVGB), MaxBatch: s.MaxBatch}, Fits: s.Fits}
			for _, c := range sw.Categories {
				pj.BreakdownMs[c.String()] = Round6(s.Breakdown[c])
			}
			out.Points = append(out.Points, pj)
		}
	}
	for _, k := range sw.Result.Skipped {
		out.Skipped = append(out.Skipped, sweepSkipJSON{Set: sw.setMap(k.Index), Reason: k.Reason})
	}
	for _, r := range sw.Result.Reasons {
		out.Reasons = append(out.Reasons, reasonJSON{Reason: r.Reason, Count: r.Count})
	}
	return out
}
