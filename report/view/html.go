package view

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
)

// scenarioHeader is the page header of a scenario: name, model, box,
// layout and calibration provenance.
func scenarioHeader(sc *scenarios.Scenario) []report.Field {
	c := sc.Config
	cal := sc.CalibrationNote
	if len(sc.CalibrationUses) > 0 {
		var names []string
		for _, u := range sc.CalibrationUses {
			names = append(names, u.Name)
		}
		cal += " [" + strings.Join(names, ", ") + "]"
	}
	return []report.Field{
		{Label: "scenario", Value: sc.Name + " (" + sc.File + ")"},
		{Label: "model", Value: modelSummary(sc)},
		{Label: "box", Value: fmt.Sprintf("%dx %s (%s, %s), fabric %s", c.GPUs, c.GPU.Name, c.GPU.Memory, c.GPU.MemBW, c.Fabric.Name)},
		{Label: "layout", Value: fmt.Sprintf("%s, CUDA graphs %s, all-reduce %s, KV cache %s", layoutString(c), onOff(c.Graphs), allReduceName(sc), kvCacheName(sc))},
		{Label: "calibration", Value: cal},
	}
}

// Page is predict's HTML report: step time with its interval against
// batch, the stacked category breakdown per batch, memory per GPU.
func (pr *Prediction) Page() *report.Page {
	pg := &report.Page{Title: "moecast predict: " + pr.Scenario.Name, Header: scenarioHeader(pr.Scenario), Warnings: pr.Warnings}
	pg.Header = append(pg.Header, report.Field{Label: "context", Value: fmt.Sprintf("%d tokens", pr.Context)})
	pg.Sections = []report.Section{
		{Title: "Decode step time", Text: "Predicted time of one decode step against the batch size (log axis); the band is the interval the step is expected to fall in.",
			Chart: stepChart(pr)},
		{Title: "Where the step goes", Text: "The step's time by cost category, for each batch size (no overlap is modelled: the parts add up to the step).",
			Chart: breakdownChart(pr)},
		{Title: "Memory per GPU", Text: "Weights, reserves (activations, CUDA graphs, NCCL), the KV cache of the batch at this context, and what is left of the engine's budget (GPU memory x gpu_memory_utilization).",
			Chart: memoryChart(pr)},
		{Title: "All figures", Tables: []report.Titled{{Caption: "predict --format csv", Table: (*report.Table)(pr.Table(true))}}},
	}
	return pg
}

func batchesLog(pr *Prediction) bool { return len(pr.Points) > 1 }

func stepChart(pr *Prediction) report.Chart {
	s := report.Series{Name: "step time"}
	for _, p := range pr.Points {
		s.X = append(s.X, float64(p.Batch))
		s.Y = append(s.Y, p.Step.Time.Ms())
		lo, hi := p.Step.Lo, p.Step.Hi
		if lo == 0 && hi == 0 {
			lo, hi = p.Step.Time, p.Step.Time
		}
		s.Lo, s.Hi = append(s.Lo, lo.Ms()), append(s.Hi, hi.Ms())
	}
	return &report.LineChart{Title: "Decode step time", X: report.Axis{Label: "batch", Unit: "sequences", Log: batchesLog(pr)},
		Y: report.Axis{Label: "step time", Unit: "ms"}, Series: []report.Series{s}}
}

func breakdownChart(pr *Prediction) report.Chart {
	c := &report.StackedBars{Title: "Step time by category", X: report.Axis{Label: "batch"}, Y: report.Axis{Label: "time", Unit: "ms"}}
	for _, p := range pr.Points {
		c.Labels = append(c.Labels, fmt.Sprint(p.Batch))
	}
	for _, cat := range categories(pr.Points) {
		st := report.Stack{Name: cat.String()}
		nonzero := false
		for _, p := range pr.Points {
			v := p.Breakdown[cat].Time.Ms()
			st.Values = append(st.Values, v)
			nonzero = nonzero || v != 0
		}
		if nonzero {
			c.Stacks = append(c.Stacks, st)
		}
	}
	return c
}

