package campaign

import (
	"fmt"
	"github.com/moecast/moecast/internal/unit"
	"sort"
	"strings"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report"
)

// rotateBytes is how much weight data the MoE routings rotate over.
const rotateBytes = 512 << 20

// MoEResult is one MoE point: the whole layer timed in one graph (Layer),
// the layer without its router top-k in one graph (Experts: the table's
// latency, as kernels.MoEShape prices the layer; sim prices the router
// top-k apart) and each of its kernels alone in its own graph over the same
// routings; Hot is Experts with the weights not rotated (one routing
// replayed, L2-warm as far as its weights fit).
type MoEResult struct {
	Point                                 MoEPoint
	Layer                                 unit.Timing
	Experts                               unit.Timing
	Router, Align, GateUp, Act, Down, Sum unit.Timing
	Quant                                 unit.Timing // block fp8: the activation quantisations
	Hot                                   unit.Timing
	Touched                               float64 // distinct experts this GPU read, mean over the routings
	WorkingSet                            float64 // weight bytes those experts hold (gate_up + down)
	GateUpVariant                         string  // the kernels the plan chose
	DownVariant                           string
	Block                                 int    // moe_align block (rows)
	Routings                              int    // routings rotated over
	GlueImage                             string // glue.cu's image (router, align, act, sum)
	GEMMImage                             string // moe_fp8: fp8moe.cu's image
}

// Latency is the table's time: the median of the layer graph without the
// router top-k.
func (r MoEResult) Latency() float64 { return float64(r.Experts.Median) }

// routers are the shipped models' routers, by moeModel name.
var routers = map[string]gpu.RouterConfig{kimiK25.Name: gpu.KimiRouter}

// MoEPoints is the MoE layers the moe op measures under o.
func MoEPoints(o Options) []MoEPoint { return modelPoints(kimiK25, Splits, o.Tokens()) }

// modelPoints is model m's layers at each split and token count, split by
// split.
func modelPoints(m moeModel, splits []Split, tokens []int) []MoEPoint {
	var out []MoEPoint
	for _, s := range splits {
		for _, t := range tokens {
			out = append(out, MoEPoint{Model: m, Split: s, Tokens: t})
		}
	}
	return out
}

// moeOp measures whole MoE layers as vLLM's fused_marlin_moe runs them,
// with moecast's W4A16 kernels at the shipped int4 models' expert shapes.
type moeOp struct{}

func (moeOp) Name() string                 { return opMoE }
func (moeOp) Steps(o Options) (int, error) { return len(MoEPoints(o)), nil }
func (moeOp) Tables() bool                 { return true }

func (moeOp) Run(e *Env) (*Output, error) {
	g, err := gpu.LoadGlue(e.Dev)
	if err != nil {
		return nil, err
	}
	var res []MoEResult
	for i, p := range MoEPoints(e.Options) {
		mm, sp := p.Model, p.Split
		rc, ok := routers[mm.Name]
		if !ok {
			return nil, fmt.Errorf("moe: no router for %s", mm.Name)
		}
		c := gpu.MoELayerCase{Name: p.layer(), Tokens: p.Tokens, Hidden: mm.Hidden,
			Inter: mm.Inter / sp.MoETP, Group: mm.Group, Router: rc, Local: p.local(),
			Seed: uint64(1_000_003*(i+1)) ^ uint64(p.Tokens), Hot: true}
		lr, err := gpu.MeasureMoELayer(e.W4A16, g, c, rotateBytes, e.Stream)
		if err != nil {
			return nil, err
		}
		r := layerResult(p, lr)
		r.Hot = lr.Hot
		r.GlueImage = g.Image
		res = append(res, r)
		e.Say("moe %s tokens %d: %.1f us without the router, %.1f with it (router %.1f, align %.1f, gate_up %.1f, act %.1f, down %.1f, sum %.1f; hot %.1f), %.1f experts",
			c.Name, p.Tokens, r.Latency()*1e6, float64(r.Layer.Median)*1e6, float64(r.Router.Median)*1e6, float64(r.Align.Median)*1e6, float64(r.GateUp.Median)*1e6,
			float64(r.Act.Median)*1e6, float64(r.Down.Median)*1e6, float64(r.Sum.Median)*1e6, float64(r.Hot.Median)*1e6, r.Touched)
	}
	return MoEOutput(res), nil
}

