package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/trace"
)

func newTraceCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Break down torch.profiler traces of vLLM and SGLang by step and category",
		Long: `Read torch.profiler (Kineto) Chrome-trace files, plain or gzip, as vLLM
(--profiler-config, /start_profile) and SGLang (/start_profile) write them,
one per rank, and report what a step costs and where the time goes, with
the categories "moecast predict" uses.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return c.Help() },
	}
	cmd.AddCommand(newTraceSummaryCmd(s), newTraceKernelsCmd(s))
	return cmd
}

// traceSummaryOptions are the inputs of `moecast trace summary`.
type traceSummaryOptions struct {
	Inputs []string
	Kind   string // "" (all), decode, prefill, mixed
	Step   string // regex of step annotations
	Rules  string // extra rule file
	Gap    string // idle gap that separates steps without annotations ("1ms")
	Format string
	Strict bool
}

func newTraceSummaryCmd(s *streams) *cobra.Command {
	opts := &traceSummaryOptions{}
	cmd := &cobra.Command{
		Use:   "summary FILE|DIR...",
		Short: "Per-step time and its breakdown by category, per rank",
		Long: `Delimit steps and break each down by category, per rank.

Steps come from annotations: vLLM execute_*context_*generation_* (or the
gpu_model_runner scopes), SGLang step[DECODE bs=N] / step[EXTEND ...] /
step[MIXED ...], torch ProfilerStep#N, or --step REGEX; kernels, including
those replayed from a CUDA graph, belong to the step whose annotation
encloses their launch. Without annotations each CUDA-graph launch is a
step; without those, steps are split at GPU idle gaps longer than --gap.

Per step: wall time (first kernel start to last kernel end, widened to the
GPU-side annotation), busy time (union of kernel intervals over streams),
idle = wall - busy, kernel time per category, and exposed time per category
(time in which that category runs and no other does). Summary: median, p10
and p90 over steps; share = category kernel time / wall time, summed over
steps. A directory stands for the *.json and *.json.gz traces in it (one
per rank); files are read concurrently.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Inputs = args
			return runTraceSummary(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Kind, "kind", "", "keep only steps of this kind: decode, prefill or mixed")
	f.StringVar(&opts.Step, "step", "", "regular expression of the step annotations (named groups batch and kind are read)")
	f.StringVar(&opts.Rules, "rules", "", "TOML file of [[rule]] match/category/op, tried before the built-in rules")
	f.StringVar(&opts.Gap, "gap", "1ms", "GPU idle gap that separates steps when a trace has no annotations or graph launches")
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	f.BoolVar(&opts.Strict, "strict", false, "fail on a malformed event or a trace cut short instead of warning")
	return cmd
}

// traceOptions turns the shared flags into analysis options.
func traceOptions(kind, step, rules, gap string) (trace.Options, error) {
	var o trace.Options
	if kind != "" {
		k, ok := trace.ParseStepKind(kind)
		if !ok || k == trace.KindUnknown {
			return o, inputErrf("--kind: unknown step kind %q (want decode, prefill or mixed)", kind)
		}
		o.Kind = k
	}
	if step != "" {
		re, err := regexp.Compile(step)
		if err != nil {
			return o, inputErrf("--step: %v", err)
		}
		o.Step = re
	}
	o.Rules = trace.DefaultRules()
	if rules != "" {
		data, err := os.ReadFile(rules)
		if err != nil {
			return o, inputErrf("--rules: %v", err)
		}
		user, err := trace.ParseRules(rules, data)
		if err != nil {
			return o, inputErr(err)
		}
		o.Rules = o.Rules.WithOverrides(user)
	}
	if gap != "" {
		g, err := unit.ParseSeconds(gap)
		if err != nil || g <= 0 {
			return o, inputErrf("--gap: want a positive duration such as 1ms, got %q", gap)
		}
		o.Gap = g
	}
	return o, nil
}

