package view

import (
	"fmt"
	"strings"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report"
)

// DisaggPoint is one disaggregated deployment that plan priced: X prefill
// instances of Prefill's layout and Y decode instances of Decode's, at
// Concurrency requests in flight, by the serving simulation.
type DisaggPoint struct {
	Prefill, Decode   *plan.Candidate
	X, Y              int
	Concurrency       int
	GPUs              int
	Metrics           plan.Metrics
	PerGPU            float64
	KVTransferMean    float64 // ms
	PrefillBusy       float64 // the prefill pool's utilisation, 0..1
	MeetsSLO, OnFront bool    // OnFront: not dominated by the agg front nor another disagg point
	Err               string
	// Units is how many copies of the xPyD deployment carry the plan's
	// target (output tokens/s or requests/s), TotalGPUs their GPUs; 0
	// without a target (sized as the agg best is: whole copies).
	Units, TotalGPUs int
}

// Label is the xPyD name, e.g. "1P(TP8)+1D(TP1 DP8 EP8)".
func (d *DisaggPoint) Label() string {
	return fmt.Sprintf("%dP(%s)+%dD(%s)", d.X, poolLayout(d.Prefill), d.Y, poolLayout(d.Decode))
}

func poolLayout(c *plan.Candidate) string {
	l := c.Config.Layout
	s := fmt.Sprintf("TP%d", l.TP)
	if l.DP > 1 {
		s += fmt.Sprintf(" DP%d", l.DP)
	}
	if l.DPAttention {
		s += " DPA"
	}
	if l.EP > 1 {
		s += fmt.Sprintf(" EP%d", l.EP)
	}
	return s
}

// TargetOutput is the output tokens/s the plan's target asks for (a
// request rate times the output length); 0 without a target.
func (pl *Planned) TargetOutput() float64 {
	p := &pl.Plan
	if p.TargetRequestRate > 0 {
		return p.TargetRequestRate * float64(p.OutputTokens)
	}
	return p.TargetOutputTokensPerS
}

// disaggSizing compares, under a target, the fewest GPUs an xPyD point
// meeting the SLOs needs against the agg best's; "" without a target.
func (pl *Planned) disaggSizing() string {
	var best *DisaggPoint
	for i := range pl.Disagg {
		d := &pl.Disagg[i]
		if d.Err == "" && d.MeetsSLO && d.Units > 0 && (best == nil || d.TotalGPUs < best.TotalGPUs) {
			best = d
		}
	}
	b := pl.Result.Best
	if best == nil || b == nil || b.TargetOutputTokensPerSecond <= 0 {
		return ""
	}
	switch {
	case best.TotalGPUs < b.GPUs:
		return fmt.Sprintf("; for the target: %d x %s on %d GPUs against agg's %d GPUs", best.Units, best.Label(), best.TotalGPUs, b.GPUs)
	default:
		return fmt.Sprintf("; for the target: agg's %d GPUs against %d x %s on %d GPUs", b.GPUs, best.Units, best.Label(), best.TotalGPUs)
	}
}

// disaggVerdict says whether disaggregation pays: a disagg point on the
// front beside agg, or why not.
func (pl *Planned) disaggVerdict() string {
	return pl.disaggFront() + pl.disaggSizing()
}

// DisaggBest is the xPyD point that is the plan's best over agg and
// disagg together, by the agg best's rule (plan.Result.best): with a
// target the fewest GPUs in total (ties: higher tokens/s per GPU, then per
// user), without one the highest tokens/s per GPU among the points that
// meet the SLOs; nil when the agg best stands or disaggregation was not
// priced.
func (pl *Planned) DisaggBest() *DisaggPoint {
	target := pl.TargetOutput() > 0
	better := func(gpusA, gpusB int, a, b plan.Metrics, perGPUA, perGPUB float64) bool {
		if target && gpusA != gpusB {
			return gpusA < gpusB
		}
		if perGPUA != perGPUB {
			return perGPUA > perGPUB
		}
		return a.PerUser > b.PerUser
	}
	var best *DisaggPoint
	for i := range pl.Disagg {
		d := &pl.Disagg[i]
		if d.Err != "" || !d.MeetsSLO || (target && d.Units == 0) {
			continue
		}
		if best == nil || better(d.TotalGPUs, best.TotalGPUs, d.Metrics, best.Metrics, d.PerGPU, best.PerGPU) {
			best = d
		}
	}
	b := pl.Result.Best
	if best == nil || b == nil {
		return best
	}
	ap := &pl.Result.Points[b.Point]
	if better(best.TotalGPUs, b.GPUs, best.Metrics, ap.Metrics, best.PerGPU, ap.PerGPU) {
		return best
	}
	return nil
}