func layerResult(p MoEPoint, lr gpu.LayerResult) MoEResult {
	return MoEResult{Point: p, Layer: lr.Layer, Experts: lr.Experts, Router: lr.Router, Align: lr.Align,
		GateUp: lr.GateUp, Act: lr.Act, Down: lr.Down, Sum: lr.Sum,
		Touched: lr.Touched, WorkingSet: lr.WeightBytes, GateUpVariant: lr.GateUpVariant, DownVariant: lr.DownVariant,
		Block: lr.Block, Routings: lr.Routings}
}

// MoEOutput makes one MoE table per model (rows per split and token
// count) and the report.
func MoEOutput(res []MoEResult) *Output {
	out := &Output{Op: opMoE, Data: res}
	out.Tables = moeTables(res, func(mm moeModel, rows []MoEResult) calib.Table {
		return calib.Table{
			Name:       fmt.Sprintf("moe.moecast_w4a16.int4_wo.e%d.uniform", mm.Experts),
			Keys:       moeKeys("int4_wo", mm),
			Provenance: calib.Provenance{Method: moeMethod(mm), Kernel: moeKernel(rows)},
		}
	})
	rt := &report.Table{Columns: []report.Column{{Name: "model", Left: true}, {Name: "moe_tp"}, {Name: "ep"}, {Name: "tokens"},
		{Name: "latency_us", Text: "%.1f"}, {Name: "spread_pct", Text: "%.1f"}, {Name: "layer_us", Text: "%.1f"}, {Name: "router_us", Text: "%.1f"},
		{Name: "align_us", Text: "%.1f"}, {Name: "gate_up_us", Text: "%.1f"}, {Name: "act_us", Text: "%.1f"},
		{Name: "down_us", Text: "%.1f"}, {Name: "sum_us", Text: "%.1f"}, {Name: "hot_us", Text: "%.1f"},
		{Name: "experts", Text: "%.1f"}, {Name: "kernels", Left: true}}}
	for _, m := range res {
		rt.Add(m.Point.Model.Name, m.Point.Split.MoETP, m.Point.Split.EP, m.Point.Tokens, m.Latency()*1e6, m.spreadPct(),
			float64(m.Layer.Median)*1e6, float64(m.Router.Median)*1e6, float64(m.Align.Median)*1e6, float64(m.GateUp.Median)*1e6, float64(m.Act.Median)*1e6, float64(m.Down.Median)*1e6,
			float64(m.Sum.Median)*1e6, float64(m.Hot.Median)*1e6, m.Touched, m.GateUpVariant+"+"+m.DownVariant)
	}
	out.Report = rt
	if hot := hotLine(res); hot != "" {
		out.Method = append(out.Method, hot)
		out.Lines = append(out.Lines, hot)
	}
	return out
}

// moeTables makes one MoE table per model in res, in the order the models
// first appear, with rows (moe_tp, ep, tokens, latency_us,
// working_set_bytes, l2_resident) sorted by split (moe_tp, then ep) and
// token count; head gives a model's name, keys and provenance from its
// sorted rows.
func moeTables(res []MoEResult, head func(mm moeModel, rows []MoEResult) calib.Table) []calib.Table {
	byModel := map[string][]MoEResult{}
	var models []moeModel
	for _, m := range res {
		if _, ok := byModel[m.Point.Model.Name]; !ok {
			models = append(models, m.Point.Model)
		}
		byModel[m.Point.Model.Name] = append(byModel[m.Point.Model.Name], m)
	}
	var tables []calib.Table
	for _, mm := range models {
		rows := byModel[mm.Name]
		sort.SliceStable(rows, func(i, j int) bool {
			a, b := rows[i].Point, rows[j].Point
			if a.Split != b.Split {
				if a.Split.MoETP != b.Split.MoETP {
					return a.Split.MoETP < b.Split.MoETP
				}
				return a.Split.EP < b.Split.EP
			}
			return a.Tokens < b.Tokens
		})
		t := head(mm, rows)
		t.Op = "moe"
		t.Columns = []string{"moe_tp", "ep", "tokens", "latency_us", "working_set_bytes", "l2_resident"}
		for _, m := range rows {
			t.Rows = append(t.Rows, []float64{float64(m.Point.Split.MoETP), float64(m.Point.Split.EP), float64(m.Point.Tokens),
				roundPS(m.Latency() * 1e6), float64(int64(m.WorkingSet)), 0})
		}
		tables = append(tables, t)
	}
	return tables
}

