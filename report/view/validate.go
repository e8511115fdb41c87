package view

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/validate"
)

type validateCategoryJSON struct {
	MeasuredMs        float64 `json:"measured_ms"`
	PredictedMs       float64 `json:"predicted_ms"`
	MeasuredExposedMs float64 `json:"measured_exposed_ms"`
	ErrorMs           float64 `json:"error_ms"`
	// ErrorPct is null for a category the trace measured none of.
	ErrorPct *float64 `json:"error_pct"`
}

type validateOpJSON struct {
	Op             string  `json:"op"`
	Category       string  `json:"category"`
	Count          int     `json:"count"`
	PredictedCount float64 `json:"predicted_count"`
	MeasuredUs     float64 `json:"measured_us"`
	PredictedUs    float64 `json:"predicted_us"`
	Source         string  `json:"source"`
	// Parts: the predicted ops of a pool of different ops (a mixed
	// step's attention: the chunks' and the decodes'); omitted otherwise.
	Parts []ValidatePartJSON `json:"parts,omitempty"`
}

// ValidatePartJSON is one predicted op of a pooled op's "parts" in
// `validate trace --format json`.
type ValidatePartJSON struct {
	Op          string  `json:"op"`
	Shape       string  `json:"shape"`
	Occurrences float64 `json:"occurrences"`
	PredictedUs float64 `json:"predicted_us"`
	PredictedMs float64 `json:"predicted_total_ms"`
}

type validateKernelJSON struct {
	Name     string  `json:"name"`
	Category string  `json:"category"`
	Op       string  `json:"op"`
	Count    int     `json:"count"`
	TotalMs  float64 `json:"total_ms"`
}

type validateStepJSON struct {
	File        string                          `json:"file"`
	Rank        int                             `json:"rank"`
	Index       int                             `json:"index"`
	Label       string                          `json:"label"`
	Kind        string                          `json:"kind"`
	Batch       int                             `json:"batch"`
	Context     int                             `json:"context"`
	Decodes     int                             `json:"decodes"`
	Prefills    int                             `json:"prefills"`
	PrefillToks int                             `json:"prefill_tokens"`
	Prefix      int                             `json:"prefix_tokens"`
	Tokens      int                             `json:"tokens"`
	UnmappedMs  float64                         `json:"unmapped_ms"`
	LaunchMs    float64                         `json:"predicted_launch_ms"`
	MeasuredMs  float64                         `json:"measured_ms"`
	PredictedMs float64                         `json:"predicted_ms"`
	ErrorPct    float64                         `json:"error_pct"`
	WallMs      float64                         `json:"wall_ms"`
	IdleMs      float64                         `json:"idle_ms"`
	Categories  map[string]validateCategoryJSON `json:"categories"`
	Ops         []validateOpJSON                `json:"ops"`
	Missing     []validateOpJSON                `json:"missing"`
	LeftOut     []validateKernelJSON            `json:"left_out"`
}

type validateSplitJSON struct {
	Index      int     `json:"index"`
	Category   string  `json:"category"`
	Ranks      int     `json:"ranks"`
	TransferMs float64 `json:"transfer_ms"`
	MaxWaitMs  float64 `json:"max_wait_ms"`
	MeanWaitMs float64 `json:"mean_wait_ms"`
	MinRank    int     `json:"min_rank"`
	MaxRank    int     `json:"max_rank"`
}

type validateSpreadJSON struct {
	Category      string  `json:"category"`
	Ranks         int     `json:"ranks"`
	Collectives   int     `json:"collectives"`
	Unpaired      int     `json:"unpaired"`
	StartSpreadUs float64 `json:"start_spread_us"`
	TransferUs    float64 `json:"transfer_us"`
	MaxWaitUs     float64 `json:"max_wait_us"`
	MeanWaitUs    float64 `json:"mean_wait_us"`
	TotalWaitMs   float64 `json:"total_wait_ms"`
	TotalMs       float64 `json:"total_ms"`
	LastRank      int     `json:"last_rank"`
	LastRankRuns  int     `json:"last_rank_runs"`
}

