package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

// sweepOptions are the inputs of `moecast sweep`.
type sweepOptions struct {
	Scenario string    // file path or shipped scenario name; "" = embedded default
	progress io.Writer // the progress line (nil: none); runSweep sets it
	stdin    io.Reader // what "-" reads; runSweep sets it
	Sets     []string  // --set KEY=V1,V2,... as given
	Serving  bool      // --serving: each point runs simulate instead of predict
	Format   string
	HTML     string
	Workers  int // 0: every core
}

func newSweepCmd(s *streams, runF func(*sweepOptions) error) *cobra.Command {
	opts := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep [SCENARIO] --set KEY=V1,V2,... [--set ...]",
		Short: "Predict (or, with --serving, simulate) over the Cartesian product of scenario keys",
		Long: `Run predict at every combination of the values given to scenario keys,
each named by its dotted TOML name: --set parallel.tp=1,2,4,8
--set hardware.gpu=h200-sxm,b200-sxm --set workload.context=2048,8192
--set speculative.acceptance=0.5,0.7,0.9. A value is written as in TOML
without quotes; an array value as [a, b]. Each setting replaces the key's
value in the scenario file (or adds it), nothing else: sweeping
hardware.gpu keeps the file's hardware.fabric and layout. Combinations the
scenario refuses are skipped; each distinct reason is shown once, with its
count. Points are computed on every core.

With --serving, each combination runs the serving simulation instead, as
moecast simulate runs the scenario, and the serving keys sweep too:
--serving --set workload.concurrency=1,4 --set runtime.max_num_batched_tokens=2048,8192.

SCENARIO is a TOML file, or the name of a shipped scenario
(` + strings.Join(scenarios.Names(), ", ") + `).
Without it, the embedded default ` + scenarios.DefaultName + ` is swept.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Scenario = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runSweep(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.Sets, "set", nil, "KEY=V1,V2,...: sweep a scenario key over values (repeatable; the product of all is run)")
	f.BoolVar(&opts.Serving, "serving", false, "run the serving simulation (simulate) at each point instead of predict")
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	f.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report with charts to FILE")
	return cmd
}

// parseSets turns the --set flags into sweep axes, checking each key.
func parseSets(sets []string) ([]plan.Axis, error) {
	var axes []plan.Axis
	seen := map[string]bool{}
	for _, s := range sets {
		key, vals, ok := strings.Cut(oneLine.Replace(s), "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, inputErrf("--set %q: want KEY=V1,V2,... (e.g. --set parallel.tp=1,2,4,8)", s)
		}
		if err := scenarios.CheckOverrideKey(key); err != nil {
			return nil, inputErrf("--set %s: %v", key, err)
		}
		if seen[key] {
			return nil, inputErrf("--set %s: given twice", key)
		}
		seen[key] = true
		values, err := splitValues(vals)
		if err != nil {
			return nil, inputErrf("--set %s: %v", key, err)
		}
		for i, v := range values {
			if j := slices.Index(values[:i], v); j >= 0 {
				return nil, inputErrf("--set %s: value %s (item %d) repeats item %d", key, v, i+1, j+1)
			}
			if err := scenarios.CheckOverride(scenarios.Override{Key: key, Value: v}); err != nil {
				return nil, err // *scenarios.InputError
			}
		}
		axes = append(axes, plan.Axis{Name: key, Values: values})
	}
	if n := 1; len(axes) > 0 {
		for _, a := range axes {
			if n > plan.MaxSweepPoints/len(a.Values) {
				return nil, inputErrf("--set: more than %d combinations", plan.MaxSweepPoints)
			}
			n *= len(a.Values)
		}
	}
	return axes, nil
}

// oneLine keeps an error that quotes a flag on one line.
var oneLine = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`)

// splitValues splits "1,2,[3, 4]" at the commas outside brackets and
// quotes.
func splitValues(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '[':
			depth++
		case r == ']':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("%q: unbalanced ]", s)
			}
		case r == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if depth != 0 || quote != 0 {
		return nil, fmt.Errorf("%q: unclosed [ or quote", s)
	}
	out = append(out, strings.TrimSpace(s[start:]))
	for i, v := range out {
		if v == "" {
			return nil, fmt.Errorf("value %d of %q is empty", i+1, s)
		}
	}
	return out, nil
}

