package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/plan"
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

func newPlanCmd(s *streams) *cobra.Command {
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
		return inputErr(err)
	}
	return nil
}

// planned is what plan computed, ready to render.
type planned struct {
	sc       *scenarios.Scenario
	plan     scenarios.Plan
	space    *plan.Space
	res      *plan.Result
	slo      plan.SLO
	warnings []string
	// disagg are the disaggregated points ([plan] disagg = true).
	disagg []disaggPoint
}

func runPlan(s *streams, opts *planOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkHTMLPath(opts.HTML); err != nil {
		return err
	}
	opts.progress, opts.stdin = progressOn(s.Err, nil), s.In
	pl, err := computePlan(opts)
	if err != nil {
		return err
	}
	if b := pl.res.Best; b != nil && b.TooMany {
		return inputErrf("plan: %s needs %d or more replicas, more than moecast counts; check the target's number and unit", pl.targetString(), plan.MaxReplicas)
	}
	err2 := output{html: opts.HTML, page: pl.page, json: func() any { return pl.json() },
		csv: pl.pointsTable, text: pl.text, warnings: pl.warnings}.write(s, opts.Format)
	if err2 != nil {
		return err2
	}
	if pl.res.Best == nil {
		// The output above lists the nearest points; the exit code says
		// that the objectives asked for cannot be met.
		return inputErrf("plan: no deployment meets the SLOs (%s); the nearest points are listed", pl.sloString())
	}
	return nil
}