func memoryChart(pr *Prediction) report.Chart {
	c := &report.StackedBars{Title: "Memory per GPU", X: report.Axis{Label: "batch"}, Y: report.Axis{Label: "memory", Unit: "GB"}}
	w, r, kv, free := report.Stack{Name: "weights"}, report.Stack{Name: "reserve"}, report.Stack{Name: "KV cache"}, report.Stack{Name: "free"}
	for _, p := range pr.Points {
		c.Labels = append(c.Labels, fmt.Sprint(p.Batch))
		m := p.Memory
		w.Values = append(w.Values, math.Max(0, m.Weights.GB()))
		r.Values = append(r.Values, math.Max(0, m.Reserve.GB()))
		kv.Values = append(kv.Values, math.Max(0, m.KV.GB()))
		free.Values = append(free.Values, math.Max(0, m.Free.GB()))
		// The budget: GPU memory x gpu_memory_utilization, the same at
		// every batch (weights + reserve + what the KV cache may take).
		c.Budget = math.Max(0, (m.Weights + m.Reserve + m.Usable).GB())
	}
	c.Stacks = []report.Stack{w, r, kv, free}
	c.BudgetName = "budget (GPU memory x gpu_memory_utilization)"
	return c
}

// Page is plan's HTML report: the answer, the Pareto chart with the
// recommended point marked, the front and the deployments.
func (pl *Planned) Page() *report.Page {
	r := pl.Result
	pg := &report.Page{Title: "moecast plan: " + pl.Scenario.Name, Header: scenarioHeader(pl.Scenario), Warnings: pl.Warnings}
	pg.Header = append(pg.Header,
		report.Field{Label: "workload", Value: fmt.Sprintf("%d input + %d output tokens per request", pl.Plan.InputTokens, pl.Plan.OutputTokens)},
		report.Field{Label: "searched", Value: pl.searched()},
		report.Field{Label: "SLOs", Value: pl.SLOString() + "; target " + pl.TargetString()},
		report.Field{Label: "priced by", Value: r.Evaluator},
		report.Field{Label: "best", Value: pl.bestLine()})
	front := "Pareto front"
	idx := r.Front
	if len(r.Front) == 0 {
		front, idx = "Nearest points (no point meets the SLOs)", r.Nearest
	}
	pg.Sections = []report.Section{
		{Title: "Tokens/s per GPU against tokens/s per user",
			Text:  paretoText(r),
			Chart: paretoChart(pl)},
		{Title: front, Tables: []report.Titled{{Table: (*report.Table)(pl.pointRows(idx, false))}}},
		{Title: "Deployments", Text: "Each layout's best point under the SLOs, and why it lost when it did.",
			Tables: []report.Titled{{Table: (*report.Table)(pl.deploymentsTable(false))}}},
	}
	if pl.Plan.Disagg {
		pg.Sections = append(pg.Sections, report.Section{Title: "Disaggregated deployments (xPyD)",
			Text: fmt.Sprintf("x prefill + y decode instances, the KV cache over %s, each priced by the serving simulation. %s.",
				pl.Plan.DisaggTransfer.Name, pl.disaggVerdict()),
			Tables: []report.Titled{{Table: (*report.Table)(pl.disaggRows())}}})
	}
	if rc := plan.RejectionReasons(r.Rejected); len(rc) > 0 {
		t := &report.Table{Columns: []report.Column{{Name: "layouts refused"}, {Name: "reason"}}}
		for _, c := range rc {
			t.Add(c.Count, c.Reason)
		}
		pg.Sections = append(pg.Sections, report.Section{Title: "Layouts the simulator refused", Tables: []report.Titled{{Table: t}}})
	}
	return pg
}

// paretoText is the Pareto chart's caption: what it draws and, when the
// search refined, that points priced only by the screen are left out (one
// pricing per chart: screen figures leave out prefill and are not
// comparable with the simulation's).
func paretoText(r *plan.Result) string {
	s := "Every priced point (deployment x concurrency) that meets the SLOs; the line joins the Pareto front (no other point is better on both axes); the ring marks the recommended deployment. Axes are logarithmic."
	n := 0
	refined := len(r.Front) > 0 && r.Points[r.Front[0]].Refined
	for i := range r.Points {
		if p := &r.Points[i]; refined && !p.Refined && p.Verdict != plan.NoMemory {
			n++
		}
	}
	if n > 0 {
		s += fmt.Sprintf(" Every point drawn is priced by the serving simulation; the %d points priced only by the screen (which has no prefill) are left out: the CSV lists them with priced_by = screen.", n)
	}
	return s
}