func newSweepStep(p *sim.Point) view.SweepStep {
	s := view.SweepStep{Batch: p.Batch, Context: p.Context, StepMs: p.Step.Time.Ms(), LoMs: p.Step.Lo.Ms(), HiMs: p.Step.Hi.Ms(),
		TPOTMs: p.TPOT.Ms(), TokensStep: p.TokensPerStep, TPS: p.TokensPerSecond, PerUser: p.PerUser,
		WeightsGB: p.Memory.Weights.GB(), KVGB: p.Memory.KV.GB(), MaxBatch: p.Memory.MaxBatch, Fits: p.Fits}
	for c := range cost.NumCategories {
		s.Breakdown[c] = p.Breakdown[c].Time.Ms()
	}
	return s
}

// variants caches scenario variants by their deployment overrides, so
// that workload keys sweep without loading the scenario again.
type variants struct {
	src  *scenarios.Source
	base *variant // the scenario without overrides
	mu   sync.Mutex
	m    map[string]*variant
}

type variant struct {
	once sync.Once
	sc   *scenarios.Scenario
	sm   *sim.Sim
	err  error
}

func (v *variants) get(set []scenarios.Override) (*variant, error) {
	if len(set) == 0 && v.base != nil {
		return v.base, nil // only workload keys are swept: no lock, no key
	}
	var key strings.Builder
	for _, o := range set {
		key.WriteString(o.Key)
		key.WriteByte(0)
		key.WriteString(o.Value)
		key.WriteByte(0)
	}
	v.mu.Lock()
	e := v.m[key.String()]
	if e == nil {
		e = &variant{}
		v.m[key.String()] = e
	}
	v.mu.Unlock()
	e.once.Do(func() {
		e.sc, e.err = v.src.Parse(set)
		if e.err == nil {
			e.sm, e.err = e.sc.Sim()
		}
	})
	return e, e.err
}

func runSweep(s *streams, opts *sweepOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkHTMLPath(opts.HTML); err != nil {
		return err
	}
	opts.progress, opts.stdin = progressOn(s.Err, nil), s.In
	in, err := sweepInputOf(opts)
	if err != nil {
		return err
	}
	inputs := sweepInputs(in)
	if err := checkHTMLInputs(opts.HTML, inputs); err != nil {
		return err
	}
	if opts.Serving {
		ss, err := computeServingSweep(in)
		if err != nil {
			return err
		}
		o := servingOutput(ss, opts.HTML)
		o.inputs = inputs
		return o.write(s, opts.Format)
	}
	sw, err := computeSweep(in)
	if err != nil {
		return err
	}
	return output{html: opts.HTML, views: sw.Views(), inputs: inputs}.write(s, opts.Format)
}

// fileKeys are the scenario keys whose values name files to read.
var fileKeys = map[string]bool{"model.config": true, "hardware.calibration": true, "workload.trace": true}

// sweepInputs are the files the sweep reads: the base scenario's and, for
// each value of a swept key that names a file, those of the scenario with
// that value (a model config or calibration file named only in --set).
// A value the scenario refuses is left to the sweep to report.
func sweepInputs(in sweepInput) []string {
	inputs := scenarioInputs(in.Base)
	for _, a := range in.Axes {
		if !fileKeys[a.Name] {
			continue
		}
		for _, v := range a.Values {
			if sc, err := in.Source.Parse([]scenarios.Override{{Key: a.Name, Value: v}}); err == nil {
				inputs = append(inputs, scenarioInputs(sc)...)
			}
		}
	}
	return inputs
}

// sweepInput is what a sweep computes from: the axes of --set, the
// scenario's text (parsed again with each combination's overrides) and
// the scenario as the file has it (Base).
type sweepInput struct {
	Axes     []plan.Axis
	Source   *scenarios.Source
	Base     *scenarios.Scenario
	Workers  int       // 0: GOMAXPROCS
	Progress io.Writer // the progress line; nil for none
}

