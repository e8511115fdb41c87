package view

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

// Prediction is what predict computed, ready to render.
type Prediction struct {
	Scenario *scenarios.Scenario
	Context  int
	Points   []sim.Point
	Warnings []string
	// breakEven is break_even_acceptance per point (predict_spec.go); nil
	// without speculative decoding.
	BreakEven []*float64
	// Accuracy is simulate's measured error on the corpus's deployments
	// like this one (nil: not looked up).
	Accuracy *Accuracy
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
	// ReserveGBPerGPU is the memory kept outside the KV cache, Reserve its
	// terms with their sources.
	ReserveGBPerGPU float64       `json:"reserve_gb_per_gpu"`
	Reserve         []ReserveJSON `json:"reserve"`
}

type PredictJSON struct {
	Scenario string `json:"scenario"`
	// Calibration names every calibration file consulted, in layering
	// order (later ones override earlier ones): "embedded:h200-sxm" or a
	// path; empty for roofline only.
	Calibration []string      `json:"calibration"`
	Accuracy    *accuracyJSON `json:"accuracy,omitempty"`
	Points      []pointJSON   `json:"points"`
	Warnings    []string      `json:"warnings"`
}

// r6p is r6 of *p; nil stays nil (null in JSON).
func r6p(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := Round6(*p)
	return &v
}

// Round6 rounds a number written to JSON or CSV to 6 decimals of its unit
// (1 ns for *_ms fields, 1 KB for *_gb fields): no false precision, and
// golden files that do not depend on the last bits of float arithmetic.
func Round6(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e15 {
		return x
	}
	return math.Round(x*1e6) / 1e6
}

// JSON builds the JSON document: breakdown_ms has every category (zeros
// included), sources only the categories with time.
func (pr *Prediction) JSON() PredictJSON {
	out := PredictJSON{Scenario: pr.Scenario.Name, Calibration: []string{}, Points: []pointJSON{}, Warnings: []string{}, Accuracy: pr.Accuracy.json()}
	for _, u := range pr.Scenario.CalibrationUses {
		out.Calibration = append(out.Calibration, u.Name)
	}
	out.Warnings = append(out.Warnings, pr.Warnings...)
	cats := categories(pr.Points)
	for i, p := range pr.Points {
		pj := pointJSON{
			Batch: p.Batch, Context: p.Context,
			StepMs: Round6(p.Step.Time.Ms()), StepMsLo: Round6(p.Step.Lo.Ms()), StepMsHi: Round6(p.Step.Hi.Ms()),
			TPOTMs: Round6(p.TPOT.Ms()), TokensPerStep: Round6(p.TokensPerStep),
			TokensPerS: Round6(p.TokensPerSecond), TokensPerSPerUser: Round6(p.PerUser),
			BreakdownMs: map[string]float64{}, Sources: map[string]string{},
			Memory: memoryJSON{WeightsGBPerGPU: Round6(p.Memory.Weights.GB()), KVGBPerGPU: Round6(p.Memory.KV.GB()), MaxBatch: p.Memory.MaxBatch,
				ReserveGBPerGPU: Round6(p.Memory.Reserve.GB()), Reserve: reserveJSON(p.Memory)},
			Fits:                p.Fits,
			BreakEvenAcceptance: pr.breakEvenJSON(i),
		}
		for _, c := range cats {
			e := p.Breakdown[c]
			pj.BreakdownMs[c.String()] = Round6(e.Time.Ms())
			if e.Time != 0 {
				pj.Sources[c.String()] = e.Source.Describe()
			}
		}
		out.Points = append(out.Points, pj)
	}
	return out
}

