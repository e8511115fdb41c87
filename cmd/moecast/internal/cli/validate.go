package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/trace"
	"github.com/moecast/moecast/validate"
)

// newValidateCmd is the `validate` command group: `validate trace` here,
// `validate bench` in validate_bench.go.
func newValidateCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Hold a prediction against measurements: torch.profiler traces op by op",
		Long: `Hold moecast's prediction against what a real box measured: a torch.profiler
trace of prefill, mixed and decode steps (validate trace), compared per category and op by op,
with what the prediction left out and what the trace lacks; or a serving
benchmark's results (validate bench: vllm bench serve, SGLang bench_serving,
...), compared with the serving simulation point by point.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return c.Help() },
	}
	cmd.AddCommand(newValidateTraceCmd(s), newValidateBenchCmd(s), newValidateCorpusCmd(s))
	return cmd
}

// validateTraceOptions are the inputs of `moecast validate trace`.
type validateTraceOptions struct {
	Inputs      []string
	Scenario    string
	Calibration string
	Step        string
	Rules       string
	Batch       int
	Context     int
	StepKind    string
	Prefill     int
	Format      string
	Strict      bool
	HTML        string // --html FILE; "" = none
}

func newValidateTraceCmd(s *streams) *cobra.Command {
	opts := &validateTraceOptions{}
	cmd := &cobra.Command{
		Use:   "trace TRACE|DIR... --scenario S",
		Short: "Compare each prefill, mixed and decode step of a trace with the prediction, per category and op",
		Long: `For each prefill, mixed and decode step of the traces (--step-kind selects
one kind; one file per rank; a directory stands for the traces in it),
predict the same step with the scenario and compare. The step's mix comes
from its annotation (vLLM execute_context_P(T)_generation_D(..): P prefill
requests of T new tokens in all, D decodes; SGLang step[EXTEND bs=.. toks=..],
step[DECODE bs=..] and step[MIXED bs=N toks=M]: N requests and M tokens in
all, each decode one, split by --prefill-tokens T into N-(M-T) prefill
requests and M-T decodes, else priced as one prefill request beside N-1
decodes, with a warning), else --batch (decodes) and --prefill-tokens; the
decodes' context from --context, else the annotation where it gives one
(vLLM: keys over requests), else the scenario's workload.context. The mix
is priced as the engine runs it (sim.StepBatch: GEMMs and MoE at the
combined tokens, prefill chunks against their prefix, decodes at their
context). Compared:

  - per category: measured kernel time (busy and exposed) against predicted;
  - per op: the step's kernels mapped to the model's ops (by the trace
    rules' op labels, and GEMMs by how often they run per step and their
    size order), kernels per step against the predicted count, mean time
    per occurrence against the predicted time and the prediction's source,
    largest absolute misses first;
  - kernels that map to no predicted op, and predicted ops the trace lacks;
  - with several ranks, per collective category, the shortest rank's time
    (transfer) and the rest (waiting for the slowest rank).

The measured step is GPU busy time; GPU idle inside the step is shown apart.
A trace of another model (layer count, MoE or dense kernels) is refused.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Inputs = args
			return runValidateTrace(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Scenario, "scenario", "", "scenario file or shipped scenario name (required)")
	f.StringVar(&opts.Calibration, "calibration", "", "calibration sources, comma-separated (embedded, none, FILE), replacing hardware.calibration")
	f.StringVar(&opts.Step, "step", "", "regular expression of the step annotations (named groups batch and kind are read)")
	f.StringVar(&opts.Rules, "rules", "", "TOML file of [[rule]] match/category/op, tried before the built-in rules")
	f.IntVar(&opts.Batch, "batch", 0, "batch size of steps whose annotation names none")
	f.StringVar(&opts.StepKind, "step-kind", "all", "kinds of step to compare: prefill, mixed, decode or all")
	f.IntVar(&opts.Prefill, "prefill-tokens", 0, "new tokens of the prefill requests of steps whose annotation names none (summed over the step's prefill requests); of an SGLang MIXED step, the prefill share of its toks")
	f.IntVar(&opts.Context, "context", 0, "context length per sequence, tokens (default: from the step annotation where it has one, else the scenario's workload.context)")
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	f.BoolVar(&opts.Strict, "strict", false, "fail on a malformed event or a trace cut short instead of warning")
	f.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report with charts to FILE")
	return cmd
}