// sweepInputOf parses the --set flags and reads the scenario, unchanged
// (Base) and as the source of its variants.
func sweepInputOf(opts *sweepOptions) (sweepInput, error) {
	axes, err := parseSets(opts.Sets)
	if err != nil {
		return sweepInput{}, err
	}
	src, err := scenarios.ReadSourceIn(opts.Scenario, opts.stdin)
	if err != nil {
		return sweepInput{}, err // *scenarios.InputError
	}
	base, err := src.Parse(nil)
	if err != nil {
		return sweepInput{}, err
	}
	return sweepInput{Axes: axes, Source: src, Base: base, Workers: opts.Workers, Progress: opts.progress}, nil
}

// computeSweep is sweep without --serving: predict at each combination.
func computeSweep(in sweepInput) (*view.Swept, error) {
	axes, src, base := in.Axes, in.Source, in.Base
	bsm, err := base.Sim()
	if err != nil {
		return nil, err
	}
	vs := &variants{src: src, m: map[string]*variant{}, base: &variant{sc: base, sm: bsm}}
	apply := func(set []plan.Setting) (view.SweepValue, error) {
		deploy := make([]scenarios.Override, 0, len(set))
		work := make([]scenarios.Override, 0, len(set))
		for _, st := range set {
			o := scenarios.Override{Key: st.Name, Value: st.Value}
			if scenarios.IsWorkloadKey(st.Name) {
				work = append(work, o)
			} else {
				deploy = append(deploy, o)
			}
		}
		v, err := vs.get(deploy)
		if err != nil {
			return view.SweepValue{}, err
		}
		batches, context, err := v.sc.Workload(work)
		if err != nil {
			return view.SweepValue{}, err
		}
		out := view.SweepValue{Warnings: v.sc.Warnings, Steps: make([]view.SweepStep, 0, len(batches))}
		for _, b := range batches {
			p, err := v.sm.Step(b, context)
			if err != nil {
				return view.SweepValue{}, v.sc.KeyError(err)
			}
			out.Steps = append(out.Steps, newSweepStep(&p))
		}
		return out, nil
	}
	total := 1
	for _, a := range axes {
		total *= max(len(a.Values), 1)
		if total > plan.MaxSweepPoints {
			break // plan.Sweep refuses it
		}
	}
	prog := startProgressLine(in.Progress, func(done int64) string {
		return fmt.Sprintf("sweep: %d/%d combinations", done, total)
	})
	counted := func(set []plan.Setting) (view.SweepValue, error) {
		defer prog.done.Add(1)
		return apply(set)
	}
	res, err := plan.Sweep(axes, counted, in.Workers)
	prog.Stop()
	if err != nil {
		return nil, err // *plan.InputError
	}
	if len(res.Points) == 0 {
		return nil, inputErrf("sweep: every one of the %d combinations was skipped: %s", len(res.Skipped), reasonsLine(res.Reasons))
	}
	sw := &view.Swept{Base: base, Result: res}
	seen := map[string]bool{}
	for _, p := range res.Points {
		for _, w := range p.Value.Warnings {
			if !seen[w] {
				seen[w] = true
				sw.Warnings = append(sw.Warnings, w)
			}
		}
	}
	sw.Categories = sweepCategories(res)
	return sw, nil
}

func reasonsLine(rc []plan.ReasonCount) string {
	var s []string
	for _, r := range rc {
		s = append(s, fmt.Sprintf("%dx %s", r.Count, r.Reason))
	}
	return strings.Join(s, "; ")
}

// sweepCategories is every category, idle only when some point has it.
func sweepCategories(res *plan.SweepResult[view.SweepValue]) []cost.Category {
	var cs []cost.Category
	for c := cost.Category(0); c < cost.NumCategories; c++ {
		if c == cost.Idle {
			nonzero := false
			for _, p := range res.Points {
				for _, s := range p.Value.Steps {
					nonzero = nonzero || s.Breakdown[c] != 0
				}
			}
			if !nonzero {
				continue
			}
		}
		cs = append(cs, c)
	}
	return cs
}
