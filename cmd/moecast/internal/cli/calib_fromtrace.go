package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/atomicfile"
	"github.com/moecast/moecast/trace"
	"github.com/moecast/moecast/validate"
)

// calibFromTraceOptions are the inputs of `moecast calib from-trace`.
type calibFromTraceOptions struct {
	Inputs   []string
	Scenario string
	Step     string
	Rules    string
	Batch    int
	Context  int
	StepKind string
	Prefill  int
	Date     string
	Out      string
	Strict   bool
}

func newCalibFromTraceCmd(s *streams, runF func(*calibFromTraceOptions) error) *cobra.Command {
	o := &calibFromTraceOptions{}
	cmd := &cobra.Command{
		Use:   "from-trace TRACE|DIR... --scenario S -o OUT",
		Short: "Write calibration tables from the kernels of a trace's prefill, mixed and decode steps",
		Long: `Derive calibration tables (docs/calibration.md) from the kernels of the
prefill, mixed and decode steps of torch.profiler traces (--step-kind
selects one kind), mapped to the scenario's ops as "moecast validate trace"
maps them: GEMMs by shape (n, k, m, m being the step's combined tokens), the
MoE layer by tokens, GQA decode attention by batch and context, small
kernels by bytes, all-reduce, all-gather and reduce-scatter by message
bytes, and the kernels that map to no op (a framework's glue) as a per-layer
"unmapped" cost by tokens. Traces of several sizes (a.json.gz b.json.gz)
give tables the cost model interpolates. The provenance names the trace files and
steps, the engine and its version from the trace metadata, and the GPU from
deviceProperties; the GPU and fabric keys are the scenario's, so that
"predict SCENARIO --calibration embedded,OUT" uses the tables on that box.
Op-level measurements only: the step time itself is never fitted.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Inputs = args
			if runF != nil {
				return runF(o)
			}
			return runCalibFromTrace(s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Scenario, "scenario", "", "scenario file or shipped scenario name (required)")
	f.StringVar(&o.Step, "step", "", "regular expression of the step annotations (named groups batch and kind are read)")
	f.StringVar(&o.Rules, "rules", "", "TOML file of [[rule]] match/category/op, tried before the built-in rules")
	f.IntVar(&o.Batch, "batch", 0, "batch size of steps whose annotation names none")
	f.IntVar(&o.Context, "context", 0, "context length per sequence, tokens (default: from the step annotation where it has one, else the scenario's workload.context)")
	f.StringVar(&o.StepKind, "step-kind", "all", "kinds of step to use: prefill, mixed, decode or all")
	f.IntVar(&o.Prefill, "prefill-tokens", 0, "new tokens of the prefill requests of steps whose annotation names none (summed over the step's prefill requests); of an SGLang MIXED step, the prefill share of its toks")
	f.StringVar(&o.Date, "date", "", "measurement date YYYY-MM-DD when the trace records none (default: today, UTC)")
	f.StringVarP(&o.Out, "output", "o", "", "calibration file to write (required)")
	f.BoolVar(&o.Strict, "strict", false, "fail on a malformed event or a trace cut short instead of warning")
	return cmd
}

func runCalibFromTrace(s *streams, o *calibFromTraceOptions) error {
	files, err := trace.ExpandInputs(o.Inputs)
	if err != nil {
		return err // trace.ErrInput
	}
	if err := checkOut("calib from-trace", o.Out, files...); err != nil {
		return err
	}
	if o.Batch < 0 || o.Context < 0 || o.Prefill < 0 {
		return inputErrf("--batch, --context and --prefill-tokens: want positive values")
	}
	kind, err := stepKindFlag(o.StepKind)
	if err != nil {
		return err
	}
	// The tables are measurements: the scenario's own calibration plays no
	// part in them (only the op shapes and the kernel mapping do).
	sc, ranks, warns, err := loadValidation(o.Scenario, "none", o.Step, o.Rules, o.Inputs, o.Strict, s)
	if err != nil {
		return err
	}
	if o.Out != "-" {
		if err := atomicfile.CheckOutput(o.Out, scenarioInputs(sc)...); err != nil {
			return fmt.Errorf("-o %w", err) // an *atomicfile.OutputError
		}
	}
	sm, err := sc.Sim()
	if err != nil {
		return err
	}
	context := sc.Context
	if o.Context > 0 {
		context = o.Context
	}
	rep, err := validate.Compare(sm, &sc.Config, ranks, validate.Options{Batch: o.Batch, Context: context, ContextFromTrace: o.Context == 0,
		Kind: kind, PrefillTokens: o.Prefill})
	if err != nil {
		var ie *validate.InputError
		if errors.As(err, &ie) {
			return err
		}
		return sc.KeyError(err)
	}
	metas := map[string]*trace.Meta{}
	for _, rk := range ranks {
		metas[rk.File] = rk.Meta
	}
	date := o.Date
	if date == "" {
		date = time.Now().UTC().Format("2006-01-02")
	}
	cmdline := []string{"moecast calib from-trace"}
	for _, p := range o.Inputs {
		cmdline = append(cmdline, filepath.Base(p))
	}
	cmdline = append(cmdline, "--scenario", filepath.Base(o.Scenario), "-o", filepath.Base(o.Out))
	f, err := validate.Calibration(&sc.Config, rep, validate.FromTraceOptions{Date: date, Command: strings.Join(cmdline, " "), Metas: metas})
	if err != nil {
		return inputErrf("%s: %v", strings.Join(files, ", "), err)
	}
	printWarnings(s.Err, append(append([]string{}, sc.Warnings...), warns...))
	if err := writeImported(s, f, o.Out); err != nil {
		return err
	}
	var kinds [4]int
	for i := range rep.Steps {
		kinds[rep.Steps[i].Kind]++
	}
	fmt.Fprintf(s.Out, "from %d steps (%d prefill, %d mixed, %d decode) of %d trace files; use it with: moecast predict %s --calibration embedded,%s\n",
		len(rep.Steps), kinds[trace.KindPrefill], kinds[trace.KindMixed], kinds[trace.KindDecode], len(files), o.Scenario, o.Out)
	return nil
}
