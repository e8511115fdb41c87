package campaign

import (
	"fmt"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report"
)

// opMoEMXFP4 names the MXFP4 MoE op.
const opMoEMXFP4 = "moe_mxfp4"

// mxfp4Pad is gpt-oss's 2880 (hidden and expert width) padded to the W4A16
// kernel's multiple of 128: the op times 2944 x 2944 experts (+2.2% of the
// work) and the table keeps the model's 2880.
const mxfp4Pad = 2944

// The MXFP4 models' expert layers (config.json: num_local_experts,
// num_experts_per_tok, hidden_size, intermediate_size) and their splits.
var mxfp4Models = []struct {
	Model  moeModel
	Splits []Split
}{
	{moeModel{Name: "gpt-oss-120b", Experts: 128, TopK: 4, Hidden: 2880, Inter: 2880, Group: 32}, []Split{{1, 1}, {1, 4}}},
	{moeModel{Name: "gpt-oss-20b", Experts: 32, TopK: 4, Hidden: 2880, Inter: 2880, Group: 32}, []Split{{1, 1}}},
}

// Token counts of the MXFP4 op; per-kernel graphs (report only) at
// mxfp4Breakdown's.
var (
	mxfp4Tokens      = []int{1, 16, 128, 1024, 4096, 16384}
	quickMXFP4Tokens = []int{1, 4096}
	mxfp4Breakdown   = map[int]bool{1: true, 128: true, 4096: true}
)

// gptOSSRouter stands in for gpt-oss's router (softmax over the top-4
// logits) in the layer-with-router figure only: moecast's router kernel is
// the sigmoid one; the table's latency leaves the router out either way.
var gptOSSRouter = func(experts int) gpu.RouterConfig {
	return gpu.RouterConfig{Experts: experts, TopK: 4, Groups: 1, TopKGroups: 1, Renormalize: true, Scale: 1}
}

// MoEMXFP4Points is the layers the moe_mxfp4 op measures under o (quick:
// gpt-oss-120b TP1 only).
func MoEMXFP4Points(o Options) []MoEPoint {
	if o.Quick {
		m := mxfp4Models[0]
		return modelPoints(m.Model, m.Splits[:1], quickMXFP4Tokens)
	}
	var out []MoEPoint
	for _, m := range mxfp4Models {
		out = append(out, modelPoints(m.Model, m.Splits, mxfp4Tokens)...)
	}
	return out
}

// moeMXFP4Op measures whole MXFP4 MoE layers (kernels/gpu w4a16.cu's
// ModeFP4 kernels, glue.cu's align, clamped SwiGLU and moe_sum) at gpt-oss
// shapes.
type moeMXFP4Op struct{}

func (moeMXFP4Op) Name() string                 { return opMoEMXFP4 }
func (moeMXFP4Op) Steps(o Options) (int, error) { return len(MoEMXFP4Points(o)), nil }
func (moeMXFP4Op) Tables() bool                 { return true }

func (moeMXFP4Op) Run(e *Env) (*Output, error) {
	g, err := gpu.LoadGlue(e.Dev)
	if err != nil {
		return nil, err
	}
	var res []MoEResult
	for i, p := range MoEMXFP4Points(e.Options) {
		mm, sp := p.Model, p.Split
		c := gpu.MoELayerCase{Name: p.layer(), Tokens: p.Tokens, Hidden: mxfp4Pad,
			Inter: mxfp4Pad / sp.MoETP, Group: mm.Group, Router: gptOSSRouter(mm.Experts), Local: p.local(),
			Seed: uint64(3_000_017*(i+1)) ^ uint64(p.Tokens), Opt: gpu.Options{Mode: gpu.ModeFP4}, SwigluOAI: true,
			WholeOnly: !mxfp4Breakdown[p.Tokens]}
		lr, err := gpu.MeasureMoELayer(e.W4A16, g, c, rotateBytes, e.Stream)
		if err != nil {
			return nil, err
		}
		r := layerResult(p, lr)
		r.GlueImage = g.Image
		r.GEMMImage = e.W4A16.Image
		res = append(res, r)
		if c.WholeOnly {
			e.Say("moe_mxfp4 %s tokens %d: %.1f us, %.1f experts", c.Name, p.Tokens, r.Latency()*1e6, r.Touched)
			continue
		}
		e.Say("moe_mxfp4 %s tokens %d: %.1f us (align %.1f, gate_up %.1f, act %.1f, down %.1f, sum %.1f), %.1f experts",
			c.Name, p.Tokens, r.Latency()*1e6, float64(r.Align.Median)*1e6,
			float64(r.GateUp.Median)*1e6, float64(r.Act.Median)*1e6, float64(r.Down.Median)*1e6, float64(r.Sum.Median)*1e6, r.Touched)
	}
	return MoEMXFP4Output(res), nil
}