// loadValidation reads the scenario and the traces shared by `validate
// trace` and `calib from-trace`.
func loadValidation(scenario, calibration, step, rules string, inputs []string, strict bool, s *streams) (*scenarios.Scenario, []validate.Rank, []string, error) {
	if scenario == "" {
		return nil, nil, nil, inputErrf("--scenario: required (a scenario file or one of %s)", strings.Join(scenarios.Names(), ", "))
	}
	sc, err := scenarios.Open(scenario)
	if err != nil {
		return nil, nil, nil, inputErr(err)
	}
	if calibration != "" {
		if err := sc.SetCalibration(calibrationSources(calibration)...); err != nil {
			return nil, nil, nil, inputErr(err)
		}
	}
	topts, err := traceOptions("", step, rules, "")
	if err != nil {
		return nil, nil, nil, err
	}
	// As in `trace summary`: files named on the command line must be
	// traces; a file found in a directory that cannot be read as one (an
	// execution_details.json) is skipped with a warning unless --strict.
	var files []string
	inDir := map[string]bool{}
	for _, in := range inputs {
		fs, err := trace.ExpandInputs([]string{in})
		if err != nil {
			return nil, nil, nil, inputErr(err)
		}
		if st, err := os.Stat(in); err == nil && st.IsDir() {
			for _, f := range fs {
				inDir[f] = true
			}
		}
		files = append(files, fs...)
	}
	fo := trace.FileOptions{Options: topts, Strict: strict}
	stop := startProgress(s, files, &fo)
	all, errs := validate.ReadEach(files, fo)
	stop()
	var ranks []validate.Rank
	var warns []string
	for i, err := range errs {
		switch {
		case err == nil && inDir[files[i]] && !strict && len(all[i].Result.Steps) == 0:
			warns = append(warns, "skipped (no steps, not a profiler trace?): "+files[i])
		case err == nil:
			ranks = append(ranks, all[i])
			for _, w := range all[i].Result.Warnings {
				warns = append(warns, all[i].File+": "+w)
			}
		case inDir[files[i]] && !strict && errors.Is(err, trace.ErrInput):
			warns = append(warns, "skipped (not a readable trace): "+err.Error())
		case errors.Is(err, trace.ErrInput):
			return nil, nil, nil, inputErr(err)
		default:
			return nil, nil, nil, err
		}
	}
	if len(ranks) == 0 {
		return nil, nil, nil, inputErrf("no readable trace in %s: %s", strings.Join(inputs, ", "), strings.Join(warns, "; "))
	}
	return sc, ranks, warns, nil
}

func runValidateTrace(s *streams, opts *validateTraceOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkHTMLPath(opts.HTML); err != nil {
		return err
	}
	sc, rep, err := computeValidateTrace(s, opts)
	if err != nil {
		return err
	}
	if opts.HTML != "" {
		if err := writeHTML(s, opts.HTML, validateTracePage(sc, rep)); err != nil {
			return err
		}
	}
	switch opts.Format {
	case formatJSON:
		return writeJSON(s.Out, validateJSONOf(sc, rep))
	case formatCSV:
		return validateCSV(s.Out, rep)
	}
	printWarnings(s.Err, rep.Warnings)
	return validateText(s.Out, sc, rep)
}

// computeValidateTrace reads the traces and compares each step with the
// prediction; the report's warnings are the scenario's, the reading's and
// the comparison's.
func computeValidateTrace(s *streams, opts *validateTraceOptions) (*scenarios.Scenario, *validate.Report, error) {
	if opts.Batch < 0 || opts.Context < 0 || opts.Prefill < 0 {
		return nil, nil, inputErrf("--batch, --context and --prefill-tokens: want positive values")
	}
	kind, err := stepKindFlag(opts.StepKind)
	if err != nil {
		return nil, nil, err
	}
	sc, ranks, warns, err := loadValidation(opts.Scenario, opts.Calibration, opts.Step, opts.Rules, opts.Inputs, opts.Strict, s)
	if err != nil {
		return nil, nil, err
	}
	sm, err := sc.Sim()
	if err != nil {
		return nil, nil, inputErr(err)
	}
	context := sc.Context
	if opts.Context > 0 {
		context = opts.Context
	}
	rep, err := validate.Compare(sm, &sc.Config, ranks, validate.Options{Batch: opts.Batch, Context: context, ContextFromTrace: opts.Context == 0,
		Kind: kind, PrefillTokens: opts.Prefill})
	if err != nil {
		var ie *validate.InputError
		if errors.As(err, &ie) {
			return nil, nil, inputErr(err)
		}
		return nil, nil, sc.KeyError(err)
	}
	rep.Warnings = append(append(append([]string{}, sc.Warnings...), warns...), rep.Warnings...)
	if err := checkFiniteReport(rep); err != nil {
		return nil, nil, err
	}
	return sc, rep, nil
}