// computePlan loads the scenario, merges the flags and searches.
func computePlan(opts *planOptions) (*planned, error) {
	var sc *scenarios.Scenario
	src, err := scenarios.ReadSourceIn(opts.Scenario, opts.stdin)
	if err == nil {
		sc, err = src.Parse(nil)
	}
	if err != nil {
		return nil, inputErr(err)
	}
	p := sc.Plan
	if err := opts.Set.apply(&p); err != nil {
		return nil, err
	}
	space, warns, err := sc.PlanSpace(p)
	if err != nil {
		return nil, inputErr(err)
	}
	o := p.Options()
	o.Workers = opts.Workers
	if opts.Refine != nil {
		ev, err := opts.Refine(sc)
		if err != nil {
			return nil, inputErr(err)
		}
		o.Refine = ev
	}
	prog := startProgressLine(opts.progress, func(done int64) string {
		return fmt.Sprintf("plan: %d points priced", done)
	})
	o.Priced = &prog.done
	res, err := plan.Search(space, o)
	prog.Stop()
	if err != nil {
		return nil, inputErr(err)
	}
	pl := &planned{sc: sc, plan: p, space: space, res: res, slo: o.SLO}
	if pl.priced() == 0 {
		return nil, inputErrf("plan: empty search space: none of the %d deployments holds one sequence of %d tokens in memory (%s)",
			len(res.Candidates), p.InputTokens+p.OutputTokens, res.DeploymentReason(0, o.SLO))
	}
	pl.warnings = append(append(append(pl.warnings, sc.Warnings...), warns...), res.Warnings...)
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

// sloString renders the objectives and target: "tpot-p99 50ms, >= 20 tok/s/user".
func (pl *planned) sloString() string {
	p := &pl.plan
	var s []string
	if p.TTFTP99 > 0 {
		s = append(s, "ttft-p99 <= "+p.TTFTP99.String())
	}
	if p.TPOTP99 > 0 {
		s = append(s, "tpot-p99 <= "+p.TPOTP99.String())
	}
	if p.MinTokensPerSPerUser > 0 {
		s = append(s, fmt.Sprintf(">= %g tok/s/user", p.MinTokensPerSPerUser))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func (pl *planned) targetString() string {
	p := &pl.plan
	switch {
	case p.TargetOutputTokensPerS > 0:
		return fmt.Sprintf("%g output tok/s", p.TargetOutputTokensPerS)
	case p.TargetRequestRate > 0:
		return fmt.Sprintf("%g requests/s (%g output tok/s)", p.TargetRequestRate, p.TargetRequestRate*float64(p.OutputTokens))
	}
	return "none (one replica)"
}

func (pl *planned) gpuNames() []string {
	var g []string
	for _, o := range pl.space.GPUs {
		g = append(g, o.GPU.Name)
	}
	return g
}

// bestLine says what to deploy, or that nothing meets the objectives.
func (pl *planned) bestLine() string {
	r := pl.res
	if r.Best == nil {
		return "no deployment meets the objectives; nearest points below"
	}
	p := &r.Points[r.Best.Point]
	c := &r.Candidates[p.Candidate]
	s := fmt.Sprintf("%s at concurrency %d: %.1f tok/s/GPU, %.1f tok/s/user, TPOT p99 %.2f ms, %.1f tok/s per replica",
		c.Label(), p.Concurrency, p.PerGPU, p.Metrics.PerUser, p.Metrics.TPOTP99.Ms(), p.Metrics.OutputTokensPerSecond)
	if r.Best.TargetOutputTokensPerSecond > 0 {
		s += fmt.Sprintf("; for %s: %d replicas, %d GPUs", pl.targetString(), r.Best.Replicas, r.Best.GPUs)
		if !r.Best.WithinMaxGPUs {
			s += fmt.Sprintf(" (more than --max-gpus %d)", pl.space.MaxGPUs)
		}
	}
	return s
}

// text writes the header, best, front, deployments and warnings.
func (pl *planned) text(w io.Writer) error {
	r := pl.res
	p := &pl.plan
	lines := []string{
		"scenario  " + pl.sc.Name + " (" + pl.sc.File + ")",
		"model     " + modelSummary(pl.sc),
		fmt.Sprintf("workload  %d input + %d output tokens per request", p.InputTokens, p.OutputTokens),
		"searched  " + pl.searched(),
		"SLOs      " + pl.sloString() + "; target " + pl.targetString(),
		"priced by " + r.Evaluator,
		"",
		"best      " + pl.bestLine(),
		"",
	}
	if _, err := io.WriteString(w, strings.Join(lines, "\n")+"\n"); err != nil {
		return err
	}
	title, idx := "Pareto front (tokens/s per GPU against tokens/s per user, SLOs met)", r.Front
	if len(r.Front) == 0 {
		title, idx = "nearest points (no point meets the SLOs)", r.Nearest
	}
	if _, err := fmt.Fprintln(w, title); err != nil {
		return err
	}
	if err := pl.pointRows(idx, false).render(w, formatText); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "\ndeployments (each layout's best point under the SLOs, and why it lost)"); err != nil {
		return err
	}
	if err := pl.deploymentsTable(false).render(w, formatText); err != nil {
		return err
	}
	if m := pl.memoryLine(); m != "" {
		if _, err := fmt.Fprintln(w, m); err != nil {
			return err
		}
	}
	if pl.plan.Disagg {
		var b strings.Builder
		pl.disaggText(&b)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	for _, wn := range pl.warnings {
		if _, err := fmt.Fprintln(w, "warning: "+wn); err != nil {
			return err
		}
	}
	return nil
}

// searched is one line on the search space.
func (pl *planned) searched() string {
	r := pl.res
	maxg := "node size"
	if pl.space.MaxGPUs > 0 {
		maxg = fmt.Sprint(pl.space.MaxGPUs)
	}
	s := fmt.Sprintf("%d deployments on %s (GPUs per replica up to %s), %d points priced",
		len(r.Candidates), strings.Join(pl.gpuNames(), ", "), maxg, pl.priced())
	if n := len(r.Rejected); n > 0 {
		rc := plan.RejectionReasons(r.Rejected)
		s += fmt.Sprintf("; %d layouts refused (%d reasons, first: %dx %s)", n, len(rc), rc[0].Count, rc[0].Reason)
	}
	return s
}

func (pl *planned) priced() int {
	n := 0
	for i := range pl.res.Points {
		if pl.res.Points[i].Verdict != plan.NoMemory {
			n++
		}
	}
	return n
}