type validateImbalanceJSON struct {
	EP          int     `json:"ep"`
	Tokens      int     `json:"tokens"`
	Pairs       float64 `json:"busiest_pairs"`
	MeanPairs   float64 `json:"mean_pairs"`
	Touched     float64 `json:"busiest_experts"`
	MeanTouched float64 `json:"mean_experts"`
}

type validateSummaryJSON struct {
	Steps          int     `json:"steps"`
	MedianErrorPct float64 `json:"median_error_pct"`
	WorstCategory  string  `json:"worst_category"`
	WorstMissMs    float64 `json:"worst_category_miss_ms"`
}

type ValidateJSON struct {
	Scenario    string                 `json:"scenario"`
	Trace       []string               `json:"trace"`
	Steps       []validateStepJSON     `json:"steps"`
	Collectives []validateSplitJSON    `json:"collectives"`
	Spreads     []validateSpreadJSON   `json:"collective_spreads"`
	Imbalance   *validateImbalanceJSON `json:"predicted_imbalance"`
	Summary     validateSummaryJSON    `json:"summary"`
	Warnings    []string               `json:"warnings"`
}

func opJSON(o validate.OpCompare) validateOpJSON {
	js := validateOpJSON{Op: o.Op, Category: o.Category.String(), Count: o.Count, PredictedCount: Round6(o.PredictedCount),
		MeasuredUs: Round6(o.Measured.Us()), PredictedUs: Round6(o.Predicted.Us()), Source: o.Source}
	for _, p := range o.Parts() {
		js.Parts = append(js.Parts, ValidatePartJSON{Op: p.Op, Shape: p.Shape, Occurrences: Round6(p.Occurrences),
			PredictedUs: Round6(p.Predicted.Us()), PredictedMs: Round6((p.Predicted * unit.Seconds(p.Occurrences)).Ms())})
	}
	return js
}

