package view

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// PrefillPoint is one chunk size of `predict --prefill`: the lone
// prefill step as serve prices it (serve.PriceLonePrefill) and, with
// --explain, its ops.
type PrefillPoint struct {
	Tokens, Prefix int
	Step           serve.LoneStep
	Launch         string   // sim.LaunchMode of the step
	Ops            []sim.Op // --explain only
}

// PrefillPrediction is `predict --prefill`.
type PrefillPrediction struct {
	Scenario *scenarios.Scenario
	Engine   string
	Pool     string // "prefill pool" when disaggregated, else ""
	Explain  bool
	Points   []PrefillPoint
	Warnings []string
}

// PrefillPointJSON is one element of "points" in `predict --prefill --format json`.
type PrefillPointJSON struct {
	Tokens      int                `json:"tokens"`
	Prefix      int                `json:"prefix"`
	StepMs      float64            `json:"step_ms"`
	GPUMs       float64            `json:"gpu_ms"`
	HostMs      float64            `json:"host_ms"`
	HostOverlap bool               `json:"host_overlapped"`
	Ranks       int                `json:"dp_ranks_priced"`
	TokensPerS  float64            `json:"tokens_per_s"`
	Launch      string             `json:"launch"`
	BreakdownMs map[string]float64 `json:"breakdown_ms"`
	Ops         []ExplainOpJSON    `json:"ops,omitempty"`
}

// PrefillJSON is `predict --prefill --format json`.
type PrefillJSON struct {
	Scenario    string             `json:"scenario"`
	Mode        string             `json:"mode"` // "prefill"
	Engine      string             `json:"engine"`
	Pool        string             `json:"pool,omitempty"`
	Calibration []string           `json:"calibration"`
	Points      []PrefillPointJSON `json:"points"`
	Warnings    []string           `json:"warnings"`
}

func (p *PrefillPoint) tokensPerS() float64 {
	if p.Step.Wall <= 0 {
		return 0
	}
	return float64(p.Tokens) / float64(p.Step.Wall)
}

// stepPoint is p's step as a sim.Point for the shared renderers
// (topCategories, Explained.Table): wall time and breakdown.
func (p *PrefillPoint) stepPoint() sim.Point {
	var pt sim.Point
	pt.Step.Time = p.Step.Wall
	for c := range p.Step.Cats {
		pt.Breakdown[c].Time = p.Step.Cats[c]
	}
	return pt
}

// explained is p's ops as `predict --explain` renders them.
func (pr *PrefillPrediction) explained(p *PrefillPoint) *Explained {
	return &Explained{Scenario: pr.Scenario, Batch: 1, Context: p.Prefix, Point: p.stepPoint(), Ops: p.Ops}
}

// JSON is the --format json document.
func (pr *PrefillPrediction) JSON() PrefillJSON {
	out := PrefillJSON{Scenario: pr.Scenario.Name, Mode: "prefill", Engine: pr.Engine, Pool: pr.Pool, Calibration: []string{},
		Points: []PrefillPointJSON{}, Warnings: append([]string{}, pr.Warnings...)}
	for _, u := range pr.Scenario.CalibrationUses {
		out.Calibration = append(out.Calibration, u.Name)
	}
	for i := range pr.Points {
		p := &pr.Points[i]
		pj := PrefillPointJSON{Tokens: p.Tokens, Prefix: p.Prefix, StepMs: Round6(p.Step.Wall.Ms()), GPUMs: Round6(p.Step.GPU.Ms()),
			HostMs: Round6(p.Step.Host.Ms()), HostOverlap: p.Step.Overlap, Ranks: p.Step.Ranks, TokensPerS: Round6(p.tokensPerS()),
			Launch: p.Launch, BreakdownMs: map[string]float64{}}
		for c := cost.Category(0); c < cost.NumCategories; c++ {
			if t := p.Step.Cats[c]; t != 0 || c != cost.Idle {
				pj.BreakdownMs[c.String()] = Round6(t.Ms())
			}
		}
		if pr.Explain {
			pj.Ops = pr.explained(p).JSON().Ops
		}
		out.Points = append(out.Points, pj)
	}
	return out
}

