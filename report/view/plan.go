package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
)

// Planned is what plan computed, ready to render.
type Planned struct {
	Scenario *scenarios.Scenario
	Plan     scenarios.Plan
	Space    *plan.Space
	Result   *plan.Result
	SLO      plan.SLO
	Warnings []string
	// disagg are the disaggregated points ([plan] disagg = true).
	Disagg []DisaggPoint
}

// SLOString renders the objectives and target: "tpot-p99 50ms, >= 20 tok/s/user".
func (pl *Planned) SLOString() string {
	p := &pl.Plan
	var s []string
	if p.TTFTP99 > 0 {
		s = append(s, "ttft-p99 <= "+p.TTFTP99.String())
	}
	if p.TPOTP99 > 0 {
		s = append(s, "tpot-p99 <= "+p.TPOTP99.String())
	}
	if p.MinTokensPerSPerUser > 0 {
		s = append(s, fmt.Sprintf(">= %g tok/s/user", p.MinTokensPerSPerUser))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func (pl *Planned) TargetString() string {
	p := &pl.Plan
	switch {
	case p.TargetOutputTokensPerS > 0:
		return fmt.Sprintf("%g output tok/s", p.TargetOutputTokensPerS)
	case p.TargetRequestRate > 0:
		return fmt.Sprintf("%g requests/s (%g output tok/s)", p.TargetRequestRate, p.TargetRequestRate*float64(p.OutputTokens))
	}
	return "none (one replica)"
}

func (pl *Planned) gpuNames() []string {
	var g []string
	for _, o := range pl.Space.GPUs {
		g = append(g, o.GPU.Name)
	}
	return g
}

// bestLine says what to deploy, or that nothing meets the objectives.
func (pl *Planned) bestLine() string {
	r := pl.Result
	if d := pl.DisaggBest(); d != nil {
		return pl.disaggBestLine(d)
	}
	if r.Best == nil {
		return "no deployment meets the objectives; nearest points below"
	}
	p := &r.Points[r.Best.Point]
	c := &r.Candidates[p.Candidate]
	s := fmt.Sprintf("%s at concurrency %d: %.1f tok/s/GPU, %.1f tok/s/user, TPOT p99 %.2f ms, %.1f tok/s per replica",
		c.Label(), p.Concurrency, p.PerGPU, p.Metrics.PerUser, p.Metrics.TPOTP99.Ms(), p.Metrics.OutputTokensPerSecond)
	if r.Best.TargetOutputTokensPerSecond > 0 {
		s += fmt.Sprintf("; for %s: %d replicas, %d GPUs", pl.TargetString(), r.Best.Replicas, r.Best.GPUs)
		if !r.Best.WithinMaxGPUs {
			s += fmt.Sprintf(" (more than --max-gpus %d)", pl.Space.MaxGPUs)
		}
	}
	return s
}

// Text writes the header, best, front, deployments and warnings.
func (pl *Planned) Text(w io.Writer) error {
	r := pl.Result
	p := &pl.Plan
	lines := []string{
		"scenario  " + pl.Scenario.Name + " (" + pl.Scenario.File + ")",
		"model     " + modelSummary(pl.Scenario),
		fmt.Sprintf("workload  %d input + %d output tokens per request", p.InputTokens, p.OutputTokens),
		"searched  " + pl.searched(),
		"SLOs      " + pl.SLOString() + "; target " + pl.TargetString(),
		"priced by " + r.Evaluator,
		"",
		"best      " + pl.bestLine(),
	}
	if pl.Plan.Disagg {
		lines = append(lines, "verdict   "+pl.disaggFront())
	}
	lines = append(lines, "")
	if _, err := io.WriteString(w, strings.Join(lines, "\n")+"\n"); err != nil {
		return err
	}
	title, idx := "Pareto front (tokens/s per GPU against tokens/s per user, SLOs met)", r.Front
	if len(r.Front) == 0 {
		title, idx = "nearest points (no point meets the SLOs)", r.Nearest
	}
	if _, err := fmt.Fprintln(w, title); err != nil {
		return err
	}
	if err := pl.pointRows(idx, false).Render(w, report.Text); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "\ndeployments (each layout's best point under the SLOs, and why it lost)"); err != nil {
		return err
	}
	if err := pl.deploymentsTable(false).Render(w, report.Text); err != nil {
		return err
	}
	if m := pl.memoryLine(); m != "" {
		if _, err := fmt.Fprintln(w, m); err != nil {
			return err
		}
	}
	if pl.Plan.Disagg {
		var b strings.Builder
		pl.disaggText(&b)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	for _, wn := range pl.Warnings {
		if _, err := fmt.Fprintln(w, "warning: "+wn); err != nil {
			return err
		}
	}
	return nil
}

// searched is one line on the search space.
func (pl *Planned) searched() string {
	r := pl.Result
	maxg := "node size"
	if pl.Space.MaxGPUs > 0 {
		maxg = fmt.Sprint(pl.Space.MaxGPUs)
	}
	s := fmt.Sprintf("%d deployments on %s (GPUs per replica up to %s), %d points priced",
		len(r.Candidates), strings.Join(pl.gpuNames(), ", "), maxg, pl.Priced())
	if n := len(r.Rejected); n > 0 {
		rc := plan.RejectionReasons(r.Rejected)
		s += fmt.Sprintf("; %d layouts refused (%d reasons, first: %dx %s)", n, len(rc), rc[0].Count, rc[0].Reason)
	}
	return s
}

func (pl *Planned) Priced() int {
	n := 0
	for i := range pl.Result.Points {
		if pl.Result.Points[i].Verdict != plan.NoMemory {
			n++
		}
	}
	return n
}