// MoEMXFP4Output makes one mxfp4 MoE table per model and the report.
func MoEMXFP4Output(res []MoEResult) *Output {
	out := &Output{Op: opMoEMXFP4, Data: res}
	out.Tables = moeTables(res, func(mm moeModel, rows []MoEResult) calib.Table {
		return calib.Table{
			Name: fmt.Sprintf("moe.moecast_w4a16.mxfp4.e%d.k%d.h%d.i%d.uniform", mm.Experts, mm.TopK, mm.Hidden, mm.Inter),
			Keys: moeKeys("mxfp4", mm),
			Provenance: calib.Provenance{Method: moeMXFP4Method(mm),
				Kernel: "moecast w4a16 MoE GEMMs, MXFP4 mode (kernels/gpu " + rows[0].GEMMImage + ") + glue (kernels/gpu " + rows[0].GlueImage + ")"},
		}
	})
	rt := &report.Table{Columns: []report.Column{{Name: "model", Left: true}, {Name: "moe_tp"}, {Name: "ep"}, {Name: "tokens"},
		{Name: "latency_us", Text: "%.1f"}, {Name: "spread_pct", Text: "%.1f"}, {Name: "layer_us", Text: "%.1f"},
		{Name: "align_us", Text: "%.1f"}, {Name: "gate_up_us", Text: "%.1f"}, {Name: "act_us", Text: "%.1f"},
		{Name: "down_us", Text: "%.1f"}, {Name: "sum_us", Text: "%.1f"}, {Name: "experts", Text: "%.1f"}, {Name: "kernels", Left: true}}}
	for _, m := range res {
		rt.Add(m.Point.Model.Name, m.Point.Split.MoETP, m.Point.Split.EP, m.Point.Tokens, m.Latency()*1e6, m.spreadPct(),
			float64(m.Layer.Median)*1e6, float64(m.Align.Median)*1e6, float64(m.GateUp.Median)*1e6, float64(m.Act.Median)*1e6,
			float64(m.Down.Median)*1e6, float64(m.Sum.Median)*1e6, m.Touched, m.GateUpVariant+"+"+m.DownVariant)
	}
	out.Report = rt
	return out
}

// moeMXFP4Method is the MXFP4 MoE table's method.
func moeMXFP4Method(mm moeModel) string {
	return fmt.Sprintf("%s experts (MXFP4: e2m1 codes, one e8m0 scale per 32, widened to bf16 on the host): the routed-expert layer "+
		"as vLLM runs gpt-oss, captured as one CUDA graph per call: moe_align_block_size on the device (moecast_moe_align) -> "+
		"gate_up grouped GEMM (moecast W4A16 kernel in MXFP4 mode: e2m1 dequantised in registers into bf16 mma.sync; hidden and "+
		"expert width %d padded to %d, the kernel's multiple of 128, +2.2%% work) -> gpt-oss's clamped SwiGLU "+
		"(moecast_swiglu_oai: interleaved gate/up, alpha %.3f, limit %.1f, as vLLM's swigluoai_and_mul) -> down grouped GEMM -> "+
		"moe_sum (top-%d weighted, bf16 out); not included: the router and any all-reduce or all-to-all (the report's layer_us "+
		"runs moecast's sigmoid router kernel as a stand-in for gpt-oss's softmax top-k); uniform top-%d routing "+
		"(EP: rank 0 holds experts/ep of them), routings rotated until their weights total %d MiB so every call reads HBM; "+
		"latency = the median of "+gpu.ReplayRule+" of the graph without the router; per-kernel times (report only) at %v tokens",
		mm.Name, mm.Hidden, mxfp4Pad, gpu.SwigluOAIAlpha, gpu.SwigluOAILimit, mm.TopK, mm.TopK, rotateBytes>>20,
		breakdownList(mxfp4Tokens, mxfp4Breakdown))
}