func runTraceSummary(s *streams, opts *traceSummaryOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	topts, err := traceOptions(opts.Kind, opts.Step, opts.Rules, opts.Gap)
	if err != nil {
		return err
	}
	// Files named on the command line must be traces; a file found in a
	// directory that cannot be read as one (a vLLM profiler_out JSON, an
	// execution_details.json) is skipped with a warning unless --strict.
	var files []string
	inDir := map[string]bool{}
	for _, in := range opts.Inputs {
		fs, err := trace.ExpandInputs([]string{in})
		if err != nil {
			return inputErr(err)
		}
		if st, err := os.Stat(in); err == nil && st.IsDir() {
			for _, f := range fs {
				inDir[f] = true
			}
		}
		files = append(files, fs...)
	}
	fo := trace.FileOptions{Options: topts, Strict: opts.Strict}
	stop := startProgress(s, files, &fo)
	all := trace.AnalyzeFiles(files, fo)
	stop()
	var results []trace.FileResult
	var skipped []string
	for _, fr := range all {
		switch {
		case fr.Err == nil:
			results = append(results, fr)
		case inDir[fr.File] && !opts.Strict && errors.Is(fr.Err, trace.ErrInput):
			skipped = append(skipped, "skipped (not a readable trace): "+fr.Err.Error())
		case errors.Is(fr.Err, trace.ErrInput):
			return inputErr(fr.Err)
		default:
			return fr.Err
		}
	}
	for _, fr := range results {
		if err := checkFinite(fr); err != nil {
			return err
		}
	}
	rep := newTraceReport(results)
	rep.Warnings = append(append([]string{}, skipped...), rep.Warnings...)
	if rep.steps == 0 {
		msg := "no steps"
		if opts.Kind != "" {
			msg = "no " + opts.Kind + " steps"
		}
		if len(rep.Warnings) == 0 {
			return inputErrf("%s in %s", msg, strings.Join(files, ", "))
		}
		return inputErrf("%s: %s", msg, strings.Join(rep.Warnings, "; "))
	}
	switch opts.Format {
	case formatJSON:
		return writeJSON(s.Out, rep)
	case formatCSV:
		printWarnings(s.Err, rep.Warnings)
		return rep.stepTable().render(s.Out, formatCSV)
	}
	printWarnings(s.Err, rep.Warnings)
	return rep.writeText(s.Out, results)
}

func printWarnings(w io.Writer, warns []string) {
	for _, m := range warns {
		fmt.Fprintln(w, "warning: "+m)
	}
}

// traceReport is the JSON contract of `moecast trace summary --format json`.
type traceReport struct {
	Files        []string           `json:"files"`
	Ranks        []traceRank        `json:"ranks"`
	Unclassified []traceUnclassAggr `json:"unclassified"`
	Warnings     []string           `json:"warnings"`

	steps int
}

type traceRank struct {
	Rank    int            `json:"rank"`
	File    string         `json:"file"`
	Steps   []traceStep    `json:"steps"`
	Summary traceRankStats `json:"summary"`
}