func ValidateJSONOf(sc *scenarios.Scenario, rep *validate.Report) ValidateJSON {
	out := ValidateJSON{Scenario: sc.Name, Trace: rep.Files, Steps: []validateStepJSON{}, Collectives: []validateSplitJSON{}, Spreads: []validateSpreadJSON{},
		Warnings: append([]string{}, rep.Warnings...)}
	for i := range rep.Steps {
		st := &rep.Steps[i]
		js := validateStepJSON{File: st.File, Rank: st.Rank, Index: st.Index, Kind: st.Kind.String(), Label: st.Label, Batch: st.Batch, Context: st.Context,
			Decodes: st.Decodes, Prefills: st.Prefills, PrefillToks: st.PrefillTokens, Prefix: st.Prefix, Tokens: st.Tokens, UnmappedMs: Round6(st.Unmapped().Ms()), LaunchMs: Round6(st.PredictedLaunch.Ms()),
			MeasuredMs: Round6(st.Measured.Ms()), PredictedMs: Round6(st.Predicted.Ms()), ErrorPct: Round6(st.ErrorPct()),
			WallMs: Round6(st.Wall.Ms()), IdleMs: Round6(st.Idle.Ms()),
			Categories: map[string]validateCategoryJSON{}, Ops: []validateOpJSON{}, Missing: []validateOpJSON{}, LeftOut: []validateKernelJSON{}}
		for c, cc := range st.Categories {
			if cc.Measured == 0 && cc.Predicted == 0 {
				continue
			}
			js.Categories[validateCatName(c)] = validateCategoryJSON{MeasuredMs: Round6(cc.Measured.Ms()), PredictedMs: Round6(cc.Predicted.Ms()),
				MeasuredExposedMs: Round6(cc.Exposed.Ms()), ErrorMs: Round6((cc.Predicted - cc.Measured).Ms()), ErrorPct: r6p(catPct(cc))}
		}
		for _, o := range st.Ops {
			js.Ops = append(js.Ops, opJSON(o))
		}
		for _, o := range st.Missing {
			js.Missing = append(js.Missing, opJSON(o))
		}
		for _, k := range st.LeftOut {
			js.LeftOut = append(js.LeftOut, validateKernelJSON{Name: k.Name, Category: k.Category.String(), Op: k.Op, Count: k.Count, TotalMs: Round6(k.Total.Ms())})
		}
		out.Steps = append(out.Steps, js)
	}
	for _, sp := range rep.Splits {
		out.Collectives = append(out.Collectives, validateSplitJSON{Index: sp.Index, Category: sp.Category.String(), Ranks: sp.Ranks,
			TransferMs: Round6(sp.Transfer.Ms()), MaxWaitMs: Round6(sp.MaxWait.Ms()), MeanWaitMs: Round6(sp.MeanWait.Ms()), MinRank: sp.MinRank, MaxRank: sp.MaxRank})
	}
	for _, sp := range rep.Spreads {
		out.Spreads = append(out.Spreads, validateSpreadJSON{Category: sp.Category.String(), Ranks: sp.Ranks, Collectives: sp.Collectives,
			Unpaired: sp.Unpaired, StartSpreadUs: Round6(sp.StartSpread.Us()), TransferUs: Round6(sp.Transfer.Us()), MaxWaitUs: Round6(sp.MaxWait.Us()),
			MeanWaitUs: Round6(sp.MeanWait.Us()), TotalWaitMs: Round6(sp.TotalWait.Ms()), TotalMs: Round6(sp.TotalTime.Ms()),
			LastRank: sp.LastRank, LastRankRuns: sp.LastRankRuns})
	}
	if im := rep.Imbalance; im != nil {
		out.Imbalance = &validateImbalanceJSON{EP: im.EP, Tokens: im.Tokens, Pairs: Round6(im.Pairs), MeanPairs: Round6(im.MeanPairs),
			Touched: Round6(im.Touched), MeanTouched: Round6(im.MeanTouched)}
	}
	out.Summary = validateSummaryJSON{Steps: len(rep.Steps), MedianErrorPct: Round6(rep.MedianErrorPct),
		WorstCategory: rep.WorstCategory.String(), WorstMissMs: Round6(rep.WorstMiss.Ms())}
	return out
}

func validateCatName(c int) string { return cost.Category(c).String() }

// catPct is a category's error in percent of what was measured; nil (shown
// as "-", null in JSON) when the trace measured none of it: no percentage
// of zero exists, and "+0.0%" would say the prediction was right.
func catPct(cc validate.CategoryCompare) *float64 {
	if cc.Measured <= 0 {
		return nil
	}
	v := float64((cc.Predicted - cc.Measured) / cc.Measured * 100)
	return &v
}

