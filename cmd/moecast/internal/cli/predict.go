package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

// predictOptions are the inputs of `moecast predict`.
type predictOptions struct {
	Scenario    string // file path or shipped scenario name; "" = embedded default
	Batches     []int  // --batch; nil = the scenario's workload.batch
	Context     int    // --context; 0 = the scenario's workload.context
	Format      string // text | json | csv
	Explain     bool
	Calibration string // --calibration, comma-separated sources; "" = the scenario's hardware.calibration
	HTML        string // --html FILE: also write the HTML report (html.go)
	// Prefill (--prefill) prices one prefill step per chunk size instead
	// of decode steps, each a single request's chunk after Prefix
	// (--prefix) cached tokens (predict_prefill.go).
	Prefill []int
	Prefix  int
}

func newPredictCmd(s *streams, runF func(*predictOptions) error) *cobra.Command {
	opts := &predictOptions{}
	var batch, prefill string
	cmd := &cobra.Command{
		Use:   "predict [SCENARIO]",
		Short: "Predict decode-step time, throughput and memory for a scenario",
		Long: `Predict the decode-step time of an MoE model for each batch size of a
scenario: step time with its interval, TPOT, tokens/s, tokens/s per user,
the biggest cost categories, and whether the batch fits in GPU memory.

With --prefill TOKENS[,TOKENS...] it prices one prefill step per chunk
size instead: a single request's chunk of TOKENS new tokens after
--prefix cached tokens, alone in the engine, as simulate prices that step
(the engine's CUDA-graph or eager launch, its host work per step): step
time, tokens/s and the biggest cost categories; with --explain every op
of one layer of each kind of each chunk, with its time and source.

SCENARIO is a TOML file ("-" reads it from standard input, relative
paths in it resolving against the current directory), or the name of a shipped scenario
(` + strings.Join(scenarios.Names(), ", ") + `).
Without it, the embedded default ` + scenarios.DefaultName + ` runs.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Scenario = args[0]
			}
			if c.Flags().Changed("batch") {
				b, err := parseBatchFlag(batch)
				if err != nil {
					return err
				}
				opts.Batches = b
			}
			if c.Flags().Changed("prefix") && !c.Flags().Changed("prefill") {
				return inputErrf("--prefix applies to --prefill: give --prefill TOKENS too")
			}
			if c.Flags().Changed("prefill") {
				for _, fl := range []string{"batch", "context", "html"} {
					if c.Flags().Changed(fl) {
						return inputErrf("--prefill prices one request's prefill chunk: --%s does not apply (--prefix gives the cached tokens)", fl)
					}
				}
				p, err := parsePrefillFlag(prefill, opts.Prefix)
				if err != nil {
					return err
				}
				opts.Prefill = p
			}
			if c.Flags().Changed("context") {
				if err := scenarios.CheckContext(opts.Context); err != nil {
					return inputErrf("--context: %w", err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return runPredict(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&batch, "batch", "", "batch sizes, comma-separated (e.g. 1,8,64); default: the scenario's workload.batch")
	f.IntVar(&opts.Context, "context", 0, "context length in tokens; default: the scenario's workload.context")
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	f.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report with charts to FILE")
	f.BoolVar(&opts.Explain, "explain", false, "print every op of one layer of each kind for the first batch size (with --prefill: for each chunk size)")
	f.StringVar(&prefill, "prefill", "", "price one prefill step per chunk size instead of decode steps: a single request's chunk of TOKENS new tokens, comma-separated (e.g. 1024,4096)")
	f.IntVar(&opts.Prefix, "prefix", 0, "with --prefill: tokens already cached before the chunk (default 0)")
	f.StringVar(&opts.Calibration, "calibration", "", `op-cost calibration: "embedded" (for the scenario's GPU), "embedded:NAME", "none" (roofline only) or a calibration file; several, comma-separated, are layered, later ones overriding earlier ones table by table (e.g. embedded,my-box-nccl.toml); default: the scenario's hardware.calibration`)
	return cmd
}

// parseBatchFlag parses "1,8,64".
func parseBatchFlag(v string) ([]int, error) {
	out, err := parseIntList("batch", v, "1,8,64")
	if err != nil {
		return nil, err
	}
	if err := scenarios.CheckBatches(out); err != nil {
		return nil, inputErrf("--batch: %w", err)
	}
	return out, nil
}

// parseIntList parses the comma-separated integers v of flag --name;
// example, in the error, shows a valid value.
func parseIntList(name, v, example string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, inputErrf("--%s: %q is not an integer (want e.g. --%s %s)", name, f, name, example)
		}
		out = append(out, n)
	}
	return out, nil
}

// calibrationSources splits a --calibration value into its sources,
// comma-separated, each trimmed of spaces.
func calibrationSources(v string) []string {
	srcs := strings.Split(v, ",")
	for i := range srcs {
		srcs[i] = strings.TrimSpace(srcs[i])
	}
	return srcs
}

// predictInput is what predict computes from: the scenario (its
// calibration set) and the batches and context to price.
type predictInput struct {
	Scenario *scenarios.Scenario
	Batches  []int
	Context  int
}

func runPredict(s *streams, opts *predictOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkHTMLPath(opts.HTML); err != nil {
		return err
	}
	sc, err := openScenario(s, opts.Scenario)
	if err != nil {
		return err
	}
	if opts.Calibration != "" {
		if err := sc.SetCalibration(calibrationSources(opts.Calibration)...); err != nil {
			return err // *scenarios.InputError
		}
	}
	if err := checkHTMLInputs(opts.HTML, scenarioInputs(sc)); err != nil {
		return err
	}
	if opts.Prefill != nil {
		return runPrefill(s, sc, opts)
	}
	in := predictInput{Scenario: sc, Batches: sc.Batches, Context: sc.Context}
	if opts.Batches != nil {
		in.Batches = opts.Batches
	}
	if opts.Context > 0 {
		in.Context = opts.Context
	}
	if opts.Explain {
		sm, err := sc.Sim()
		if err != nil {
			return err
		}
		return runExplain(s, sc, sm, in.Batches[0], in.Context, opts.Format)
	}
	pr, err := predict(in)
	if err != nil {
		return err
	}
	return output{html: opts.HTML, views: pr.Views(), inputs: scenarioInputs(sc)}.write(s, opts.Format)
}

// predict prices one decode step of each batch of in at its context, with
// the warnings of the scenario, the context, memory fit and calibration
// ranges.
func predict(in predictInput) (*view.Prediction, error) {
	sc := in.Scenario
	sm, err := sc.Sim()
	if err != nil {
		return nil, err
	}
	pr := &view.Prediction{Scenario: sc, Context: in.Context, Warnings: append(append([]string{}, sc.Warnings...), sc.ContextWarnings(in.Context)...),
		Accuracy: accuracyOf(sc)}
	for _, b := range in.Batches {
		p, err := sm.Step(b, in.Context)
		if err != nil {
			return nil, sc.KeyError(err)
		}
		if err := checkPointFinite(p); err != nil {
			return nil, inputErrf("%s: %w", sc.File, err)
		}
		pr.Points = append(pr.Points, p)
	}
	pr.Warnings = append(pr.Warnings, fitWarnings(pr.Points)...)
	rw, err := tableRangeWarnings(sm, pr.Points)
	if err != nil {
		return nil, sc.KeyError(err)
	}
	pr.Warnings = collapseWarnings(append(pr.Warnings, rw...))
	if pr.BreakEven, err = breakEvens(sc, sm, pr.Points); err != nil {
		return nil, err // *scenarios.Error (KeyError)
	}
	return pr, nil
}

// maxFinite bounds every number predict prints: above it (1e15 ms is
// 30,000 years a step) a figure is an input's overflow, not a prediction.
const maxFinite = 1e15

// checkPointFinite refuses a point with a number that is not finite or beyond
// maxFinite, which would print as Inf, NaN or a 250-digit figure (and make
// the JSON encoder fail): some input figure is out of range.
func checkPointFinite(p sim.Point) error {
	vals := []struct {
		name string
		v    float64
	}{
		{"step_ms", p.Step.Time.Ms()}, {"step_ms_lo", p.Step.Lo.Ms()}, {"step_ms_hi", p.Step.Hi.Ms()},
		{"tpot_ms", p.TPOT.Ms()}, {"tokens_per_step", p.TokensPerStep}, {"tokens_per_s", p.TokensPerSecond},
		{"tokens_per_s_per_user", p.PerUser}, {"weights_gb_per_gpu", p.Memory.Weights.GB()}, {"kv_gb_per_gpu", p.Memory.KV.GB()},
	}
	for c := cost.Category(0); c < cost.NumCategories; c++ {
		vals = append(vals, struct {
			name string
			v    float64
		}{c.String() + "_ms", p.Breakdown[c].Time.Ms()})
	}
	for _, x := range vals {
		if math.IsNaN(x.v) || math.IsInf(x.v, 0) || math.Abs(x.v) > maxFinite {
			return fmt.Errorf("batch %d: %s is %g, not a finite prediction: an input figure is out of range (a custom GPU or fabric, a calibration row)", p.Batch, x.name, x.v)
		}
	}
	return nil
}

// fitWarning says why a point does not fit in GPU memory, or "".
func fitWarning(p sim.Point) string {
	if p.Fits {
		return ""
	}
	m := p.Memory
	if m.MaxBatch <= 0 {
		return fmt.Sprintf("batch %d: does not fit: weights take %.2f GB per GPU and no sequence of %d tokens fits beside them (%.2f GB short)",
			p.Batch, m.Weights.GB(), p.Context, -m.Free.GB())
	}
	return fmt.Sprintf("batch %d: does not fit: KV cache needs %.2f GB per GPU at context %d, %.2f GB more than is free; at most %d sequences fit",
		p.Batch, m.KV.GB(), p.Context, -m.Free.GB(), m.MaxBatch)
}
