package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
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
}

func newPredictCmd(s *streams) *cobra.Command {
	opts := &predictOptions{}
	var batch string
	cmd := &cobra.Command{
		Use:   "predict [SCENARIO]",
		Short: "Predict decode-step time, throughput and memory for a scenario",
		Long: `Predict the decode-step time of an MoE model for each batch size of a
scenario: step time with its interval, TPOT, tokens/s, tokens/s per user,
the biggest cost categories, and whether the batch fits in GPU memory.

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
			if c.Flags().Changed("context") {
				if err := scenarios.CheckContext(opts.Context); err != nil {
					return inputErrf("--context: %w", err)
				}
			}
			return runPredict(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&batch, "batch", "", "batch sizes, comma-separated (e.g. 1,8,64); default: the scenario's workload.batch")
	f.IntVar(&opts.Context, "context", 0, "context length in tokens; default: the scenario's workload.context")
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	f.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report with charts to FILE")
	f.BoolVar(&opts.Explain, "explain", false, "print every op of one layer of each kind for the first batch size")
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

// prediction is what predict computed, ready to render.
type prediction struct {
	sc       *scenarios.Scenario
	context  int
	points   []sim.Point
	warnings []string
	// breakEven is break_even_acceptance per point (predict_spec.go); nil
	// without speculative decoding.
	breakEven []*float64
}

func runPredict(s *streams, opts *predictOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkHTMLPath(opts.HTML); err != nil {
		return err
	}
	var (
		sc  *scenarios.Scenario
		err error
	)
	switch opts.Scenario {
	case "":
		sc, err = scenarios.Default()
	case "-":
		var data []byte
		if data, err = infile.ReadFile(infile.Stdin, s.In, infile.MaxScenario); err != nil {
			return inputErrf("read scenario: %w", err)
		}
		sc, err = scenarios.Parse(scenarios.StdinName, data)
	default:
		sc, err = scenarios.Open(opts.Scenario)
	}
	if err != nil {
		return inputErr(err)
	}
	if opts.Calibration != "" {
		if err := sc.SetCalibration(calibrationSources(opts.Calibration)...); err != nil {
			return inputErr(err)
		}
	}
	batches, context := sc.Batches, sc.Context
	if opts.Batches != nil {
		batches = opts.Batches
	}
	if opts.Context > 0 {
		context = opts.Context
	}
	sm, err := sc.Sim()
	if err != nil {
		return inputErr(err)
	}
	if opts.Explain {
		return runExplain(s, sc, sm, batches[0], context, opts.Format)
	}
	pr := &prediction{sc: sc, context: context, warnings: append(append([]string{}, sc.Warnings...), sc.ContextWarnings(context)...)}
	for _, b := range batches {
		p, err := sm.Step(b, context)
		if err != nil {
			return sc.KeyError(err)
		}
		if err := checkPointFinite(p); err != nil {
			return inputErr(fmt.Errorf("%s: %w", sc.File, err))
		}
		pr.points = append(pr.points, p)
	}
	pr.warnings = append(pr.warnings, fitWarnings(pr.points)...)
	rw, err := tableRangeWarnings(sm, pr.points)
	if err != nil {
		return sc.KeyError(err)
	}
	pr.warnings = collapseWarnings(append(pr.warnings, rw...))
	if pr.breakEven, err = breakEvens(sc, sm, pr.points); err != nil {
		return inputErr(err)
	}
	return output{html: opts.HTML, page: pr.page, json: func() any { return pr.json() },
		csv: func() *table { return pr.table(true) }, text: pr.text, warnings: pr.warnings, inputs: scenarioInputs(sc)}.write(s, opts.Format)
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

// categories is the order of breakdown columns and keys: every category a
// prediction can hold (idle is trace-only and appears only if non-zero).
func categories(points []sim.Point) []cost.Category {
	var cs []cost.Category
	for c := cost.Category(0); c < cost.NumCategories; c++ {
		if c == cost.Idle {
			nonzero := false
			for _, p := range points {
				nonzero = nonzero || p.Breakdown[c].Time != 0
			}
			if !nonzero {
				continue
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// pointJSON is one element of "points" in `predict --format json`.
type pointJSON struct {
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
	Sources           map[string]string  `json:"sources"`
	Memory            memoryJSON         `json:"memory"`
	Fits              bool               `json:"fits"`
	// BreakEvenAcceptance: with speculative decoding, the per-position
	// acceptance below which it is slower than none (null: never pays).
	BreakEvenAcceptance json.RawMessage `json:"break_even_acceptance,omitempty"`
}

type memoryJSON struct {
	WeightsGBPerGPU float64 `json:"weights_gb_per_gpu"`
	KVGBPerGPU      float64 `json:"kv_gb_per_gpu"`
	MaxBatch        int     `json:"max_batch"`
}

type predictJSON struct {
	Scenario string `json:"scenario"`
	// Calibration names every calibration file consulted, in layering
	// order (later ones override earlier ones): "embedded:h200-sxm" or a
	// path; empty for roofline only.
	Calibration []string    `json:"calibration"`
	Points      []pointJSON `json:"points"`
	Warnings    []string    `json:"warnings"`
}

// r6p is r6 of *p; nil stays nil (null in JSON).
func r6p(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := r6(*p)
	return &v
}

// r6 rounds a number written to JSON or CSV to 6 decimals of its unit
// (1 ns for *_ms fields, 1 KB for *_gb fields): no false precision, and
// golden files that do not depend on the last bits of float arithmetic.
func r6(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e15 {
		return x
	}
	return math.Round(x*1e6) / 1e6
}

// json builds the JSON document: breakdown_ms has every category (zeros
// included), sources only the categories with time.
func (pr *prediction) json() predictJSON {
	out := predictJSON{Scenario: pr.sc.Name, Calibration: []string{}, Points: []pointJSON{}, Warnings: []string{}}
	for _, u := range pr.sc.CalibrationUses {
		out.Calibration = append(out.Calibration, u.Name)
	}
	out.Warnings = append(out.Warnings, pr.warnings...)
	cats := categories(pr.points)
	for i, p := range pr.points {
		pj := pointJSON{
			Batch: p.Batch, Context: p.Context,
			StepMs: r6(p.Step.Time.Ms()), StepMsLo: r6(p.Step.Lo.Ms()), StepMsHi: r6(p.Step.Hi.Ms()),
			TPOTMs: r6(p.TPOT.Ms()), TokensPerStep: r6(p.TokensPerStep),
			TokensPerS: r6(p.TokensPerSecond), TokensPerSPerUser: r6(p.PerUser),
			BreakdownMs: map[string]float64{}, Sources: map[string]string{},
			Memory:              memoryJSON{WeightsGBPerGPU: r6(p.Memory.Weights.GB()), KVGBPerGPU: r6(p.Memory.KV.GB()), MaxBatch: p.Memory.MaxBatch},
			Fits:                p.Fits,
			BreakEvenAcceptance: pr.breakEvenJSON(i),
		}
		for _, c := range cats {
			e := p.Breakdown[c]
			pj.BreakdownMs[c.String()] = r6(e.Time.Ms())
			if e.Time != 0 {
				pj.Sources[c.String()] = e.Source.Describe()
			}
		}
		out.Points = append(out.Points, pj)
	}
	return out
}

// table is the per-point table: the text view (full=false: the columns a
// person reads first) or the CSV view (full=true: every field, one column
// per category, units in the names).
func (pr *prediction) table(full bool) *table {
	spec := pr.sc.Config.Spec.Method != sim.SpecNone
	if full {
		t := &table{Columns: []column{
			{Name: "batch"}, {Name: "context"}, {Name: "step_ms"}, {Name: "step_ms_lo"}, {Name: "step_ms_hi"},
			{Name: "tpot_ms"}, {Name: "tokens_per_step"}, {Name: "tokens_per_s"}, {Name: "tokens_per_s_per_user"},
			{Name: "weights_gb_per_gpu"}, {Name: "kv_gb_per_gpu"}, {Name: "max_batch"}, {Name: "fits"},
		}}
		cats := categories(pr.points)
		for _, c := range cats {
			t.Columns = append(t.Columns, column{Name: c.String() + "_ms"})
		}
		if pr.breakEven != nil {
			t.Columns = append(t.Columns, column{Name: "break_even_acceptance"})
		}
		for i, p := range pr.points {
			row := []any{p.Batch, p.Context, r6(p.Step.Time.Ms()), r6(p.Step.Lo.Ms()), r6(p.Step.Hi.Ms()),
				r6(p.TPOT.Ms()), r6(p.TokensPerStep), r6(p.TokensPerSecond), r6(p.PerUser),
				r6(p.Memory.Weights.GB()), r6(p.Memory.KV.GB()), p.Memory.MaxBatch, p.Fits}
			for _, c := range cats {
				row = append(row, r6(p.Breakdown[c].Time.Ms()))
			}
			if pr.breakEven != nil {
				row = append(row, pr.breakEvenCell(i))
			}
			t.add(row...)
		}
		return t
	}
	t := &table{Columns: []column{{Name: "batch"}, {Name: "step ms", Text: "%.3f"}, {Name: "interval ms", Left: true},
		{Name: "TPOT ms", Text: "%.3f"}, {Name: "tok/s", Text: "%.1f"}, {Name: "tok/s/user", Text: "%.1f"}}}
	if spec {
		t.Columns = append(t.Columns, column{Name: "tok/step", Text: "%.2f"})
		if pr.breakEven != nil {
			t.Columns = append(t.Columns, column{Name: "break-even acc", Text: "%.3f"})
		}
	}
	t.Columns = append(t.Columns, column{Name: "fits"}, column{Name: "top categories (share of step)"})
	for i, p := range pr.points {
		row := []any{p.Batch, p.Step.Time.Ms(), interval(p.Step), p.TPOT.Ms(), p.TokensPerSecond, p.PerUser}
		if spec {
			row = append(row, p.TokensPerStep)
			if pr.breakEven != nil {
				row = append(row, pr.breakEvenCell(i))
			}
		}
		fits := "yes"
		if !p.Fits {
			fits = "NO"
		}
		row = append(row, fits, topCategories(p, 3))
		t.add(row...)
	}
	return t
}

// interval renders an estimate's [Lo, Hi] in ms, or "-" when it has none.
func interval(e cost.Estimate) string {
	if e.Lo == 0 && e.Hi == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f-%.3f", e.Lo.Ms(), e.Hi.Ms())
}

// topCategories lists the n biggest categories of p with their share of the
// step: "allreduce 41%, moe 33%, attention 9%".
func topCategories(p sim.Point, n int) string {
	type cs struct {
		c cost.Category
		t unit.Seconds
	}
	var all []cs
	for c := cost.Category(0); c < cost.NumCategories; c++ {
		if t := p.Breakdown[c].Time; t > 0 {
			all = append(all, cs{c, t})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].t > all[j].t })
	var parts []string
	for i := 0; i < len(all) && i < n; i++ {
		share := 0.0
		if p.Step.Time > 0 {
			share = float64(all[i].t / p.Step.Time)
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", all[i].c, 100*share))
	}
	return strings.Join(parts, ", ")
}

// text writes the header, the table and the warnings.
func (pr *prediction) text(w io.Writer) error {
	if err := writeHeader(w, pr.sc, pr.context); err != nil {
		return err
	}
	if len(pr.points) > 0 {
		m := pr.points[0].Memory
		c := pr.sc.Config
		budget := unit.Bytes(float64(c.GPU.Memory) * c.GPUMemoryUtilization)
		kv := fmt.Sprintf("KV cache %s (KV %s/token)", m.Usable, m.KVPerToken)
		var extra []string
		if m.KVWindowPerToken > 0 {
			extra = append(extra, fmt.Sprintf("%s/token of it in window layers, kept for at most %d tokens", m.KVWindowPerToken, m.Window))
		}
		if m.StatePerSeq > 0 {
			extra = append(extra, fmt.Sprintf("recurrent state %s/sequence", m.StatePerSeq))
		}
		if len(extra) > 0 {
			kv = fmt.Sprintf("KV cache %s (KV %s/token; %s)", m.Usable, m.KVPerToken, strings.Join(extra, "; "))
		}
		if m.Usable < 0 {
			kv = fmt.Sprintf("the weights and reserve do not fit (%s short), no room for a KV cache", -m.Usable)
		}
		if _, err := fmt.Fprintf(w, "memory    per GPU: %s x %.2f = %s: weights %s, reserve %s, %s\n\n",
			c.GPU.Memory, c.GPUMemoryUtilization, budget, m.Weights, m.Reserve, kv); err != nil {
			return err
		}
	}
	if err := pr.table(false).render(w, formatText); err != nil {
		return err
	}
	for _, wn := range pr.warnings {
		if _, err := fmt.Fprintln(w, "warning: "+wn); err != nil {
			return err
		}
	}
	return nil
}

// writeHeader prints what the scenario is: name, model, box, layout.
func writeHeader(w io.Writer, sc *scenarios.Scenario, context int) error {
	c := sc.Config
	graphs := "on"
	if !c.Graphs {
		graphs = "off"
	}
	lines := []string{
		"scenario  " + sc.Name + " (" + sc.File + ")",
		"model     " + modelSummary(sc),
		fmt.Sprintf("box       %dx %s (%s, %s), fabric %s", c.GPUs, c.GPU.Name, c.GPU.Memory, c.GPU.MemBW, c.Fabric.Name),
		fmt.Sprintf("layout    %s, CUDA graphs %s, all-reduce %s, KV cache %s, context %d",
			layoutString(c), graphs, allReduceName(sc), kvCacheName(sc), context),
		"calib     " + sc.CalibrationNote,
	}
	if sp := c.Spec; sp.Method != sim.SpecNone {
		acc := make([]string, len(sp.Acceptance))
		for i, a := range sp.Acceptance {
			acc[i] = strconv.FormatFloat(a, 'g', -1, 64)
		}
		lines = append(lines, fmt.Sprintf("spec      %s, %d draft tokens, acceptance [%s]", specName(sp.Method), sp.DraftTokens, strings.Join(acc, ", ")))
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// modelSummary is one line on the model: name, architecture, layers,
// experts, attention, routed-expert format.
func modelSummary(sc *scenarios.Scenario) string {
	m := sc.Config.Model
	if m.MoE.Experts == 0 {
		return fmt.Sprintf("%s: %s, %d layers, dense, %s attention, weights %s", sc.ModelRef, m.Architecture, m.Layers,
			strings.ToUpper(m.Attn.Kind.String()), m.Quant.DenseMLP.Name) + hybridSummary(m)
	}
	s := fmt.Sprintf("%s: %s, %d layers (%d MoE), %d experts top-%d", sc.ModelRef, m.Architecture, m.Layers, m.MoELayers(), m.MoE.Experts, m.MoE.TopK)
	if m.MoE.Shared > 0 {
		s += fmt.Sprintf(" + %d shared", m.MoE.Shared)
	}
	return s + fmt.Sprintf(", %s attention, routed experts %s", strings.ToUpper(m.Attn.Kind.String()), m.Quant.RoutedExperts.Name) + hybridSummary(m)
}

// hybridSummary names the layer kinds of a model whose layers differ
// (", layer kinds: 30 gdn moe + 10 full moe"); "" otherwise.
func hybridSummary(m *model.Config) string {
	if m.Kinds == nil {
		return ""
	}
	var parts []string
	for _, k := range m.Kinds {
		parts = append(parts, fmt.Sprintf("%d %s", k.Count, k.Name))
	}
	return ", layer kinds: " + strings.Join(parts, " + ")
}

// layoutString renders a layout as "TP8 EP8 DP1" (+ ", DP attention").
func layoutString(c sim.Config) string {
	l := c.Layout
	s := fmt.Sprintf("TP%d EP%d DP%d", l.TP, l.EP, l.DP)
	if l.DPAttention {
		s += " (DP attention)"
	}
	return s
}

// allReduceName is runtime.allreduce as written in a scenario.
// kvCacheName is the scenario's KV-cache dtype, marked "(from checkpoint)"
// when the checkpoint declared it and the scenario left it to the default.
func kvCacheName(sc *scenarios.Scenario) string {
	if sc.KVCacheFromCheckpoint {
		return sc.Config.KVCache.String() + " (from checkpoint)"
	}
	return sc.Config.KVCache.String()
}

func allReduceName(sc *scenarios.Scenario) string {
	return sc.Config.AllReduce.String()
}

// specName is speculative.method as written in a scenario.
func specName(m sim.SpecMethod) string {
	switch m {
	case sim.SpecMTP:
		return "mtp"
	case sim.SpecEAGLE3:
		return "eagle3"
	case sim.SpecNgram:
		return "ngram"
	}
	return "none"
}