// disaggBestLine is the best line when an xPyD point is the best: the
// point, its sizing for the target and the agg best it beat.
func (pl *Planned) disaggBestLine(d *DisaggPoint) string {
	s := fmt.Sprintf("%s (disaggregated, KV cache over %s) on %s at concurrency %d: %.1f tok/s/GPU, %.1f tok/s/user, TPOT p99 %.2f ms, %.1f tok/s per copy",
		d.Label(), pl.Plan.DisaggTransfer.Name, d.Decode.Config.GPU.Name, d.Concurrency, d.PerGPU, d.Metrics.PerUser,
		d.Metrics.TPOTP99.Ms(), d.Metrics.OutputTokensPerSecond)
	if d.Units > 0 {
		s += fmt.Sprintf("; for %s: %d copies, %d GPUs", pl.TargetString(), d.Units, d.TotalGPUs)
	}
	if b := pl.Result.Best; b != nil {
		ap := &pl.Result.Points[b.Point]
		s += fmt.Sprintf("; agg best %s: %.1f tok/s/GPU", pl.Result.Candidates[ap.Candidate].Label(), ap.PerGPU)
		if b.TargetOutputTokensPerSecond > 0 {
			s += fmt.Sprintf(", %d GPUs", b.GPUs)
		}
	} else {
		s += "; no agg deployment meets the objectives"
	}
	return s
}

// disaggFront judges the xPyD points against the agg front.
func (pl *Planned) disaggFront() string {
	var best *DisaggPoint
	nfront, nmeet := 0, 0
	for i := range pl.Disagg {
		d := &pl.Disagg[i]
		if d.OnFront {
			nfront++
		}
		if d.Err == "" && d.MeetsSLO {
			nmeet++
			if best == nil || d.PerGPU > best.PerGPU {
				best = d
			}
		}
	}
	switch {
	case len(pl.Disagg) == 0:
		return "disaggregation not priced: no agg deployment meets the SLOs to serve as a decode pool"
	case pl.DisaggBest() != nil:
		return fmt.Sprintf("disaggregation pays: %s is the best deployment over agg and disagg (%d of %d disaggregated points on the front beside agg)",
			pl.DisaggBest().Label(), nfront, len(pl.Disagg))
	case nfront > 0:
		return fmt.Sprintf("disaggregation pays on the front: %d of %d disaggregated points are on it beside agg, the agg best stays the best", nfront, len(pl.Disagg))
	case nmeet == 0:
		return fmt.Sprintf("disaggregation does not pay: none of the %d disaggregated points meets the SLOs", len(pl.Disagg))
	}
	s := fmt.Sprintf("disaggregation does not pay: agg dominates all %d disaggregated points (best %s at %.1f tok/s/GPU, %.1f tok/s/user, prefill pool %.0f%% busy",
		len(pl.Disagg), best.Label(), best.PerGPU, best.Metrics.PerUser, 100*best.PrefillBusy)
	if b := pl.Result.Best; b != nil {
		ap := &pl.Result.Points[b.Point]
		s += fmt.Sprintf("; agg best %.1f tok/s/GPU", ap.PerGPU)
	}
	return s + ")"
}

// disaggRows is the disaggregated points' table.
func (pl *Planned) disaggRows() *report.Table {
	t := &report.Table{Columns: []report.Column{{Name: "deployment"}, {Name: "gpu"}, {Name: "gpus"}, {Name: "conc"},
		{Name: "tok/s/GPU", Text: "%.1f"}, {Name: "tok/s/user", Text: "%.1f"}, {Name: "TTFT p99 ms", Text: "%.1f"},
		{Name: "TPOT p99 ms", Text: "%.2f"}, {Name: "KV xfer ms", Text: "%.3f"}, {Name: "verdict", Left: true}}}
	target := pl.TargetOutput() > 0
	if target {
		t.Columns = append(t.Columns[:len(t.Columns)-1], report.Column{Name: "copies"}, report.Column{Name: "total GPUs"}, t.Columns[len(t.Columns)-1])
	}
	for i := range pl.Disagg {
		d := &pl.Disagg[i]
		row := []any{d.Label(), d.Decode.Config.GPU.Name + " kv " + d.Decode.Config.KVCache.String(), d.GPUs, d.Concurrency, d.PerGPU,
			d.Metrics.PerUser, d.Metrics.TTFTP99.Ms(), d.Metrics.TPOTP99.Ms(), d.KVTransferMean}
		if target {
			row = append(row, d.Units, d.TotalGPUs)
		}
		t.Add(append(row, d.verdict())...)
	}
	return t
}

// disaggCSVRows appends the xPyD points to the CSV of every point (t,
// pointRows' full columns): the layout columns are empty (two pools),
// spec "none", priced by the serving simulation.
func (pl *Planned) disaggCSVRows(t *report.Table) {
	for i := range pl.Disagg {
		d := &pl.Disagg[i]
		var tput, perGPU, perUser, tpot, ttft any
		if d.Err == "" {
			tput, perGPU, perUser = Round6(d.Metrics.OutputTokensPerSecond), Round6(d.PerGPU), Round6(d.Metrics.PerUser)
			tpot, ttft = Round6(d.Metrics.TPOTP99.Ms()), Round6(d.Metrics.TTFTP99.Ms())
		}
		t.Add(d.Label(), d.Decode.Config.GPU.Name, d.GPUs, nil, nil, nil, nil, d.Decode.Config.KVCache.String(), "none",
			d.Decode.Engine.String(), d.Concurrency, nil, tput, perGPU, perUser, tpot, ttft, "disagg: "+d.verdict(), false, d.Err,
			"serving simulation")
	}
}

