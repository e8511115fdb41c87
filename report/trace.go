package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/trace"
)

// TraceSummary is the report of `moecast trace summary`: one block per rank
// (file) and the aggregation over ranks. Its JSON form is the contract of
// `--format json`.
type TraceSummary struct {
	Files        []string             `json:"files"`
	Ranks        []TraceRank          `json:"ranks"`
	Unclassified []UnclassifiedKernel `json:"unclassified"`
	Warnings     []string             `json:"warnings"`

	steps   int
	results []trace.FileResult
}

// TraceRank is one rank's (file's) steps and summary.
type TraceRank struct {
	Rank    int              `json:"rank"`
	File    string           `json:"file"`
	Steps   []TraceStep      `json:"steps"`
	Summary TraceRankSummary `json:"summary"`
}

// TraceStep is one step of a rank, times in milliseconds.
type TraceStep struct {
	Index        int                `json:"index"`
	Kind         string             `json:"kind"`
	Batch        int                `json:"batch"`
	Label        string             `json:"label"`
	WallMs       float64            `json:"wall_ms"`
	BusyMs       float64            `json:"busy_ms"`
	IdleMs       float64            `json:"idle_ms"`
	ByCategoryMs map[string]float64 `json:"by_category_ms"`
	ExposedMs    map[string]float64 `json:"exposed_ms"`
}

// TraceRankSummary condenses a rank's steps (trace.Summary in ms).
type TraceRankSummary struct {
	Steps        int                `json:"steps"`
	MedianStepMs float64            `json:"median_step_ms"`
	P10StepMs    float64            `json:"p10_step_ms"`
	P90StepMs    float64            `json:"p90_step_ms"`
	ByCategoryMs map[string]float64 `json:"by_category_ms"`
	Share        map[string]float64 `json:"share"`
}

// UnclassifiedKernel is a kernel no rule matched, summed over ranks.
type UnclassifiedKernel struct {
	Name    string  `json:"name"`
	Count   int     `json:"count"`
	TotalMs float64 `json:"total_ms"`
}

// traceCategories are the categories a trace reports: all but launch (a
// predicted-only category; launches show as idle in a trace).
func traceCategories() []cost.Category {
	var out []cost.Category
	for c := range cost.NumCategories {
		if c != cost.Launch {
			out = append(out, c)
		}
	}
	return out
}

func ms(d unit.Seconds) float64 { return d.Ms() }

func catMap(v [cost.NumCategories]unit.Seconds) map[string]float64 {
	m := make(map[string]float64, cost.NumCategories)
	for _, c := range traceCategories() {
		m[c.String()] = ms(v[c])
	}
	return m
}

// NewTraceSummary builds the report of the analysed files (results without
// Err, in rank order as given): each rank's steps and summary, its warnings
// prefixed with its file, and the unclassified kernels summed over ranks,
// by total time.
func NewTraceSummary(results []trace.FileResult) *TraceSummary {
	rep := &TraceSummary{Files: []string{}, Ranks: []TraceRank{}, Unclassified: []UnclassifiedKernel{}, Warnings: []string{}, results: results}
	unc := map[string]*UnclassifiedKernel{}
	for _, fr := range results {
		rep.Files = append(rep.Files, fr.File)
		r := fr.Result
		for _, w := range r.Warnings {
			rep.Warnings = append(rep.Warnings, fr.File+": "+w)
		}
		tr := TraceRank{Rank: fr.Rank, File: fr.File, Steps: []TraceStep{}}
		for _, st := range r.Steps {
			tr.Steps = append(tr.Steps, TraceStep{
				Index: st.Index, Kind: st.Kind.String(), Batch: st.Batch, Label: st.Label,
				WallMs: ms(st.Wall), BusyMs: ms(st.Busy), IdleMs: ms(st.Idle),
				ByCategoryMs: catMap(st.ByCategory), ExposedMs: catMap(st.Exposed),
			})
		}
		sm := fr.Summary
		tr.Summary = TraceRankSummary{
			Steps: sm.Steps, MedianStepMs: ms(sm.Median), P10StepMs: ms(sm.P10), P90StepMs: ms(sm.P90),
			ByCategoryMs: catMap(sm.ByCategory), Share: map[string]float64{},
		}
		if sm.Steps == 0 {
			tr.Summary.MedianStepMs, tr.Summary.P10StepMs, tr.Summary.P90StepMs = 0, 0, 0
		}
		for _, c := range traceCategories() {
			tr.Summary.Share[c.String()] = sm.Share[c]
		}
		rep.steps += sm.Steps
		rep.Ranks = append(rep.Ranks, tr)
		for _, k := range r.Unclassified() {
			u := unc[k.Name]
			if u == nil {
				u = &UnclassifiedKernel{Name: k.Name}
				unc[k.Name] = u
			}
			u.Count += k.Count
			u.TotalMs += ms(k.Total)
		}
	}
	for _, u := range unc {
		rep.Unclassified = append(rep.Unclassified, *u)
	}
	sort.Slice(rep.Unclassified, func(i, j int) bool {
		a, b := rep.Unclassified[i], rep.Unclassified[j]
		if a.TotalMs != b.TotalMs {
			return a.TotalMs > b.TotalMs
		}
		return a.Name < b.Name
	})
	return rep
}

// Steps is the number of steps over all ranks.
func (rep *TraceSummary) Steps() int { return rep.steps }

// Render writes the report in format f: JSON the contract types, CSV the
// step table, text one block per rank with the aggregation over ranks.
// Warnings are the caller's to print (text and CSV) or are in the JSON.
func (rep *TraceSummary) Render(w io.Writer, f Format) error {
	switch f {
	case JSON:
		return WriteJSON(w, rep)
	case CSV:
		return rep.StepTable().Render(w, CSV)
	}
	return rep.writeText(w)
}