// Table is the per-point table: the text view (full=false: the columns a
// person reads first) or the CSV view (full=true: every field, one column
// per category, units in the names).
func (pr *Prediction) Table(full bool) *report.Table {
	spec := pr.Scenario.Config.Spec.Method != sim.SpecNone
	if full {
		t := &report.Table{Columns: []report.Column{
			{Name: "batch"}, {Name: "context"}, {Name: "step_ms"}, {Name: "step_ms_lo"}, {Name: "step_ms_hi"},
			{Name: "tpot_ms"}, {Name: "tokens_per_step"}, {Name: "tokens_per_s"}, {Name: "tokens_per_s_per_user"},
			{Name: "weights_gb_per_gpu"}, {Name: "kv_gb_per_gpu"}, {Name: "max_batch"}, {Name: "fits"},
		}}
		cats := categories(pr.Points)
		for _, c := range cats {
			t.Columns = append(t.Columns, report.Column{Name: c.String() + "_ms"})
		}
		if pr.BreakEven != nil {
			t.Columns = append(t.Columns, report.Column{Name: "break_even_acceptance"})
		}
		for i, p := range pr.Points {
			row := []any{p.Batch, p.Context, Round6(p.Step.Time.Ms()), Round6(p.Step.Lo.Ms()), Round6(p.Step.Hi.Ms()),
				Round6(p.TPOT.Ms()), Round6(p.TokensPerStep), Round6(p.TokensPerSecond), Round6(p.PerUser),
				Round6(p.Memory.Weights.GB()), Round6(p.Memory.KV.GB()), p.Memory.MaxBatch, p.Fits}
			for _, c := range cats {
				row = append(row, Round6(p.Breakdown[c].Time.Ms()))
			}
			if pr.BreakEven != nil {
				row = append(row, pr.breakEvenCell(i))
			}
			t.Add(row...)
		}
		return t
	}
	t := &report.Table{Columns: []report.Column{{Name: "batch"}, {Name: "step ms", Text: "%.3f"}, {Name: "interval ms", Left: true},
		{Name: "TPOT ms", Text: "%.3f"}, {Name: "tok/s", Text: "%.1f"}, {Name: "tok/s/user", Text: "%.1f"}}}
	if spec {
		t.Columns = append(t.Columns, report.Column{Name: "tok/step", Text: "%.2f"})
		if pr.BreakEven != nil {
			t.Columns = append(t.Columns, report.Column{Name: "break-even acc", Text: "%.3f"})
		}
	}
	t.Columns = append(t.Columns, report.Column{Name: "fits"}, report.Column{Name: "top categories (share of step)"})
	for i, p := range pr.Points {
		row := []any{p.Batch, p.Step.Time.Ms(), Interval(p.Step), p.TPOT.Ms(), p.TokensPerSecond, p.PerUser}
		if spec {
			row = append(row, p.TokensPerStep)
			if pr.BreakEven != nil {
				row = append(row, pr.breakEvenCell(i))
			}
		}
		fits := "yes"
		if !p.Fits {
			fits = "NO"
		}
		row = append(row, fits, topCategories(p, 3))
		t.Add(row...)
	}
	return t
}

// Interval renders an estimate's [Lo, Hi] in ms, or "-" when it has none.
func Interval(e cost.Estimate) string {
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

// Text writes the header, the table and the warnings.
func (pr *Prediction) Text(w io.Writer) error {
	if err := WriteHeader(w, pr.Scenario, pr.Context); err != nil {
		return err
	}
	if pr.Accuracy != nil {
		if _, err := fmt.Fprintln(w, pr.Accuracy.Line()); err != nil {
			return err
		}
	}
	if len(pr.Points) > 0 {
		m := pr.Points[0].Memory
		c := pr.Scenario.Config
		budget := unit.Bytes(float64(c.GPU.EngineMemory()) * c.GPUMemoryUtilization)
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
		share := fmt.Sprintf("%.2f", c.GPUMemoryUtilization)
		if f := c.GPUMemoryUtilization * 100; math.Abs(f-math.Round(f)) > 1e-9 {
			share = fmt.Sprintf("%.3f", c.GPUMemoryUtilization) // SGLang's derived mem_fraction_static
		}
		if _, err := fmt.Fprintf(w, "memory    per GPU: %s x %s = %s: weights %s, reserve %s, %s\n\n",
			c.GPU.EngineMemory(), share, budget, m.Weights, m.Reserve, kv); err != nil {
			return err
		}
	}
	if err := pr.Table(false).Render(w, report.Text); err != nil {
		return err
	}
	for _, wn := range pr.Warnings {
		if _, err := fmt.Fprintln(w, "warning: "+wn); err != nil {
			return err
		}
	}
	return nil
}

// WriteHeader prints what the scenario is: name, model, box, layout.
func WriteHeader(w io.Writer, sc *scenarios.Scenario, context int) error {
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
