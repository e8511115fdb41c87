package cli

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/report/view"
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
	cmd.AddCommand(newValidateTraceCmd(s, nil), newValidateBenchCmd(s, nil), newValidateCorpusCmd(s, nil))
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

func newValidateTraceCmd(s *streams, runF func(*validateTraceOptions) error) *cobra.Command {
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
			if runF != nil {
				return runF(opts)
			}
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
		return nil, nil, nil, err // *scenarios.InputError
	}
	if calibration != "" {
		if err := sc.SetCalibration(calibrationSources(calibration)...); err != nil {
			return nil, nil, nil, err
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
			return nil, nil, nil, err // trace.ErrInput
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
		default:
			return nil, nil, nil, err // trace.ErrInput: exit 2 by its type
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
	in, err := validateTraceInputOf(s, opts)
	if err != nil {
		return err
	}
	sc := in.Scenario
	if err := checkHTMLInputs(opts.HTML, scenarioInputs(sc)); err != nil {
		return err
	}
	rep, err := compareTrace(in)
	if err != nil {
		return err
	}
	views := view.ValidateViews(sc, rep)
	if opts.HTML != "" {
		if err := writeHTML(s, opts.HTML, views.Page()); err != nil {
			return err
		}
	}
	return output{views: views}.write(s, opts.Format)
}

// validateTraceInput is what `validate trace` computes from: the
// scenario, the traces' ranks (read), the reading's warnings and the
// comparison's options.
type validateTraceInput struct {
	Scenario *scenarios.Scenario
	Ranks    []validate.Rank
	Warnings []string
	Options  validate.Options
}

// validateTraceInputOf checks the flags and reads the scenario and the
// traces.
func validateTraceInputOf(s *streams, opts *validateTraceOptions) (validateTraceInput, error) {
	if opts.Batch < 0 || opts.Context < 0 || opts.Prefill < 0 {
		return validateTraceInput{}, inputErrf("--batch, --context and --prefill-tokens: want positive values")
	}
	kind, err := stepKindFlag(opts.StepKind)
	if err != nil {
		return validateTraceInput{}, err
	}
	sc, ranks, warns, err := loadValidation(opts.Scenario, opts.Calibration, opts.Step, opts.Rules, opts.Inputs, opts.Strict, s)
	if err != nil {
		return validateTraceInput{}, err
	}
	context := sc.Context
	if opts.Context > 0 {
		context = opts.Context
	}
	return validateTraceInput{Scenario: sc, Ranks: ranks, Warnings: warns,
		Options: validate.Options{Batch: opts.Batch, Context: context, ContextFromTrace: opts.Context == 0, Kind: kind, PrefillTokens: opts.Prefill}}, nil
}

// compareTrace compares each step of the traces with the prediction; the
// report's warnings are the scenario's, the reading's and the
// comparison's.
func compareTrace(in validateTraceInput) (*validate.Report, error) {
	sc := in.Scenario
	sm, err := sc.Sim()
	if err != nil {
		return nil, err
	}
	rep, err := validate.Compare(sm, &sc.Config, in.Ranks, in.Options)
	if err != nil {
		var ie *validate.InputError
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, sc.KeyError(err)
	}
	rep.Warnings = append(append(append([]string{}, sc.Warnings...), in.Warnings...), rep.Warnings...)
	if err := checkFiniteReport(rep); err != nil {
		return nil, err
	}
	return rep, nil
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
