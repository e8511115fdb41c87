package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
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
	cmd.AddCommand(newTraceSummaryCmd(s, nil), newTraceKernelsCmd(s, nil))
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

func newTraceSummaryCmd(s *streams, runF func(*traceSummaryOptions) error) *cobra.Command {
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
			if runF != nil {
				return runF(opts)
			}
			return runTraceSummary(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Kind, "kind", "", "keep only steps of this kind: decode, prefill or mixed")
	f.StringVar(&opts.Step, "step", "", "regular expression of the step annotations (named groups batch and kind are read)")
	f.StringVar(&opts.Rules, "rules", "", "TOML file of [[rule]] match/category/op, tried before the built-in rules")
	f.StringVar(&opts.Gap, "gap", "1ms", "GPU idle gap that separates steps when a trace has no annotations or graph launches")
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	f.BoolVar(&opts.Strict, "strict", false, "fail on a malformed event, a trace cut short or a --step that matches no annotation instead of warning")
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
		data, err := infile.ReadFile(rules, nil, infile.MaxRules)
		if err != nil {
			return o, inputErrf("--rules: %v", err)
		}
		user, err := trace.ParseRules(rules, data)
		if err != nil {
			return o, err // *trace.RuleError, *infile.Error
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
			return err // trace.ErrInput
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
		default:
			return fr.Err // trace.ErrInput: exit 2 by its type
		}
	}
	for _, fr := range results {
		if err := report.CheckFinite(fr); err != nil {
			return err // *report.NonFiniteError
		}
	}
	rep := report.NewTraceSummary(results)
	rep.Warnings = append(append([]string{}, skipped...), rep.Warnings...)
	if rep.Steps() == 0 {
		msg := "no steps"
		if opts.Kind != "" {
			msg = "no " + opts.Kind + " steps"
		}
		if len(rep.Warnings) == 0 {
			return inputErrf("%s in %s", msg, strings.Join(files, ", "))
		}
		return inputErrf("%s: %s", msg, strings.Join(rep.Warnings, "; "))
	}
	return output{views: rep.Views()}.write(s, opts.Format)
}

// traceKernelsOptions are the inputs of `moecast trace kernels`.
type traceKernelsOptions struct {
	File   string
	Top    int
	Rules  string
	Format string
}

func newTraceKernelsCmd(s *streams, runF func(*traceKernelsOptions) error) *cobra.Command {
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
			if runF != nil {
				return runF(opts)
			}
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
		return fr.Err // trace.ErrInput: exit 2 by its type
	}
	if err := report.CheckFinite(fr); err != nil {
		return err // *report.NonFiniteError
	}
	r := fr.Result
	if len(r.Kernels) == 0 {
		return inputErrf("%s: no kernel events in the trace", opts.File)
	}
	k := &report.Kernels{File: opts.File, Result: r, Top: opts.Top}
	return output{views: k.Views()}.write(s, opts.Format)
}

// progressMin is the input size from which a progress bar is shown.
const progressMin = 64 << 20

// startProgress shows a progress bar on stderr while files are read, when
// stderr is a terminal and the files are large; it returns the function
// that ends it.
func startProgress(s *streams, files []string, fo *trace.FileOptions) (stop func()) {
	f, ok := osFile(s.Err)
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
		label := visible(filepath.Base(files[0]))
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