// checkFiniteReport refuses to print Inf or NaN.
func checkFiniteReport(rep *validate.Report) error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
	for i := range rep.Steps {
		st := &rep.Steps[i]
		if bad(float64(st.Measured)) || bad(float64(st.Predicted)) {
			return fmt.Errorf("%s: step %d: a non-finite time", st.File, st.Index)
		}
		for _, o := range st.Ops {
			if bad(float64(o.Measured)) || bad(float64(o.Predicted)) || bad(o.PredictedCount) {
				return fmt.Errorf("%s: step %d: op %s: a non-finite time", st.File, st.Index, o.Op)
			}
		}
	}
	return nil
}

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
	Parts []validatePartJSON `json:"parts,omitempty"`
}

type validatePartJSON struct {
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

type validateJSON struct {
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
	js := validateOpJSON{Op: o.Op, Category: o.Category.String(), Count: o.Count, PredictedCount: r6(o.PredictedCount),
		MeasuredUs: r6(o.Measured.Us()), PredictedUs: r6(o.Predicted.Us()), Source: o.Source}
	for _, p := range o.Parts() {
		js.Parts = append(js.Parts, validatePartJSON{Op: p.Op, Shape: p.Shape, Occurrences: r6(p.Occurrences),
			PredictedUs: r6(p.Predicted.Us()), PredictedMs: r6((p.Predicted * unit.Seconds(p.Occurrences)).Ms())})
	}
	return js
}

func validateJSONOf(sc *scenarios.Scenario, rep *validate.Report) validateJSON {
	out := validateJSON{Scenario: sc.Name, Trace: rep.Files, Steps: []validateStepJSON{}, Collectives: []validateSplitJSON{}, Spreads: []validateSpreadJSON{},
		Warnings: append([]string{}, rep.Warnings...)}
	for i := range rep.Steps {
		st := &rep.Steps[i]
		js := validateStepJSON{File: st.File, Rank: st.Rank, Index: st.Index, Kind: st.Kind.String(), Label: st.Label, Batch: st.Batch, Context: st.Context,
			Decodes: st.Decodes, Prefills: st.Prefills, PrefillToks: st.PrefillTokens, Prefix: st.Prefix, Tokens: st.Tokens, UnmappedMs: r6(st.Unmapped().Ms()), LaunchMs: r6(st.PredictedLaunch.Ms()),
			MeasuredMs: r6(st.Measured.Ms()), PredictedMs: r6(st.Predicted.Ms()), ErrorPct: r6(st.ErrorPct()),
			WallMs: r6(st.Wall.Ms()), IdleMs: r6(st.Idle.Ms()),
			Categories: map[string]validateCategoryJSON{}, Ops: []validateOpJSON{}, Missing: []validateOpJSON{}, LeftOut: []validateKernelJSON{}}
		for c, cc := range st.Categories {
			if cc.Measured == 0 && cc.Predicted == 0 {
				continue
			}
			js.Categories[validateCatName(c)] = validateCategoryJSON{MeasuredMs: r6(cc.Measured.Ms()), PredictedMs: r6(cc.Predicted.Ms()),
				MeasuredExposedMs: r6(cc.Exposed.Ms()), ErrorMs: r6((cc.Predicted - cc.Measured).Ms()), ErrorPct: r6p(catPct(cc))}
		}
		for _, o := range st.Ops {
			js.Ops = append(js.Ops, opJSON(o))
		}
		for _, o := range st.Missing {
			js.Missing = append(js.Missing, opJSON(o))
		}
		for _, k := range st.LeftOut {
			js.LeftOut = append(js.LeftOut, validateKernelJSON{Name: k.Name, Category: k.Category.String(), Op: k.Op, Count: k.Count, TotalMs: r6(k.Total.Ms())})
		}
		out.Steps = append(out.Steps, js)
	}
	for _, sp := range rep.Splits {
		out.Collectives = append(out.Collectives, validateSplitJSON{Index: sp.Index, Category: sp.Category.String(), Ranks: sp.Ranks,
			TransferMs: r6(sp.Transfer.Ms()), MaxWaitMs: r6(sp.MaxWait.Ms()), MeanWaitMs: r6(sp.MeanWait.Ms()), MinRank: sp.MinRank, MaxRank: sp.MaxRank})
	}
	for _, sp := range rep.Spreads {
		out.Spreads = append(out.Spreads, validateSpreadJSON{Category: sp.Category.String(), Ranks: sp.Ranks, Collectives: sp.Collectives,
			Unpaired: sp.Unpaired, StartSpreadUs: r6(sp.StartSpread.Us()), TransferUs: r6(sp.Transfer.Us()), MaxWaitUs: r6(sp.MaxWait.Us()),
			MeanWaitUs: r6(sp.MeanWait.Us()), TotalWaitMs: r6(sp.TotalWait.Ms()), TotalMs: r6(sp.TotalTime.Ms()),
			LastRank: sp.LastRank, LastRankRuns: sp.LastRankRuns})
	}
	if im := rep.Imbalance; im != nil {
		out.Imbalance = &validateImbalanceJSON{EP: im.EP, Tokens: im.Tokens, Pairs: r6(im.Pairs), MeanPairs: r6(im.MeanPairs),
			Touched: r6(im.Touched), MeanTouched: r6(im.MeanTouched)}
	}
	out.Summary = validateSummaryJSON{Steps: len(rep.Steps), MedianErrorPct: r6(rep.MedianErrorPct),
		WorstCategory: rep.WorstCategory.String(), WorstMissMs: r6(rep.WorstMiss.Ms())}
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

// validateCSV writes one row per (step, op), with the step's figures
// repeated, so that a spreadsheet can filter it.
func validateCSV(w io.Writer, rep *validate.Report) error {
	t := &table{Columns: []column{{Name: "file"}, {Name: "rank"}, {Name: "index"}, {Name: "batch"}, {Name: "kind"},
		{Name: "name"}, {Name: "category"}, {Name: "count"}, {Name: "predicted_count"}, {Name: "measured_us"},
		{Name: "predicted_us"}, {Name: "measured_ms"}, {Name: "predicted_ms"}, {Name: "source"}}}
	for i := range rep.Steps {
		st := &rep.Steps[i]
		t.add(st.File, st.Rank, st.Index, st.Batch, "step", st.Label, "", "", "", "", "", r6(st.Measured.Ms()), r6(st.Predicted.Ms()), "")
		for c, cc := range st.Categories {
			if cc.Measured == 0 && cc.Predicted == 0 {
				continue
			}
			t.add(st.File, st.Rank, st.Index, st.Batch, "category", validateCatName(c), validateCatName(c), "", "", "", "",
				r6(cc.Measured.Ms()), r6(cc.Predicted.Ms()), "")
		}
		for _, o := range st.Ops {
			t.add(st.File, st.Rank, st.Index, st.Batch, "op", o.Op, o.Category.String(), o.Count, r6(o.PredictedCount),
				r6(o.Measured.Us()), r6(o.Predicted.Us()), r6(o.MeasuredTotal.Ms()), r6(o.PredictedTotal.Ms()), o.Source)
		}
		for _, o := range st.Missing {
			t.add(st.File, st.Rank, st.Index, st.Batch, "missing", o.Op, o.Category.String(), 0, r6(o.PredictedCount),
				"", r6(o.Predicted.Us()), 0, r6(o.PredictedTotal.Ms()), o.Source)
		}
		for _, k := range st.LeftOut {
			t.add(st.File, st.Rank, st.Index, st.Batch, "left_out", k.Name, k.Category.String(), k.Count, 0,
				"", "", r6(k.Total.Ms()), 0, "")
		}
	}
	return t.render(w, formatCSV)
}

func validateText(w io.Writer, sc *scenarios.Scenario, rep *validate.Report) error {
	fmt.Fprintf(w, "scenario  %s (%s)\n", sc.Name, sc.File)
	detail := detailSteps(rep)
	if len(detail) < len(rep.Steps) {
		fmt.Fprintf(w, "\n%d steps; in detail below: the step of median error of each rank (--format json has every step)\n", len(rep.Steps))
		t := &table{Columns: []column{{Name: "rank"}, {Name: "step"}, {Name: "kind"}, {Name: "batch"}, {Name: "tokens"}, {Name: "context"}, {Name: "measured ms", Text: "%.3f"},
			{Name: "predicted ms", Text: "%.3f"}, {Name: "error", Text: "%+.1f%%"}}}
		for i := range rep.Steps {
			st := &rep.Steps[i]
			t.add(st.Rank, st.Index, st.Kind.String(), st.Batch, st.Tokens, st.Context, st.Measured.Ms(), st.Predicted.Ms(), st.ErrorPct())
		}
		if err := t.render(w, formatText); err != nil {
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
		ct := &table{Columns: []column{{Name: "category"}, {Name: "measured ms", Text: "%.3f"}, {Name: "exposed ms", Text: "%.3f"},
			{Name: "predicted ms", Text: "%.3f"}, {Name: "error ms", Text: "%+.3f"}, {Name: "error", Text: "%+.1f%%"}}}
		for c, cc := range st.Categories {
			if cc.Measured == 0 && cc.Predicted == 0 {
				continue
			}
			ct.add(validateCatName(c), cc.Measured.Ms(), cc.Exposed.Ms(), cc.Predicted.Ms(), (cc.Predicted - cc.Measured).Ms(), pctCell(catPct(cc)))
		}
		if err := ct.render(w, formatText); err != nil {
			return err
		}
		fmt.Fprintln(w, "  ops, largest absolute miss first (count: kernels per step; time: mean per occurrence)")
		ot := &table{Columns: []column{{Name: "op"}, {Name: "category"}, {Name: "count"}, {Name: "predicted", Text: "%g"},
			{Name: "measured us", Text: "%.2f"}, {Name: "predicted us", Text: "%.2f"}, {Name: "pred-meas ms", Text: "%+.3f"},
			{Name: "source", Left: true}}}
		for _, o := range st.Ops {
			ot.add(shortName(o.Op, 60), o.Category.String(), o.Count, math.Round(o.PredictedCount*100)/100, o.Measured.Us(), o.Predicted.Us(),
				(o.PredictedTotal - o.MeasuredTotal).Ms(), shortName(o.Source, 110))
		}
		if err := ot.render(w, formatText); err != nil {
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
			lt := &table{Columns: []column{{Name: "kernel"}, {Name: "category"}, {Name: "op"}, {Name: "count"}, {Name: "total ms", Text: "%.3f"}}}
			for _, k := range st.LeftOut {
				lt.add(shortName(k.Name, 70), k.Category.String(), k.Op, k.Count, k.Total.Ms())
			}
			if err := lt.render(w, formatText); err != nil {
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
		t := &table{Columns: []column{{Name: "category"}, {Name: "steps"}, {Name: "ranks"}, {Name: "transfer ms", Text: "%.3f"},
			{Name: "max wait ms", Text: "%.3f"}, {Name: "mean wait ms", Text: "%.3f"}, {Name: "wait share", Text: "%.1f%%"}}}
		for _, a := range validate.SplitMedians(rep.Splits) {
			share := 0.0
			if tot := a.Transfer + a.MeanWait; tot > 0 {
				share = float64(a.MeanWait / tot * 100)
			}
			t.add(a.Category.String(), a.Index, a.Ranks, a.Transfer.Ms(), a.MaxWait.Ms(), a.MeanWait.Ms(), share)
		}
		if err := t.render(w, formatText); err != nil {
			return err
		}
	}
	if len(rep.Spreads) > 0 {
		fmt.Fprintln(w, "\ncollective kernels paired across ranks by order: start spread = latest start - earliest; transfer = the shortest rank's duration; wait = a rank's duration beyond it (medians per collective)")
		t := &table{Columns: []column{{Name: "category"}, {Name: "ranks"}, {Name: "collectives"}, {Name: "start spread us", Text: "%.2f"},
			{Name: "transfer us", Text: "%.2f"}, {Name: "max wait us", Text: "%.2f"}, {Name: "mean wait us", Text: "%.2f"},
			{Name: "wait share", Text: "%.1f%%"}, {Name: "last to start", Left: true}}}
		for _, sp := range rep.Spreads {
			share := 0.0
			if sp.TotalTime > 0 {
				share = float64(sp.TotalWait / sp.TotalTime * 100)
			}
			t.add(sp.Category.String(), sp.Ranks, sp.Collectives, sp.StartSpread.Us(), sp.Transfer.Us(), sp.MaxWait.Us(), sp.MeanWait.Us(),
				share, fmt.Sprintf("rank %d (%d of %d)", sp.LastRank, sp.LastRankRuns, sp.Collectives))
		}
		if err := t.render(w, formatText); err != nil {
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

// stepKindFlag reads --step-kind: prefill, mixed, decode or all
// (trace.KindUnknown).
func stepKindFlag(v string) (trace.StepKind, error) {
	if v == "all" || v == "" {
		return trace.KindUnknown, nil
	}
	k, ok := trace.ParseStepKind(v)
	if !ok || k == trace.KindUnknown {
		return 0, inputErrf("--step-kind %q: want prefill, mixed, decode or all", v)
	}
	return k, nil
}