func paretoChart(pl *Planned) report.Chart {
	r := pl.Result
	c := &report.Pareto{Title: "Pareto front", X: report.Axis{Label: "speed per user", Unit: "tokens/s", Log: true},
		Y: report.Axis{Label: "output per GPU", Unit: "tokens/s", Log: true}}
	pt := func(i int) report.ParetoPoint {
		p := &r.Points[i]
		return report.ParetoPoint{Name: fmt.Sprintf("%s @%d", r.Candidates[p.Candidate].Label(), p.Concurrency),
			X: p.Metrics.PerUser, Y: p.PerGPU}
	}
	onFront := map[int]bool{}
	refined := false
	for _, i := range r.Front {
		onFront[i] = true
		refined = refined || r.Points[i].Refined
	}
	for i := range r.Points {
		p := &r.Points[i]
		if onFront[i] || p.Verdict == plan.NoMemory || !(p.PerGPU > 0 && p.Metrics.PerUser > 0) {
			continue
		}
		if p.Refined != refined {
			continue // one pricing per chart: the front's
		}
		if p.Verdict == plan.Dominated || p.Verdict == plan.Screened || len(r.Front) == 0 {
			c.Others = append(c.Others, pt(i))
		}
	}
	for _, i := range r.Front {
		c.Front = append(c.Front, pt(i))
	}
	if r.Best != nil {
		b := pt(r.Best.Point)
		c.Best = &b
	}
	return c
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// sweepHeader is the header of a sweep's HTML report: the base
// scenario's fields, the swept keys with their values, and combinations
// (how many ran and were skipped).
func sweepHeader(base *scenarios.Scenario, axes []plan.Axis, combinations string) []report.Field {
	h := scenarioHeader(base)
	var swept []string
	for _, a := range axes {
		swept = append(swept, a.Name+" = "+strings.Join(a.Values, ", "))
	}
	h[0].Label = "base scenario"
	return append(h, report.Field{Label: "swept", Value: strings.Join(swept, "; ")},
		report.Field{Label: "combinations", Value: combinations})
}

// Page is sweep's HTML report: step time and tokens/s per user against
// the first numeric swept key (or the batch), one series per combination
// of the other keys; the full table under it.
func (sw *Swept) Page() *report.Page {
	pg := &report.Page{Title: "moecast sweep: " + sw.Base.Name, Warnings: sw.Warnings,
		Header: sweepHeader(sw.Base, sw.Result.Axes, fmt.Sprintf("%d run, %d skipped", len(sw.Result.Points), len(sw.Result.Skipped)))}
	xname, step, user, note := sw.charts()
	rows, rowNote := capRows((*report.Table)(sw.Table(true)))
	pg.Sections = []report.Section{
		{Title: "Step time against " + xname, Text: strings.TrimSpace("One line per combination of the other swept keys; the band is the step's interval. " + note), Chart: step},
		{Title: "Tokens/s per user against " + xname, Chart: user},
		{Title: "All points", Text: rowNote, Tables: []report.Titled{{Caption: "sweep --format csv", Table: rows}}},
	}
	if lines := sw.SkipLines(); len(lines) > 0 {
		t := &report.Table{Columns: []report.Column{{Name: "skipped"}, {Name: "reason"}}}
		for _, r := range sw.Result.Reasons {
			t.Add(r.Count, r.Reason)
		}
		pg.Sections = append(pg.Sections, report.Section{Title: "Skipped combinations", Tables: []report.Titled{{Table: t}}})
	}
	return pg
}

// charts builds the sweep's two line charts over the x key.
func (sw *Swept) charts() (string, report.Chart, report.Chart, string) {
	xAxis := -1 // index of the swept key plotted on x; -1: batch
	for i, a := range sw.Result.Axes {
		numeric := true
		for _, v := range a.Values {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				numeric = false
			}
		}
		if numeric && a.Name != "workload.batch" {
			xAxis = i
			break
		}
	}
	xname := "batch"
	if xAxis >= 0 {
		xname = sw.Result.Axes[xAxis].Name
	}
	var order []string
	steps, users := map[string]*report.Series{}, map[string]*report.Series{}
	for _, p := range sw.Result.Points {
		set := sw.Result.Settings(p.Index)
		for _, s := range p.Value.Steps {
			var parts []string
			x := float64(s.Batch)
			for i, st := range set {
				if i == xAxis {
					x, _ = strconv.ParseFloat(st.Value, 64)
					continue
				}
				if xAxis < 0 && st.Name == "workload.batch" {
					continue // on the x axis already
				}
				parts = append(parts, st.Name+"="+st.Value)
			}
			if xAxis >= 0 && len(p.Value.Steps) > 1 { // the scenario's batches, not swept
				parts = append(parts, fmt.Sprintf("batch=%d", s.Batch))
			}
			name := strings.Join(parts, " ")
			if name == "" {
				name = "all"
			}
			if steps[name] == nil {
				order = append(order, name)
				steps[name], users[name] = &report.Series{Name: name}, &report.Series{Name: name}
			}
			st, us := steps[name], users[name]
			lo, hi := s.LoMs, s.HiMs
			if lo == 0 && hi == 0 {
				lo, hi = s.StepMs, s.StepMs
			}
			st.X, st.Y, st.Lo, st.Hi = append(st.X, x), append(st.Y, s.StepMs), append(st.Lo, lo), append(st.Hi, hi)
			us.X, us.Y = append(us.X, x), append(us.Y, s.PerUser)
		}
	}
	order, note := capLines(order)
	unit := ""
	if xAxis < 0 {
		unit = "sequences"
	}
	xa := report.Axis{Label: xname, Unit: unit}
	step := &report.LineChart{Title: "Decode step time", X: xa, Y: report.Axis{Label: "step time", Unit: "ms"}}
	user := &report.LineChart{Title: "Tokens/s per user", X: xa, Y: report.Axis{Label: "speed per user", Unit: "tokens/s"}}
	for _, n := range order {
		st, thin1 := thinned(sortedSeries(*steps[n]))
		us, thin2 := thinned(sortedSeries(*users[n]))
		step.Series, user.Series = append(step.Series, st), append(user.Series, us)
		if (thin1 || thin2) && !strings.Contains(note, "points of") {
			note = strings.TrimSpace(note + fmt.Sprintf(" Lines of more than %d points draw %d points of them, evenly spaced; %s.", maxLinePoints, maxLinePoints, csvHasAllNote))
		}
	}
	return xname, step, user, note
}

