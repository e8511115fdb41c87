package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/plan"
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

func newSweepCmd(s *streams) *cobra.Command {
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
		for _, v := range values {
			if err := scenarios.CheckOverride(scenarios.Override{Key: key, Value: v}); err != nil {
				return nil, inputErr(err)
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

// sweepStep is the part of a sim.Point a sweep keeps (a sim.Point is
// kilobytes; a sweep may hold millions).
type sweepStep struct {
	batch, context     int
	stepMs, loMs, hiMs float64
	tpotMs, tokensStep float64
	tps, perUser       float64
	weightsGB, kvGB    float64
	maxBatch           int
	fits               bool
	breakdown          [cost.NumCategories]float64 // ms
}

func newSweepStep(p *sim.Point) sweepStep {
	s := sweepStep{batch: p.Batch, context: p.Context, stepMs: p.Step.Time.Ms(), loMs: p.Step.Lo.Ms(), hiMs: p.Step.Hi.Ms(),
		tpotMs: p.TPOT.Ms(), tokensStep: p.TokensPerStep, tps: p.TokensPerSecond, perUser: p.PerUser,
		weightsGB: p.Memory.Weights.GB(), kvGB: p.Memory.KV.GB(), maxBatch: p.Memory.MaxBatch, fits: p.Fits}
	for c := range cost.NumCategories {
		s.breakdown[c] = p.Breakdown[c].Time.Ms()
	}
	return s
}

// sweepValue is one combination's result: its predict points.
type sweepValue struct {
	steps    []sweepStep
	warnings []string // the scenario variant's warnings
}

// swept is what sweep computed, ready to render.
type swept struct {
	base     *scenarios.Scenario // the scenario without overrides, for headers
	res      *plan.SweepResult[sweepValue]
	warnings []string
	cats     []cost.Category
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
	if opts.Serving {
		ss, err := computeServing(opts)
		if err != nil {
			return err
		}
		return servingOutput(ss, opts.HTML).write(s, opts.Format)
	}
	sw, err := computeSweep(opts)
	if err != nil {
		return err
	}
	return output{html: opts.HTML, page: sw.page, json: func() any { return sw.json() },
		csv: func() *table { return sw.table(true) }, text: sw.text, warnings: sw.warnings,
		notes: sw.skipLines()}.write(s, opts.Format)
}

// sweepInputs parses the --set flags and reads the scenario, unchanged
// (base) and as the source of its variants.
func sweepInputs(opts *sweepOptions) ([]plan.Axis, *scenarios.Source, *scenarios.Scenario, error) {
	axes, err := parseSets(opts.Sets)
	if err != nil {
		return nil, nil, nil, err
	}
	src, err := scenarios.ReadSourceIn(opts.Scenario, opts.stdin)
	if err != nil {
		return nil, nil, nil, inputErr(err)
	}
	base, err := src.Parse(nil)
	if err != nil {
		return nil, nil, nil, inputErr(err)
	}
	return axes, src, base, nil
}

// computeServing is `sweep --serving`: simulate at each combination.
func computeServing(opts *sweepOptions) (*servingSwept, error) {
	axes, src, base, err := sweepInputs(opts)
	if err != nil {
		return nil, err
	}
	return computeServingSweep(axes, src, base, opts.Workers, opts.progress)
}

// computeSweep is sweep without --serving: predict at each combination.
func computeSweep(opts *sweepOptions) (*swept, error) {
	axes, src, base, err := sweepInputs(opts)
	if err != nil {
		return nil, err
	}
	bsm, err := base.Sim()
	if err != nil {
		return nil, inputErr(err)
	}
	vs := &variants{src: src, m: map[string]*variant{}, base: &variant{sc: base, sm: bsm}}
	apply := func(set []plan.Setting) (sweepValue, error) {
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
			return sweepValue{}, err
		}
		batches, context, err := v.sc.Workload(work)
		if err != nil {
			return sweepValue{}, err
		}
		out := sweepValue{warnings: v.sc.Warnings, steps: make([]sweepStep, 0, len(batches))}
		for _, b := range batches {
			p, err := v.sm.Step(b, context)
			if err != nil {
				return sweepValue{}, v.sc.KeyError(err)
			}
			out.steps = append(out.steps, newSweepStep(&p))
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
	prog := startProgressLine(opts.progress, func(done int64) string {
		return fmt.Sprintf("sweep: %d/%d combinations", done, total)
	})
	counted := func(set []plan.Setting) (sweepValue, error) {
		defer prog.done.Add(1)
		return apply(set)
	}
	res, err := plan.Sweep(axes, counted, opts.Workers)
	prog.Stop()
	if err != nil {
		return nil, inputErr(err)
	}
	if len(res.Points) == 0 {
		return nil, inputErrf("sweep: every one of the %d combinations was skipped: %s", len(res.Skipped), reasonsLine(res.Reasons))
	}
	sw := &swept{base: base, res: res}
	seen := map[string]bool{}
	for _, p := range res.Points {
		for _, w := range p.Value.warnings {
			if !seen[w] {
				seen[w] = true
				sw.warnings = append(sw.warnings, w)
			}
		}
	}
	sw.cats = sweepCategories(res)
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
func sweepCategories(res *plan.SweepResult[sweepValue]) []cost.Category {
	var cs []cost.Category
	for c := cost.Category(0); c < cost.NumCategories; c++ {
		if c == cost.Idle {
			nonzero := false
			for _, p := range res.Points {
				for _, s := range p.Value.steps {
					nonzero = nonzero || s.breakdown[c] != 0
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

// skipLines says once per distinct reason how many combinations it skipped.
func (sw *swept) skipLines() []string { return skipLines(sw.res.Reasons) }

// skipLines says once per distinct reason how many combinations a sweep
// skipped (predict's and --serving's alike).
func skipLines(reasons []plan.ReasonCount) []string {
	var out []string
	for _, r := range reasons {
		out = append(out, fmt.Sprintf("skipped %d combination(s): %s", r.Count, r.Reason))
	}
	return out
}

// table is one row per combination and batch: the swept keys, then the
// predict columns (text: the ones read first; full: every field).
func (sw *swept) table(full bool) *table {
	t := &table{}
	for _, a := range sw.res.Axes {
		t.Columns = append(t.Columns, column{Name: a.Name})
	}
	if full {
		for _, n := range []string{"batch", "context", "step_ms", "step_ms_lo", "step_ms_hi", "tpot_ms", "tokens_per_step",
			"tokens_per_s", "tokens_per_s_per_user", "weights_gb_per_gpu", "kv_gb_per_gpu", "max_batch", "fits"} {
			t.Columns = append(t.Columns, column{Name: n})
		}
		for _, c := range sw.cats {
			t.Columns = append(t.Columns, column{Name: c.String() + "_ms"})
		}
	} else {
		t.Columns = append(t.Columns, column{Name: "batch"}, column{Name: "context"}, column{Name: "step ms", Text: "%.3f"},
			column{Name: "TPOT ms", Text: "%.3f"}, column{Name: "tok/s", Text: "%.1f"}, column{Name: "tok/s/user", Text: "%.1f"},
			column{Name: "fits"})
	}
	for _, p := range sw.res.Points {
		set := sw.res.Settings(p.Index)
		for _, s := range p.Value.steps {
			row := make([]any, 0, len(t.Columns))
			for _, st := range set {
				row = append(row, st.Value)
			}
			if full {
				row = append(row, s.batch, s.context, r6(s.stepMs), r6(s.loMs), r6(s.hiMs), r6(s.tpotMs), r6(s.tokensStep),
					r6(s.tps), r6(s.perUser), r6(s.weightsGB), r6(s.kvGB), s.maxBatch, s.fits)
				for _, c := range sw.cats {
					row = append(row, r6(s.breakdown[c]))
				}
			} else {
				fits := "yes"
				if !s.fits {
					fits = "NO"
				}
				row = append(row, s.batch, s.context, s.stepMs, s.tpotMs, s.tps, s.perUser, fits)
			}
			t.add(row...)
		}
	}
	return t
}

// text writes the header, the table, the skip reasons and the warnings.
func (sw *swept) text(w io.Writer) error {
	return sweepText(w, sw.base, sw.res.Axes, len(sw.res.Points), len(sw.res.Skipped), "", sw.table(false), sw.skipLines(), sw.warnings)
}

// sweepText writes a sweep's text report: the header (what note adds to
// the counts line), the table, the skip reasons and the warnings.
func sweepText(w io.Writer, base *scenarios.Scenario, ax []plan.Axis, run, skipped int, note string, t *table, skips, warnings []string) error {
	var axes []string
	n := 1
	for _, a := range ax {
		axes = append(axes, fmt.Sprintf("%s (%d)", a.Name, len(a.Values)))
		n *= len(a.Values)
	}
	head := []string{
		"scenario  " + base.Name + " (" + base.File + ")",
		fmt.Sprintf("sweep     %s: %d combinations, %d run, %d skipped%s", strings.Join(axes, " x "), n, run, skipped, note),
		"",
	}
	if _, err := io.WriteString(w, strings.Join(head, "\n")+"\n"); err != nil {
		return err
	}
	if err := t.render(w, formatText); err != nil {
		return err
	}
	for _, l := range skips {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	for _, wn := range warnings {
		if _, err := fmt.Fprintln(w, "warning: "+wn); err != nil {
			return err
		}
	}
	return nil
}

// sweepPointJSON is one element of "points": the settings, then predict's
// point fields (without "sources": predict and --explain give those).
type sweepPointJSON struct {
	Set               map[string]string  `json:"set"`
	Batch             int                `json:"batch"`
	Context           int                `json:"context"`
	StepMs            float64            `json:"step_ms"`
	StepMsLo          float64            `json:"step_ms_lo"`
	StepMsHi          float64            `json:"step_ms_hi"`
	TPOTMs            float64            `json:"tpot_ms"`
	TokensPerStep     float64            `json:"tokens_per_step"`
	TokensPerS        float64            `json:"tokens_per_s"`
	TokensPerSPerUser float64            `json:"tokens_per_s_per_user"`
	BreakdownMs       map[string]float64 `json:"breakdown_ms"`
	Memory            memoryJSON         `json:"memory"`
	Fits              bool               `json:"fits"`
}

type sweepSkipJSON struct {
	Set    map[string]string `json:"set"`
	Reason string            `json:"reason"`
}

type sweepAxisJSON struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

type sweepJSON struct {
	Scenario string           `json:"scenario"`
	Axes     []sweepAxisJSON  `json:"axes"`
	Points   []sweepPointJSON `json:"points"`
	Skipped  []sweepSkipJSON  `json:"skipped"`
	Reasons  []reasonJSON     `json:"reasons"` // each distinct skip reason once, with its count
	Warnings []string         `json:"warnings"`
}

func (sw *swept) setMap(i int) map[string]string {
	m := map[string]string{}
	for _, st := range sw.res.Settings(i) {
		m[st.Name] = st.Value
	}
	return m
}

func (sw *swept) json() sweepJSON {
	out := sweepJSON{Scenario: sw.base.Name, Axes: []sweepAxisJSON{}, Points: []sweepPointJSON{}, Skipped: []sweepSkipJSON{},
		Reasons: []reasonJSON{}, Warnings: append([]string{}, sw.warnings...)}
	for _, a := range sw.res.Axes {
		out.Axes = append(out.Axes, sweepAxisJSON{Key: a.Name, Values: a.Values})
	}
	for _, p := range sw.res.Points {
		set := sw.setMap(p.Index)
		for _, s := range p.Value.steps {
			pj := sweepPointJSON{Set: set, Batch: s.batch, Context: s.context, StepMs: r6(s.stepMs), StepMsLo: r6(s.loMs),
				StepMsHi: r6(s.hiMs), TPOTMs: r6(s.tpotMs), TokensPerStep: r6(s.tokensStep), TokensPerS: r6(s.tps),
				TokensPerSPerUser: r6(s.perUser), BreakdownMs: map[string]float64{},
				Memory: memoryJSON{WeightsGBPerGPU: r6(s.weightsGB), KVGBPerGPU: r6(s.kvGB), MaxBatch: s.maxBatch}, Fits: s.fits}
			for _, c := range sw.cats {
				pj.BreakdownMs[c.String()] = r6(s.breakdown[c])
			}
			out.Points = append(out.Points, pj)
		}
	}
	for _, k := range sw.res.Skipped {
		out.Skipped = append(out.Skipped, sweepSkipJSON{Set: sw.setMap(k.Index), Reason: k.Reason})
	}
	for _, r := range sw.res.Reasons {
		out.Reasons = append(out.Reasons, reasonJSON{Reason: r.Reason, Count: r.Count})
	}
	return out
}