type traceStep struct {
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

type traceRankStats struct {
	Steps        int                `json:"steps"`
	MedianStepMs float64            `json:"median_step_ms"`
	P10StepMs    float64            `json:"p10_step_ms"`
	P90StepMs    float64            `json:"p90_step_ms"`
	ByCategoryMs map[string]float64 `json:"by_category_ms"`
	Share        map[string]float64 `json:"share"`
}

type traceUnclassAggr struct {
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

func newTraceReport(results []trace.FileResult) *traceReport {
	rep := &traceReport{Files: []string{}, Ranks: []traceRank{}, Unclassified: []traceUnclassAggr{}, Warnings: []string{}}
	unc := map[string]*traceUnclassAggr{}
	for _, fr := range results {
		rep.Files = append(rep.Files, fr.File)
		r := fr.Result
		for _, w := range r.Warnings {
			rep.Warnings = append(rep.Warnings, fr.File+": "+w)
		}
		tr := traceRank{Rank: fr.Rank, File: fr.File, Steps: []traceStep{}}
		for _, st := range r.Steps {
			tr.Steps = append(tr.Steps, traceStep{
				Index: st.Index, Kind: st.Kind.String(), Batch: st.Batch, Label: st.Label,
				WallMs: ms(st.Wall), BusyMs: ms(st.Busy), IdleMs: ms(st.Idle),
				ByCategoryMs: catMap(st.ByCategory), ExposedMs: catMap(st.Exposed),
			})
		}
		sm := fr.Summary
		tr.Summary = traceRankStats{
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
				u = &traceUnclassAggr{Name: k.Name}
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

// stepTable is the CSV form: one row per step and rank.
func (rep *traceReport) stepTable() *table {
	cols := []column{{Name: "rank"}, {Name: "file"}, {Name: "index"}, {Name: "kind"}, {Name: "batch"}, {Name: "label"},
		{Name: "wall_ms"}, {Name: "busy_ms"}, {Name: "idle_ms"}}
	var cats []cost.Category // idle is the idle_ms column already
	for _, c := range traceCategories() {
		if c != cost.Idle {
			cats = append(cats, c)
		}
	}
	for _, c := range cats {
		cols = append(cols, column{Name: c.String() + "_ms"})
	}
	for _, c := range cats {
		cols = append(cols, column{Name: c.String() + "_exposed_ms"})
	}
	t := &table{Columns: cols}
	for _, r := range rep.Ranks {
		for _, st := range r.Steps {
			row := []any{r.Rank, r.File, st.Index, st.Kind, st.Batch, st.Label, st.WallMs, st.BusyMs, st.IdleMs}
			for _, c := range cats {
				row = append(row, st.ByCategoryMs[c.String()])
			}
			for _, c := range cats {
				row = append(row, st.ExposedMs[c.String()])
			}
			t.add(row...)
		}
	}
	return t
}

// writeText writes one block per rank, the collective spread over ranks and
// the unclassified kernels.
func (rep *traceReport) writeText(w io.Writer, results []trace.FileResult) error {
	for i, fr := range results {
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
		t := &table{Columns: []column{
			{Name: "category", Left: true}, {Name: "median_ms", Text: "%.3f"}, {Name: "share_%", Text: "%.1f"}, {Name: "exposed_ms", Text: "%.3f"},
		}}
		top, topShare := cost.Category(0), -1.0
		for _, c := range traceCategories() {
			if sm.Share[c] == 0 && sm.ByCategory[c] == 0 {
				continue
			}
			t.add(c.String(), ms(sm.ByCategory[c]), 100*sm.Share[c], ms(sm.Exposed[c]))
			if c != cost.Idle && sm.Share[c] > topShare {
				top, topShare = c, sm.Share[c]
			}
		}
		var b strings.Builder
		if err := t.render(&b, formatText); err != nil {
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
	if sp := trace.CollectiveSpread(results); len(results) > 1 && len(sp) > 0 {
		fmt.Fprintf(w, "collective time per step over ranks (median per step, ms)\n")
		t := &table{Columns: []column{{Name: "category", Left: true}, {Name: "ranks"}, {Name: "min", Text: "%.3f"},
			{Name: "median", Text: "%.3f"}, {Name: "max", Text: "%.3f"}, {Name: "min_rank"}, {Name: "max_rank"}}}
		for _, x := range sp {
			t.add(x.Category.String(), x.Ranks, ms(x.Min), ms(x.Median), ms(x.Max), x.MinRank, x.MaxRank)
		}
		if err := t.render(w, formatText); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if n := len(rep.Unclassified); n > 0 {
		fmt.Fprintf(w, "unclassified kernels (category other; add a rule with --rules), by total time:\n")
		t := &table{Columns: []column{{Name: "total_ms", Text: "%.3f"}, {Name: "count"}, {Name: "kernel", Left: true}}}
		for i, u := range rep.Unclassified {
			if i == 10 {
				break
			}
			t.add(u.TotalMs, u.Count, shortKernelName(u.Name))
		}
		if err := t.render(w, formatText); err != nil {
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

// traceKernelsOptions are the inputs of `moecast trace kernels`.
type traceKernelsOptions struct {
	File   string
	Top    int
	Rules  string
	Format string
}

func newTraceKernelsCmd(s *streams) *cobra.Command {
	opts := &traceKernelsOptions{}
	cmd := &cobra.Command{
		Use:   "kernels FILE",
		Short: "Kernels of one trace by total time, with category and op",
		Long: `List the kernels (and memcpy/memset) of one trace by total GPU time, with
the category and op the classification rules give them. NCCL kernels of
recent PyTorch carry their collective args, shown as
"collective in_nelems dtype xgroup" (the most frequent size). Names are
shortened in text output (return type, argument list and nested template
arguments dropped); JSON and CSV also carry the full name.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.File = args[0]
			return runTraceKernels(s, opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Top, "top", 30, "show the N kernels with the most time (0: all)")
	f.StringVar(&opts.Rules, "rules", "", "TOML file of [[rule]] match/category/op, tried before the built-in rules")
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	return cmd
}

func runTraceKernels(s *streams, opts *traceKernelsOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if opts.Top < 0 {
		return inputErrf("--top: want 0 or more, got %d", opts.Top)
	}
	topts, err := traceOptions("", "", opts.Rules, "")
	if err != nil {
		return err
	}
	fo := trace.FileOptions{Options: topts}
	stop := startProgress(s, []string{opts.File}, &fo)
	fr := trace.AnalyzeFile(opts.File, fo)
	stop()
	if fr.Err != nil {
		if errors.Is(fr.Err, trace.ErrInput) {
			return inputErr(fr.Err)
		}
		return fr.Err
	}
	if err := checkFinite(fr); err != nil {
		return err
	}
	r := fr.Result
	if len(r.Kernels) == 0 {
		return inputErrf("%s: no kernel events in the trace", opts.File)
	}
	var total unit.Seconds
	for _, k := range r.Kernels {
		total += k.Total
	}
	cols := []column{{Name: "name", Left: true}, {Name: "category"}, {Name: "op"}, {Name: "count"},
		{Name: "total_ms", Text: "%.3f"}, {Name: "mean_us", Text: "%.1f"}, {Name: "share_%", Text: "%.1f"}, {Name: "collective", Left: true}}
	full := opts.Format != formatText
	if full {
		cols = append(cols, column{Name: "kernel"})
	}
	t := &table{Columns: cols}
	for i, k := range r.Kernels {
		if opts.Top > 0 && i == opts.Top {
			break
		}
		var coll any
		if c := commonCollective(k.Collectives); c != "" {
			coll = c
		}
		share := 0.0 // kernels all of zero duration: no share rather than 0/0
		if total > 0 {
			share = 100 * float64(k.Total) / float64(total)
		}
		row := []any{shortKernelName(k.Name), k.Class.Category.String(), k.Class.Op, k.Count,
			ms(k.Total), (k.Total / unit.Seconds(k.Count)).Us(), share, coll}
		if full {
			row = append(row, k.Name)
		}
		t.add(row...)
	}
	if opts.Format == formatText {
		printWarnings(s.Err, prefixed(opts.File, r.Warnings))
		fmt.Fprintf(s.Out, "%s: %d kernel events, %d names, %.3f ms of GPU time\n", opts.File, r.KernelCount, len(r.Kernels), ms(total))
	}
	return t.render(s.Out, opts.Format)
}

// checkFinite checks that every number of fr that the summary and kernels
// outputs show is finite. The reader rejects an infinite, negative or
// absurd ts or dur as a malformed event, so a NaN or Inf cannot arise from
// a trace; this check stands behind it, so that no output (JSON cannot
// encode NaN, and text and CSV would print it as a number) shows one.
func checkFinite(fr trace.FileResult) error {
	var what string
	var val float64
	ok := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	find := func() bool { // sets what and val to the first non-finite number
		if r := fr.Result; r != nil {
			for _, st := range r.Steps {
				for k, v := range [...]unit.Seconds{st.Wall, st.Busy, st.Idle} {
					if !ok(float64(v)) {
						what, val = fmt.Sprintf("step %d %s time", st.Index, [...]string{"wall", "busy", "idle"}[k]), float64(v)
						return true
					}
				}
				for _, c := range traceCategories() {
					if !ok(float64(st.ByCategory[c])) || !ok(float64(st.Exposed[c])) {
						what, val = fmt.Sprintf("step %d %s time", st.Index, c), float64(st.ByCategory[c]+st.Exposed[c])
						return true
					}
				}
			}
			for _, k := range r.Kernels {
				if !ok(float64(k.Total)) {
					what, val = fmt.Sprintf("total time of kernel %q", k.Name), float64(k.Total)
					return true
				}
			}
		}
		sm := fr.Summary
		for _, v := range []unit.Seconds{sm.Median, sm.P10, sm.P90} {
			if !ok(float64(v)) {
				what, val = "step time percentile", float64(v)
				return true
			}
		}
		for _, c := range traceCategories() {
			if !ok(float64(sm.ByCategory[c])) || !ok(float64(sm.Exposed[c])) || !ok(sm.Share[c]) {
				what, val = c.String()+" summary", float64(sm.ByCategory[c]+sm.Exposed[c])+sm.Share[c]
				return true
			}
		}
		return false
	}
	if find() {
		return inputErrf("%s: %s is %v, not a finite number: the trace holds times the analysis cannot use", fr.File, what, val)
	}
	return nil
}

func prefixed(file string, warns []string) []string {
	out := make([]string, len(warns))
	for i, w := range warns {
		out[i] = file + ": " + w
	}
	return out
}

// commonCollective describes the most frequent collective size of a kernel:
// "allreduce 6637568 Float x2" (+N sizes when there are several).
func commonCollective(cs []trace.CollectiveSize) string {
	if len(cs) == 0 {
		return ""
	}
	best := cs[0]
	for _, c := range cs[1:] {
		if c.Count > best.Count {
			best = c
		}
	}
	s := fmt.Sprintf("%s %d %s x%d", best.Collective, best.InMsgNelems, best.DType, best.GroupSize)
	if len(cs) > 1 {
		s += fmt.Sprintf(" (+%d sizes)", len(cs)-1)
	}
	return s
}

// maxKernelName bounds shortened kernel names.
const maxKernelName = 80

// shortKernelName shortens a demangled kernel name for a table: it drops a
// leading "void " (and a std::enable_if<...>::type return type), the
// argument list, and template arguments nested deeper than one level, then
// cuts to maxKernelName runes. "void vllm::act_and_mul_kernel<c10::BFloat16,
// &vllm::silu_kernel<c10::BFloat16>, true>(...)" becomes
// "vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<…>, true>".
func shortKernelName(name string) string {
	if strings.HasPrefix(name, "Memcpy") || strings.HasPrefix(name, "Memset") {
		return name
	}
	s := strings.TrimPrefix(name, "void ")
	if strings.HasPrefix(s, "std::enable_if<") {
		if i := strings.Index(s, ">::type "); i >= 0 {
			s = s[i+len(">::type "):]
		}
	}
	// drop the argument list: the last top-level "(...)" at the end
	if strings.HasSuffix(s, ")") {
		depth := 0
		for i := len(s) - 1; i >= 0; i-- {
			switch s[i] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				if i > 0 {
					s = s[:i]
				}
				break
			}
		}
	}
	// collapse templates nested deeper than one level
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch r {
		case '<':
			depth++
			if depth == 2 {
				b.WriteString("<…")
				continue
			}
		case '>':
			depth--
			if depth == 1 {
				b.WriteString(">")
				continue
			}
		}
		if depth < 2 {
			b.WriteRune(r)
		}
	}
	out := b.String()
	if r := []rune(out); len(r) > maxKernelName {
		out = string(r[:maxKernelName-1]) + "…"
	}
	return out
}

// progressMin is the input size from which a progress bar is shown.
const progressMin = 64 << 20

// startProgress shows a progress bar on stderr while files are read, when
// stderr is a terminal and the files are large; it returns the function
// that ends it.
func startProgress(s *streams, files []string, fo *trace.FileOptions) (stop func()) {
	f, ok := s.Err.(*os.File)
	if !ok {
		return func() {}
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return func() {}
	}
	var total int64
	for _, p := range files {
		if st, err := os.Stat(p); err == nil {
			total += st.Size()
		}
	}
	if total < progressMin {
		return func() {}
	}
	var n atomic.Int64
	fo.Progress = &n
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		label := filepath.Base(files[0])
		if len(files) > 1 {
			label = fmt.Sprintf("%d files", len(files))
		}
		for {
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-tick.C:
				frac := min(float64(n.Load())/float64(total), 1)
				const width = 30
				bar := strings.Repeat("#", int(frac*width)) + strings.Repeat(" ", width-int(frac*width))
				fmt.Fprintf(f, "\r[%s] %3.0f%%  %.0f/%.0f MB  %s", bar, 100*frac, float64(n.Load())/1e6, float64(total)/1e6, label)
			}
		}
	}()
	return func() { close(done); <-finished }
}