// Limits of an HTML report: lines a chart can show apart, points a line
// needs to draw its shape, rows a page can list and still open in a
// second. The CSV output (--format csv) always holds every point.
const (
	maxChartLines = 12
	maxLinePoints = 500
	maxReportRows = 2000
	csvHasAllNote = "--format csv has every point"
)

// capLines keeps the first maxChartLines line names and says what was
// left out ("" when nothing was).
func capLines(order []string) ([]string, string) {
	if len(order) <= maxChartLines {
		return order, ""
	}
	return order[:maxChartLines], fmt.Sprintf("The charts draw the first %d of %d lines (combinations of the other swept keys); %s.",
		maxChartLines, len(order), csvHasAllNote)
}

// thinned keeps at most maxLinePoints points of a series sorted by x, evenly
// spaced, first and last included.
func thinned(s report.Series) (report.Series, bool) {
	n := len(s.X)
	if n <= maxLinePoints {
		return s, false
	}
	out := report.Series{Name: s.Name, NoMarkers: true}
	for k := range maxLinePoints {
		i := k * (n - 1) / (maxLinePoints - 1)
		out.X, out.Y = append(out.X, s.X[i]), append(out.Y, s.Y[i])
		if len(s.Lo) == n {
			out.Lo, out.Hi = append(out.Lo, s.Lo[i]), append(out.Hi, s.Hi[i])
		}
	}
	return out, true
}

// capRows keeps the first maxReportRows rows of t and says what was left
// out ("" when nothing was).
func capRows(t *report.Table) (*report.Table, string) {
	if len(t.Rows) <= maxReportRows {
		return t, ""
	}
	c := *t
	c.Rows = t.Rows[:maxReportRows]
	return &c, fmt.Sprintf("The first %d of %d rows; %s.", maxReportRows, len(t.Rows), csvHasAllNote)
}

// sortedSeries orders a series by x.
func sortedSeries(s report.Series) report.Series {
	idx := make([]int, len(s.X))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.X[idx[a]] < s.X[idx[b]] })
	out := report.Series{Name: s.Name, NoMarkers: s.NoMarkers}
	for _, i := range idx {
		out.X, out.Y = append(out.X, s.X[i]), append(out.Y, s.Y[i])
		if len(s.Lo) > 0 {
			out.Lo, out.Hi = append(out.Lo, s.Lo[i]), append(out.Hi, s.Hi[i])
		}
	}
	return out
}