// Table is one row per chunk size (full: the CSV columns, one per
// category); with Explain and full, one row per op of each chunk instead.
func (pr *PrefillPrediction) Table(full bool) *report.Table {
	if full && pr.Explain {
		var t *report.Table
		for i := range pr.Points {
			p := &pr.Points[i]
			et := pr.explained(p).Table(true)
			if t == nil {
				t = &report.Table{Columns: append([]report.Column{{Name: "tokens"}, {Name: "prefix"}}, et.Columns...)}
			}
			for _, r := range et.Rows {
				t.Add(append([]any{p.Tokens, p.Prefix}, r...)...)
			}
		}
		return t
	}
	if full {
		t := &report.Table{Columns: []report.Column{{Name: "tokens"}, {Name: "prefix"}, {Name: "step_ms"}, {Name: "gpu_ms"},
			{Name: "host_ms"}, {Name: "host_overlapped"}, {Name: "dp_ranks_priced"}, {Name: "tokens_per_s"}, {Name: "launch"}}}
		for c := cost.Category(0); c < cost.NumCategories; c++ {
			if c != cost.Idle {
				t.Columns = append(t.Columns, report.Column{Name: c.String() + "_ms"})
			}
		}
		for i := range pr.Points {
			p := &pr.Points[i]
			row := []any{p.Tokens, p.Prefix, Round6(p.Step.Wall.Ms()), Round6(p.Step.GPU.Ms()), Round6(p.Step.Host.Ms()),
				p.Step.Overlap, p.Step.Ranks, Round6(p.tokensPerS()), p.Launch}
			for c := cost.Category(0); c < cost.NumCategories; c++ {
				if c != cost.Idle {
					row = append(row, Round6(p.Step.Cats[c].Ms()))
				}
			}
			t.Add(row...)
		}
		return t
	}
	t := &report.Table{Columns: []report.Column{{Name: "tokens"}, {Name: "prefix"}, {Name: "step ms", Text: "%.3f"},
		{Name: "GPU ms", Text: "%.3f"}, {Name: "host ms", Text: "%.3f"}, {Name: "tok/s", Text: "%.1f"},
		{Name: "top categories (share of step)"}}}
	for i := range pr.Points {
		p := &pr.Points[i]
		host := p.Step.Host.Ms()
		if p.Step.Overlap {
			host = 0
		}
		t.Add(p.Tokens, p.Prefix, p.Step.Wall.Ms(), p.Step.GPU.Ms(), host, p.tokensPerS(), topCategories(p.stepPoint(), 3))
	}
	return t
}

// Text writes the header, what the step includes, the table, each
// chunk's ops with --explain, and the warnings.
func (pr *PrefillPrediction) Text(w io.Writer) error {
	prefix := 0
	if len(pr.Points) > 0 {
		prefix = pr.Points[0].Prefix
	}
	if err := WriteHeader(w, pr.Scenario, prefix); err != nil {
		return err
	}
	pool := ""
	if pr.Pool != "" {
		pool = ", on the " + pr.Pool
	}
	var lines []string
	lines = append(lines, fmt.Sprintf("prefill   one request's chunk alone in the engine (%s%s), priced as simulate prices the step (serve.PriceLonePrefill):", pr.Engine, pool))
	launches := map[string]bool{}
	for i := range pr.Points {
		launches[pr.Points[i].Launch] = true
	}
	var ls []string
	for l := range launches {
		ls = append(ls, l)
	}
	sort.Strings(ls)
	lines = append(lines, "  included: the step's GPU time (ops below; launch: "+strings.Join(ls, "; ")+")")
	if len(pr.Points) > 0 {
		s := pr.Points[0].Step
		h := fmt.Sprintf("  included: the engine's host work per step, %.3f ms, ", s.Host.Ms())
		if s.Overlap {
			h += "hidden behind the GPU (async scheduling overlaps prefill steps): step = max(GPU, host)"
		} else {
			h += "added to the GPU time: step = GPU + host (in category other)"
		}
		lines = append(lines, h)
		if s.Ranks > 1 {
			lines = append(lines, fmt.Sprintf("  included: DP ranks in lockstep: the chunk priced once per rank (%d), as every rank is padded to the busiest", s.Ranks))
		}
	}
	lines = append(lines, "  not included: tokenisation and queueing (simulate's TTFT adds them), the first token's detokenisation")
	if _, err := io.WriteString(w, strings.Join(lines, "\n")+"\n\n"); err != nil {
		return err
	}
	if err := pr.Table(false).Render(w, report.Text); err != nil {
		return err
	}
	if pr.Explain {
		for i := range pr.Points {
			p := &pr.Points[i]
			var sum unit.Seconds
			for _, o := range p.Ops {
				sum += unit.Seconds(o.Count) * (o.Estimate.Time + o.Launch)
			}
			if _, err := fmt.Fprintf(w, "\nexplain   prefill %d tokens after %d cached: each op of one layer of each kind; count = occurrences per step, time = one occurrence\n\n", p.Tokens, p.Prefix); err != nil {
				return err
			}
			if err := pr.explained(p).Table(false).Render(w, report.Text); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "\nGPU %.3f ms = sum over ops of count x (time + launch) = %.3f ms; step %.3f ms with host work\n",
				p.Step.GPU.Ms(), sum.Ms(), p.Step.Wall.Ms()); err != nil {
				return err
			}
		}
	}
	for _, wn := range pr.Warnings {
		if _, err := fmt.Fprintln(w, "warning: "+wn); err != nil {
			return err
		}
	}
	return nil
}

// Views of a prefill prediction; a CSV table's warnings go to stderr.
func (pr *PrefillPrediction) Views() report.Views {
	return report.Views{JSON: func() any { return pr.JSON() }, CSV: func() *report.Table { return pr.Table(true) },
		Text: pr.Text, Warnings: pr.Warnings}
}