// pctCell is catPct as a table cell (nil: "-").
func pctCell(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// ValidateCSV writes one row per (step, op), with the step's figures
// repeated, so that a spreadsheet can filter it.
func ValidateCSV(w io.Writer, rep *validate.Report) error {
	t := &report.Table{Columns: []report.Column{{Name: "file"}, {Name: "rank"}, {Name: "index"}, {Name: "batch"}, {Name: "kind"},
		{Name: "name"}, {Name: "category"}, {Name: "count"}, {Name: "predicted_count"}, {Name: "measured_us"},
		{Name: "predicted_us"}, {Name: "measured_ms"}, {Name: "predicted_ms"}, {Name: "source"}}}
	for i := range rep.Steps {
		st := &rep.Steps[i]
		t.Add(st.File, st.Rank, st.Index, st.Batch, "step", st.Label, "", "", "", "", "", Round6(st.Measured.Ms()), Round6(st.Predicted.Ms()), "")
		for c, cc := range st.Categories {
			if cc.Measured == 0 && cc.Predicted == 0 {
				continue
			}
			t.Add(st.File, st.Rank, st.Index, st.Batch, "category", validateCatName(c), validateCatName(c), "", "", "", "",
				Round6(cc.Measured.Ms()), Round6(cc.Predicted.Ms()), "")
		}
		for _, o := range st.Ops {
			t.Add(st.File, st.Rank, st.Index, st.Batch, "op", o.Op, o.Category.String(), o.Count, Round6(o.PredictedCount),
				Round6(o.Measured.Us()), Round6(o.Predicted.Us()), Round6(o.MeasuredTotal.Ms()), Round6(o.PredictedTotal.Ms()), o.Source)
		}
		for _, o := range st.Missing {
			t.Add(st.File, st.Rank, st.Index, st.Batch, "missing", o.Op, o.Category.String(), 0, Round6(o.PredictedCount),
				"", Round6(o.Predicted.Us()), 0, Round6(o.PredictedTotal.Ms()), o.Source)
		}
		for _, k := range st.LeftOut {
			t.Add(st.File, st.Rank, st.Index, st.Batch, "left_out", k.Name, k.Category.String(), k.Count, 0,
				"", "", Round6(k.Total.Ms()), 0, "")
		}
	}
	return t.Render(w, report.CSV)
}

func ValidateText(w io.Writer, sc *scenarios.Scenario, rep *validate.Report) error {
	fmt.Fprintf(w, "scenario  %s (%s)\n", sc.Name, sc.File)
	detail := detailSteps(rep)
	if len(detail) < len(rep.Steps) {
		fmt.Fprintf(w, "\n%d steps; in detail below: the step of median error of each rank (--format json has every step)\n", len(rep.Steps))
		t := &report.Table{Columns: []report.Column{{Name: "rank"}, {Name: "step"}, {Name: "kind"}, {Name: "batch"}, {Name: "tokens"}, {Name: "context"}, {Name: "measured ms", Text: "%.3f"},
			{Name: "predicted ms", Text: "%.3f"}, {Name: "error", Text: "%+.1f%%"}}}
		for i := range rep.Steps {
			st := &rep.Steps[i]
			t.Add(st.Rank, st.Index, st.Kind.String(), st.Batch, st.Tokens, st.Context, st.Measured.Ms(), st.Predicted.Ms(), st.ErrorPct())
		}
		if err := t.Render(w, report.Text); err != nil {
			return err
		}
	}
	for _, i := range detail {
		st := &rep.Steps[i]
		fmt.Fprintf(w, "\nrank %d  %s  step %d %q  batch %d  context %d\n", st.Rank, st.File, st.Index, st.Label, st.Batch, st.Context)
		if st.Prefills > 0 {
			fmt.Fprintf(w, "  %s step: %d prefill requests, %d new tokens on %d cached; %d decodes; %d tokens in all\n",
				st.Kind, st.Prefills, st.PrefillTokens, st.Prefix, st.Decodes, st.Tokens)
		}
		fmt.Fprintf(w, "  measured %.3f ms busy (wall %.3f, idle %.3f)  predicted %.3f ms  error %+.1f%%\n",
			st.Measured.Ms(), st.Wall.Ms(), st.Idle.Ms(), st.Predicted.Ms(), st.ErrorPct())
		if st.PredictedLaunch > 0 {
			fmt.Fprintf(w, "  (predicted busy; the %.3f ms of host launch time predicted for this eager step is apart, as the measured idle is)\n", st.PredictedLaunch.Ms())
		}
		ct := &report.Table{Columns: []report.Column{{Name: "category"}, {Name: "measured ms", Text: "%.3f"}, {Name: "exposed ms", Text: "%.3f"},
			{Name: "predicted ms", Text: "%.3f"}, {Name: "error ms", Text: "%+.3f"}, {Name: "error", Text: "%+.1f%%"}}}
		for c, cc := range st.Categories {
			if cc.Measured == 0 && cc.Predicted == 0 {
				continue
			}
			ct.Add(validateCatName(c), cc.Measured.Ms(), cc.Exposed.Ms(), cc.Predicted.Ms(), (cc.Predicted - cc.Measured).Ms(), pctCell(catPct(cc)))
		}
		if err := ct.Render(w, report.Text); err != nil {
			return err
		}
		fmt.Fprintln(w, "  ops, largest absolute miss first (count: kernels per step; time: mean per occurrence)")
		ot := &report.Table{Columns: []report.Column{{Name: "op"}, {Name: "category"}, {Name: "count"}, {Name: "predicted", Text: "%g"},
			{Name: "measured us", Text: "%.2f"}, {Name: "predicted us", Text: "%.2f"}, {Name: "pred-meas ms", Text: "%+.3f"},
			{Name: "source", Left: true}}}
		for _, o := range st.Ops {
			ot.Add(shortName(o.Op, 60), o.Category.String(), o.Count, math.Round(o.PredictedCount*100)/100, o.Measured.Us(), o.Predicted.Us(),
				(o.PredictedTotal - o.MeasuredTotal).Ms(), shortName(o.Source, 110))
		}
		if err := ot.Render(w, report.Text); err != nil {
			return err
		}
		for _, o := range st.Ops {
			parts := o.Parts()
			if len(parts) == 0 {
				continue
			}
			fmt.Fprintf(w, "  %s: one pool of kernels, %.3f ms measured against %.3f ms predicted; the prediction's parts:\n",
				shortName(o.Op, 60), o.MeasuredTotal.Ms(), o.PredictedTotal.Ms())
			for _, p := range parts {
				fmt.Fprintf(w, "    %s: %g x %.2f us = %.3f ms  (%s)\n", p.Op, p.Occurrences, p.Predicted.Us(),
					(p.Predicted * unit.Seconds(p.Occurrences)).Ms(), shortName(p.Shape, 110))
			}
		}
		if len(st.LeftOut) > 0 {
			var sum unit.Seconds
			for _, k := range st.LeftOut {
				sum += k.Total
			}
			fmt.Fprintf(w, "  left out of the prediction (kernels mapped to no op): %.3f ms (%.1f%% of the busy time)\n", sum.Ms(), pctOf(sum, st.Measured))
			lt := &report.Table{Columns: []report.Column{{Name: "kernel"}, {Name: "category"}, {Name: "op"}, {Name: "count"}, {Name: "total ms", Text: "%.3f"}}}
			for _, k := range st.LeftOut {
				lt.Add(shortName(k.Name, 70), k.Category.String(), k.Op, k.Count, k.Total.Ms())
			}
			if err := lt.Render(w, report.Text); err != nil {
				return err
			}
		}
		if len(st.Missing) > 0 {
			fmt.Fprintln(w, "  predicted but not in the trace:")
			for _, o := range st.Missing {
				fmt.Fprintf(w, "    %s (%s): %g x %.2f us = %.3f ms\n", o.Op, o.Category, o.PredictedCount, o.Predicted.Us(), o.PredictedTotal.Ms())
			}
		}
	}
	if len(rep.Splits) > 0 {
		fmt.Fprintln(w, "\ncollectives across ranks, per step: transfer = the shortest rank's time of the category, wait = a rank's time beyond it; medians over steps")
		t := &report.Table{Columns: []report.Column{{Name: "category"}, {Name: "steps"}, {Name: "ranks"}, {Name: "transfer ms", Text: "%.3f"},
			{Name: "max wait ms", Text: "%.3f"}, {Name: "mean wait ms", Text: "%.3f"}, {Name: "wait share", Text: "%.1f%%"}}}
		for _, a := range validate.SplitMedians(rep.Splits) {
			share := 0.0
			if tot := a.Transfer + a.MeanWait; tot > 0 {
				share = float64(a.MeanWait / tot * 100)
			}
			t.Add(a.Category.String(), a.Index, a.Ranks, a.Transfer.Ms(), a.MaxWait.Ms(), a.MeanWait.Ms(), share)
		}
		if err := t.Render(w, report.Text); err != nil {
			return err
		}
	}
	if len(rep.Spreads) > 0 {
		fmt.Fprintln(w, "\ncollective kernels paired across ranks by order: start spread = latest start - earliest; transfer = the shortest rank's duration; wait = a rank's duration beyond it (medians per collective)")
		t := &report.Table{Columns: []report.Column{{Name: "category"}, {Name: "ranks"}, {Name: "collectives"}, {Name: "start spread us", Text: "%.2f"},
			{Name: "transfer us", Text: "%.2f"}, {Name: "max wait us", Text: "%.2f"}, {Name: "mean wait us", Text: "%.2f"},
			{Name: "wait share", Text: "%.1f%%"}, {Name: "last to start", Left: true}}}
		for _, sp := range rep.Spreads {
			share := 0.0
			if sp.TotalTime > 0 {
				share = float64(sp.TotalWait / sp.TotalTime * 100)
			}
			t.Add(sp.Category.String(), sp.Ranks, sp.Collectives, sp.StartSpread.Us(), sp.Transfer.Us(), sp.MaxWait.Us(), sp.MeanWait.Us(),
				share, fmt.Sprintf("rank %d (%d of %d)", sp.LastRank, sp.LastRankRuns, sp.Collectives))
		}
		if err := t.Render(w, report.Text); err != nil {
			return err
		}
	}
	if im := rep.Imbalance; im != nil {
		fmt.Fprintf(w, "\npredicted MoE imbalance (routing model, uniform routing, EP%d, %d tokens): busiest rank %.1f token-expert pairs vs %.1f on average (%.2fx), %.1f distinct experts read vs %.1f (%.2fx)\n",
			im.EP, im.Tokens, im.Pairs, im.MeanPairs, ratio(im.Pairs, im.MeanPairs), im.Touched, im.MeanTouched, ratio(im.Touched, im.MeanTouched))
	}
	fmt.Fprintf(w, "\nsummary  %d steps  median error %+.1f%%  worst category %s (%.3f ms missed in all)\n",
		len(rep.Steps), rep.MedianErrorPct, rep.WorstCategory, rep.WorstMiss.Ms())
	return nil
}

func shortName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// detailSteps are the steps the text output shows in full: all of them up
// to four, else the step of median error of each rank.
func detailSteps(rep *validate.Report) []int {
	if len(rep.Steps) <= 4 {
		out := make([]int, len(rep.Steps))
		for i := range out {
			out[i] = i
		}
		return out
	}
	byFile := map[string][]int{}
	var files []string
	for i := range rep.Steps {
		f := rep.Steps[i].File
		if byFile[f] == nil {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], i)
	}
	var out []int
	for _, f := range files {
		idx := append([]int{}, byFile[f]...)
		sort.SliceStable(idx, func(a, b int) bool { return rep.Steps[idx[a]].ErrorPct() < rep.Steps[idx[b]].ErrorPct() })
		out = append(out, idx[(len(idx)-1)/2])
	}
	return out
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// pctOf is part as a percentage of whole (0 when whole is 0).
func pctOf(part, whole unit.Seconds) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part / whole * 100)
}

// ValidateViews are `validate trace`'s views: the JSON document, the CSV
// tables and the text report, each rendered by its function above; the
// warnings go to stderr before the text report.
func ValidateViews(sc *scenarios.Scenario, rep *validate.Report) report.Views {
	return report.Views{
		Page: func() *report.Page { return ValidateTracePage(sc, rep) },
		Render: func(w io.Writer, f report.Format) error {
			switch f {
			case report.JSON:
				return report.WriteJSON(w, ValidateJSONOf(sc, rep))
			case report.CSV:
				return ValidateCSV(w, rep)
			}
			return ValidateText(w, sc, rep)
		},
		Warnings: rep.Warnings, WarnOn: []report.Format{report.Text},
	}
}
