package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
)

// planOptions are the inputs of `moecast plan`.
type planOptions struct {
	Scenario string // file path or shipped scenario name; "" = embedded default
	// progress gets the progress line (nil: none), stdin what "-" reads;
	// runPlan sets them.
	progress io.Writer
	stdin    io.Reader
	// Set holds the flags given; they override the scenario's [plan].
	Set    planFlags
	Format string
	HTML   string // --html FILE; "" = none
	// Refine builds the second-stage evaluator for a scenario (the serving
	// simulation); nil, or a nil Evaluator, screens only.
	Refine func(sc *scenarios.Scenario) (plan.Evaluator, error)
	// Workers for plan.Search (0: every core).
	Workers int
}

// planFlags are the flag values and which were given.
type planFlags struct {
	gpus                                   string
	maxGPUs                                int
	ttft, tpot                             string
	perUser, targetOutput, targetRate      float64
	hasGPUs, hasMax, hasTTFT, hasTPOT      bool
	hasPerUser, hasTargetOutput, hasTarget bool
	disagg, hasDisagg                      bool
}

func newPlanCmd(s *streams, runF func(*planOptions) error) *cobra.Command {
	opts := &planOptions{Refine: servingRefine}
	f := &opts.Set
	cmd := &cobra.Command{
		Use:   "plan [SCENARIO]",
		Short: "Search deployments: which GPUs, how many, which layout, how many users at a latency target",
		Long: `Search every deployment of the scenario's model for its request shape
(workload.input_tokens / output_tokens): GPU type, GPUs per replica (within
one node), TP / EP / DP / data-parallel attention as vLLM and SGLang run
them, KV cache bf16 and fp8, with and without the scenario's speculative
decoding; each at concurrency 1, 2, 4, ..., 512 where it fits in memory.
Prints the Pareto front of output tokens/s per GPU against tokens/s per
user, the best deployment under the objectives (with the replicas and GPUs a
target needs), and each layout's best point with why the others lost.

Options come from the scenario's [plan] table; flags override them.
SCENARIO is a TOML file, or the name of a shipped scenario
(` + strings.Join(scenarios.Names(), ", ") + `).
Without it, the embedded default ` + scenarios.DefaultName + ` is planned.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Scenario = args[0]
			}
			fl := c.Flags()
			f.hasGPUs, f.hasMax = fl.Changed("gpus"), fl.Changed("max-gpus")
			f.hasTTFT, f.hasTPOT = fl.Changed("ttft-p99"), fl.Changed("tpot-p99")
			f.hasPerUser = fl.Changed("min-tokens-per-s-per-user")
			f.hasDisagg = fl.Changed("disagg")
			f.hasTargetOutput, f.hasTarget = fl.Changed("target-output-tokens-per-s"), fl.Changed("target-request-rate")
			if f.hasTargetOutput && f.hasTarget {
				return inputErrf("give --target-output-tokens-per-s or --target-request-rate, not both")
			}
			if runF != nil {
				return runF(opts)
			}
			return runPlan(s, opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.gpus, "gpus", "", "GPU presets to search, comma-separated (e.g. h200-sxm,b200-sxm); default: [plan] gpus, else the scenario's GPU")
	fs.IntVar(&f.maxGPUs, "max-gpus", 0, "most GPUs of one replica and, with a target, of all replicas; default: [plan] max_gpus, else the node size")
	fs.StringVar(&f.ttft, "ttft-p99", "", `objective on the p99 time to first token (e.g. 2s)`)
	fs.StringVar(&f.tpot, "tpot-p99", "", `objective on the p99 time per output token (e.g. 50ms)`)
	fs.Float64Var(&f.perUser, "min-tokens-per-s-per-user", 0, "least tokens/s one request must see")
	fs.Float64Var(&f.targetOutput, "target-output-tokens-per-s", 0, "output tokens/s to carry: size replicas and GPUs for it")
	fs.Float64Var(&f.targetRate, "target-request-rate", 0, "requests/s to carry (x output_tokens output tokens/s)")
	fs.BoolVar(&f.disagg, "disagg", false, "also price disaggregated prefill/decode deployments (xPyD); default: [plan] disagg")
	fs.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	fs.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report with charts to FILE")
	return cmd
}

// apply sets the flags given onto p.
func (f *planFlags) apply(p *scenarios.Plan) error {
	if f.hasGPUs {
		p.GPUs = nil
		for _, g := range strings.Split(f.gpus, ",") {
			if g = strings.TrimSpace(g); g != "" {
				p.GPUs = append(p.GPUs, g)
			}
		}
		if len(p.GPUs) == 0 {
			return inputErrf("--gpus: no GPU named (want e.g. --gpus h200-sxm,b200-sxm)")
		}
	}
	if f.hasMax {
		if f.maxGPUs <= 0 {
			return inputErrf("--max-gpus: %d must be > 0", f.maxGPUs)
		}
		p.MaxGPUs = f.maxGPUs
	}
	for _, d := range []struct {
		has  bool
		text string
		flag string
		dst  *unit.Seconds
	}{{f.hasTTFT, f.ttft, "--ttft-p99", &p.TTFTP99}, {f.hasTPOT, f.tpot, "--tpot-p99", &p.TPOTP99}} {
		if !d.has {
			continue
		}
		v, err := unit.ParseSeconds(d.text)
		if err != nil {
			return inputErrf("%s: %v", d.flag, err)
		}
		if !(v > 0) {
			return inputErrf("%s: %q must be a positive duration", d.flag, d.text)
		}
		*d.dst = v
	}
	if f.hasPerUser {
		p.MinTokensPerSPerUser = f.perUser
	}
	if f.hasDisagg {
		p.Disagg = f.disagg
	}
	if f.hasTargetOutput {
		p.TargetOutputTokensPerS, p.TargetRequestRate = f.targetOutput, 0
	}
	if f.hasTarget {
		p.TargetRequestRate, p.TargetOutputTokensPerS = f.targetRate, 0
	}
	if err := p.Check(); err != nil {
		return err // a *scenarios.PlanError
	}
	return nil
}

func runPlan(s *streams, opts *planOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkHTMLPath(opts.HTML); err != nil {
		return err
	}
	opts.progress, opts.stdin = progressOn(s.Err, nil), s.In
	in, err := planInputOf(opts)
	if err != nil {
		return err
	}
	if err := checkHTMLInputs(opts.HTML, scenarioInputs(in.Scenario)); err != nil {
		return err
	}
	pl, err := computePlan(in)
	if err != nil {
		return err
	}
	if b := pl.Result.Best; b != nil && b.TooMany {
		return inputErrf("plan: %s needs %d or more replicas, more than moecast counts; check the target's number and unit", pl.TargetString(), plan.MaxReplicas)
	}
	err2 := output{html: opts.HTML, views: pl.Views(), inputs: scenarioInputs(in.Scenario)}.write(s, opts.Format)
	if err2 != nil {
		return err2
	}
	if pl.Result.Best == nil {
		// The output above lists the nearest points; the exit code says
		// that the objectives asked for cannot be met.
		return inputErrf("plan: no deployment meets the SLOs (%s); the nearest points are listed", pl.SLOString())
	}
	return nil
}

// planInput is what plan computes from: the scenario, its [plan] with the
// flags applied, the constructor of the refining evaluator (nil: screen
// only), plan.Search's workers (0: every core) and where the progress line
// goes (nil: nowhere).
type planInput struct {
	Scenario *scenarios.Scenario
	Plan     scenarios.Plan
	Refine   func(sc *scenarios.Scenario) (plan.Evaluator, error)
	Workers  int
	Progress io.Writer
}

// planInputOf reads the scenario opts names and applies the flags to its
// [plan].
func planInputOf(opts *planOptions) (planInput, error) {
	var sc *scenarios.Scenario
	src, err := scenarios.ReadSourceIn(opts.Scenario, opts.stdin)
	if err == nil {
		sc, err = src.Parse(nil)
	}
	if err != nil {
		return planInput{}, err // *scenarios.InputError
	}
	p := sc.Plan
	if err := opts.Set.apply(&p); err != nil {
		return planInput{}, err
	}
	return planInput{Scenario: sc, Plan: p, Refine: opts.Refine, Workers: opts.Workers, Progress: opts.progress}, nil
}

// computePlan searches the deployments of in.Plan and prices the
// disaggregated ones when [plan] disagg asks for them.
func computePlan(in planInput) (*view.Planned, error) {
	sc, p := in.Scenario, in.Plan
	space, warns, err := sc.PlanSpace(p)
	if err != nil {
		return nil, err // *scenarios.InputError
	}
	o := p.Options()
	o.Workers = in.Workers
	if in.Refine != nil {
		ev, err := in.Refine(sc)
		if err != nil {
			return nil, inputErrf("%w", err)
		}
		o.Refine = ev
	}
	prog := startProgressLine(in.Progress, func(done int64) string {
		return fmt.Sprintf("plan: %d points priced", done)
	})
	o.Priced = &prog.done
	res, err := plan.Search(space, o)
	prog.Stop()
	if err != nil {
		return nil, err // *plan.InputError
	}
	pl := &view.Planned{Scenario: sc, Plan: p, Space: space, Result: res, SLO: o.SLO}
	if pl.Priced() == 0 {
		return nil, inputErrf("plan: empty search space: none of the %d deployments holds one sequence of %d tokens in memory (%s)",
			len(res.Candidates), p.InputTokens+p.OutputTokens, res.DeploymentReason(0, o.SLO))
	}
	pl.Warnings = append(append(append(pl.Warnings, sc.Warnings...), warns...), res.Warnings...)
	if p.Disagg {
		ev, _ := o.Refine.(*servingEval)
		if ev == nil {
			if ev2, err := servingRefine(sc); err == nil {
				ev, _ = ev2.(*servingEval)
			}
		}
		if ev != nil {
			planDisagg(pl, ev)
		}
	}
	return pl, nil
}