// StepTable is the CSV form: one row per step and rank.
func (rep *TraceSummary) StepTable() *Table {
	cols := []Column{{Name: "rank"}, {Name: "file"}, {Name: "index"}, {Name: "kind"}, {Name: "batch"}, {Name: "label"},
		{Name: "wall_ms"}, {Name: "busy_ms"}, {Name: "idle_ms"}}
	var cats []cost.Category // idle is the idle_ms column already
	for _, c := range traceCategories() {
		if c != cost.Idle {
			cats = append(cats, c)
		}
	}
	for _, c := range cats {
		cols = append(cols, Column{Name: c.String() + "_ms"})
	}
	for _, c := range cats {
		cols = append(cols, Column{Name: c.String() + "_exposed_ms"})
	}
	t := &Table{Columns: cols}
	for _, r := range rep.Ranks {
		for _, st := range r.Steps {
			row := []any{r.Rank, r.File, st.Index, st.Kind, st.Batch, st.Label, st.WallMs, st.BusyMs, st.IdleMs}
			for _, c := range cats {
				row = append(row, st.ByCategoryMs[c.String()])
			}
			for _, c := range cats {
				row = append(row, st.ExposedMs[c.String()])
			}
			t.Add(row...)
		}
	}
	return t
}

// writeText writes one block per rank, the collective spread over ranks and
// the unclassified kernels.
func (rep *TraceSummary) writeText(w io.Writer) error {
	for i, fr := range rep.results {
		r := rep.Ranks[i]
		sm := fr.Summary
		fmt.Fprintf(w, "rank %d  %s\n", r.Rank, r.File)
		if sm.Steps == 0 {
			fmt.Fprintf(w, "  no steps\n\n")
			continue
		}
		kinds := stepKinds(fr.Result.Steps)
		plural := "s"
		if sm.Steps == 1 {
			plural = ""
		}
		fmt.Fprintf(w, "  %d step%s (%s, from %s)  step median %.3f ms  p10 %.3f  p90 %.3f\n",
			sm.Steps, plural, kinds, fr.Result.Source, ms(sm.Median), ms(sm.P10), ms(sm.P90))
		t := &Table{Columns: []Column{
			{Name: "category", Left: true}, {Name: "median_ms", Text: "%.3f"}, {Name: "share_%", Text: "%.1f"}, {Name: "exposed_ms", Text: "%.3f"},
		}}
		top, topShare := cost.Category(0), -1.0
		for _, c := range traceCategories() {
			if sm.Share[c] == 0 && sm.ByCategory[c] == 0 {
				continue
			}
			t.Add(c.String(), ms(sm.ByCategory[c]), 100*sm.Share[c], ms(sm.Exposed[c]))
			if c != cost.Idle && sm.Share[c] > topShare {
				top, topShare = c, sm.Share[c]
			}
		}
		var b strings.Builder
		if err := t.Render(&b, Text); err != nil {
			return err
		}
		for _, line := range strings.SplitAfter(b.String(), "\n") {
			if line != "" {
				fmt.Fprint(w, "  "+line)
			}
		}
		fmt.Fprintf(w, "  %s %.0f%% of the step on rank %d", top, 100*topShare, r.Rank)
		for _, c := range traceCategories() {
			if c.IsCollective() && c != top && sm.Share[c] >= 0.005 {
				fmt.Fprintf(w, "; %s %.0f%%", c, 100*sm.Share[c])
			}
		}
		fmt.Fprint(w, "\n\n")
	}
	if sp := trace.CollectiveSpread(rep.results); len(rep.results) > 1 && len(sp) > 0 {
		fmt.Fprintf(w, "collective time per step over ranks (median per step, ms)\n")
		t := &Table{Columns: []Column{{Name: "category", Left: true}, {Name: "ranks"}, {Name: "min", Text: "%.3f"},
			{Name: "median", Text: "%.3f"}, {Name: "max", Text: "%.3f"}, {Name: "min_rank"}, {Name: "max_rank"}}}
		for _, x := range sp {
			t.Add(x.Category.String(), x.Ranks, ms(x.Min), ms(x.Median), ms(x.Max), x.MinRank, x.MaxRank)
		}
		if err := t.Render(w, Text); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if n := len(rep.Unclassified); n > 0 {
		fmt.Fprintf(w, "unclassified kernels (category other; add a rule with --rules), by total time:\n")
		t := &Table{Columns: []Column{{Name: "total_ms", Text: "%.3f"}, {Name: "count"}, {Name: "kernel", Left: true}}}
		for i, u := range rep.Unclassified {
			if i == 10 {
				break
			}
			t.Add(u.TotalMs, u.Count, shortKernelName(u.Name))
		}
		if err := t.Render(w, Text); err != nil {
			return err
		}
		if n > 10 {
			fmt.Fprintf(w, "... and %d more (--format json lists them all)\n", n-10)
		}
	}
	return nil
}

// stepKinds counts the steps per kind: "1 decode", "3 prefill, 5 decode".
func stepKinds(steps []trace.StepResult) string {
	n := map[trace.StepKind]int{}
	for _, s := range steps {
		n[s.Kind]++
	}
	var parts []string
	for _, k := range []trace.StepKind{trace.KindDecode, trace.KindPrefill, trace.KindMixed, trace.KindUnknown} {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

// Views of the trace summary: the report renders every format; its
// warnings go to stderr before the text and CSV forms (JSON holds them).
func (rep *TraceSummary) Views() Views {
	return Views{Render: rep.Render, Warnings: rep.Warnings, WarnOn: []Format{Text, CSV}}
}