func (d *DisaggPoint) verdict() string {
	switch {
	case d.Err != "":
		return "error: " + d.Err
	case !d.MeetsSLO:
		return "fails the SLOs"
	case d.OnFront:
		return "on front"
	}
	return "dominated"
}

// planDisaggJSON is one disaggregated point in `plan --format json`.
type planDisaggJSON struct {
	Deployment         string   `json:"deployment"`
	Mode               string   `json:"mode"` // "disagg"
	PrefillWorkers     int      `json:"prefill_workers"`
	PrefillLayout      string   `json:"prefill_layout"`
	DecodeWorkers      int      `json:"decode_workers"`
	DecodeLayout       string   `json:"decode_layout"`
	GPU                string   `json:"gpu"`
	GPUs               int      `json:"gpus"`
	Concurrency        int      `json:"concurrency"`
	OutputTokensPerS   float64  `json:"output_tokens_per_s"`
	TokensPerSPerGPU   float64  `json:"tokens_per_s_per_gpu"`
	TokensPerSPerUser  float64  `json:"tokens_per_s_per_user"`
	TPOTP99Ms          float64  `json:"tpot_p99_ms"`
	TTFTP99Ms          *float64 `json:"ttft_p99_ms"`
	KVTransferMsMean   float64  `json:"kv_transfer_ms_mean"`
	PrefillUtilisation float64  `json:"prefill_utilisation"`
	// Copies and TotalGPUs size the point for the plan's target (null
	// without one): whole copies of the xPyD deployment.
	Copies    *int   `json:"copies"`
	TotalGPUs *int   `json:"total_gpus"`
	Verdict   string `json:"verdict"`
	PricedBy  string `json:"priced_by"`
}

type planDisaggSectionJSON struct {
	Transfer string           `json:"transfer"`
	Points   []planDisaggJSON `json:"points"`
	Verdict  string           `json:"verdict"`
}

func (pl *Planned) disaggJSON() *planDisaggSectionJSON {
	out := &planDisaggSectionJSON{Transfer: pl.Plan.DisaggTransfer.Name, Points: []planDisaggJSON{}, Verdict: pl.disaggVerdict()}
	for i := range pl.Disagg {
		out.Points = append(out.Points, pl.disaggPointJSON(&pl.Disagg[i]))
	}
	return out
}

// disaggFrontRows appends the xPyD points on the front to the front table
// (pointRows' short columns), so the front is agg's and disagg's together.
func (pl *Planned) disaggFrontRows(t *report.Table) {
	best := pl.DisaggBest()
	for i := range pl.Disagg {
		d := &pl.Disagg[i]
		if !d.OnFront {
			continue
		}
		v := "front (disagg)"
		if d == best {
			v += " (best)"
		}
		t.Add(d.Label(), d.Decode.Engine.String(), d.Concurrency, d.PerGPU, d.Metrics.PerUser, d.Metrics.TPOTP99.Ms(),
			d.Metrics.OutputTokensPerSecond, v)
	}
}

func (pl *Planned) disaggPointJSON(d *DisaggPoint) planDisaggJSON {
	j := planDisaggJSON{Deployment: d.Label(), Mode: "disagg", PrefillWorkers: d.X, PrefillLayout: poolLayout(d.Prefill),
		DecodeWorkers: d.Y, DecodeLayout: poolLayout(d.Decode), GPU: d.Decode.Config.GPU.Name, GPUs: d.GPUs,
		Concurrency: d.Concurrency, OutputTokensPerS: Round6(d.Metrics.OutputTokensPerSecond), TokensPerSPerGPU: Round6(d.PerGPU),
		TokensPerSPerUser: Round6(d.Metrics.PerUser), TPOTP99Ms: Round6(d.Metrics.TPOTP99.Ms()), KVTransferMsMean: Round6(d.KVTransferMean),
		PrefillUtilisation: Round6(d.PrefillBusy),
		Verdict:            d.verdict(), PricedBy: "serving simulation"}
	if d.Err == "" {
		v := Round6(d.Metrics.TTFTP99.Ms())
		j.TTFTP99Ms = &v
	}
	if d.Units > 0 {
		j.Copies, j.TotalGPUs = new(d.Units), new(d.TotalGPUs)
	}
	return j
}

// disaggText writes the disaggregated section of the text output.
func (pl *Planned) disaggText(w *strings.Builder) {
	fmt.Fprintf(w, "\ndisaggregated (xPyD: x prefill + y decode instances, KV cache over %s; serving simulation)\n", pl.Plan.DisaggTransfer.Name)
	_ = pl.disaggRows().Render(w, report.Text)
	fmt.Fprintln(w, "verdict   "+pl.disaggVerdict())
}