// moeKeys is the keys of a model's MoE table in dtype, uniform routing.
func moeKeys(dtype string, mm moeModel) calib.Keys {
	return calib.Keys{Dtype: dtype, Distribution: "uniform", Experts: mm.Experts, TopK: mm.TopK, Hidden: mm.Hidden, Inter: mm.Inter}
}

// spreadPct is how far the slowest replay of the expert graph is above the
// fastest, in percent (0 when there is no fastest).
func (r MoEResult) spreadPct() float64 {
	if r.Experts.Min > 0 {
		return 100 * float64(r.Experts.Max/r.Experts.Min-1)
	}
	return 0
}

// moeMethod is the MoE table's method: what one row's latency includes.
func moeMethod(mm moeModel) string {
	rc := routers[mm.Name]
	return fmt.Sprintf("%s experts (group %d): the whole routed-expert layer as vLLM's fused_marlin_moe runs it, "+
		"captured as one CUDA graph per call: router top-k (moecast_router_f32: sigmoid of fp32 logits, plus e_score_correction_bias for the choice, "+
		"noaux_tc grouped top-k with n_group %d / topk_group %d, top-%d of %d, weights renormalised and times %.3f) -> "+
		"moe_align_block_size on the device (moecast_moe_align: pairs sorted by expert, padded to the block) -> "+
		"gate_up GEMM (moecast W4A16 MoE kernel, %d -> 2x%d/moe_tp) -> silu_and_mul -> down GEMM -> moe_sum (top-k weighted, bf16 out); "+
		"not included: the router's gate GEMM, the shared expert and any all-reduce or all-to-all; "+
		"the GEMM grids are sized from the routing's real block count (vLLM's Marlin MoE sizes its grid for the worst case of blocks); "+
		"uniform top-%d routing from seeds turned into logits the router maps back to it "+
		"(EP: rank 0 holds experts/ep of them and computes the slots routed there; moe_sum adds only those), "+
		"routings rotated until their weights total %d MiB so every call reads HBM; "+
		"latency = the median of "+gpu.ReplayRule+" of the same graph without the router top-k (align -> ... -> moe_sum on the ids the router wrote), "+
		"since the cost model prices the router top-k as a kernel of its own (sim's router top-k, an elementwise op); "+
		"the whole layer with the router and each kernel alone in its own graph are in calib gpu's report",
		mm.Name, mm.Group, rc.Groups, rc.TopKGroups, rc.TopK, rc.Experts, rc.Scale, mm.Hidden, mm.Inter, mm.TopK, rotateBytes>>20)
}

// moeKernel names the images the layer ran: the W4A16 GEMMs' (the file's
// provenance names it) and glue.cu's.
func moeKernel(rows []MoEResult) string {
	img := "glue.cu"
	if len(rows) > 0 && rows[0].GlueImage != "" {
		img = rows[0].GlueImage
	}
	return "moecast w4a16 MoE GEMMs + glue (kernels/gpu, " + img + ")"
}

// hotLine gives the hot layer figures (weights not rotated) by split, for
// the provenance method and the report: a table with the same keys would
// shadow the streamed one.
func hotLine(res []MoEResult) string {
	var groups []string
	var cur []string
	var last MoEPoint
	flush := func() {
		if len(cur) > 0 {
			groups = append(groups, fmt.Sprintf("%s tp%d ep%d (tokens:us) %s", last.Model.Name, last.Split.MoETP, last.Split.EP, strings.Join(cur, " ")))
		}
		cur = nil
	}
	for _, m := range res {
		if m.Hot.Median <= 0 {
			continue
		}
		if len(cur) > 0 && (m.Point.Split != last.Split || m.Point.Model.Name != last.Model.Name) {
			flush()
		}
		last = m.Point
		cur = append(cur, fmt.Sprintf("%d:%.1f", m.Point.Tokens, float64(m.Hot.Median)*1e6))
	}
	flush()
	if len(groups) == 0 {
		return ""
	}
	return "moe hot, not a table (the same layer graph with the weights not rotated: one routing replayed, L2-warm as far as its weights fit): " +
		strings.Join(groups, " / ")
}

// roundPS rounds microseconds to 1 ps.
func roundPS(us float64) float64 { return float64(int64(us*1e6+0.5)) / 1e6 }
