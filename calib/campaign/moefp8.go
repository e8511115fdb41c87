package campaign

import (
	"fmt"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report"
)

// opMoEFP8 names the block-fp8 MoE op.
const opMoEFP8 = "moe_fp8"

// The block-fp8 models' expert layers (config.json of each preset:
// n_routed_experts / num_experts, num_experts_per_tok, hidden_size,
// moe_intermediate_size), with the splits the op measures. Qwen3-235B's
// 1536-wide experts cut 8 ways are 192 wide, not a multiple of the 128-row
// scale block (vLLM refuses block-fp8 weights so split): TP4 and EP8 there.
var fp8Models = []struct {
	Model  moeModel
	Splits []Split
}{
	{moeModel{Name: "deepseek-v3", Experts: 256, TopK: 8, Hidden: 7168, Inter: 2048, Group: 128}, []Split{{8, 1}, {1, 8}}},
	{moeModel{Name: "qwen3-235b-a22b", Experts: 128, TopK: 8, Hidden: 4096, Inter: 1536, Group: 128}, []Split{{4, 1}, {1, 8}}},
	{moeModel{Name: "glm-5", Experts: 256, TopK: 8, Hidden: 6144, Inter: 2048, Group: 128}, []Split{{8, 1}, {1, 8}}},
}

// Token counts of the block-fp8 op: decode batches to prefill chunks; the
// per-kernel graphs (report only) at fp8Breakdown's counts, the other
// points time the layer alone (the table's latency), to keep the campaign
// within its time.
var (
	fp8Tokens      = []int{1, 16, 128, 1024, 4096, 16384}
	quickFP8Tokens = []int{1, 4096}
	fp8Breakdown   = map[int]bool{1: true, 128: true, 4096: true}
)

// MoEFP8Points is the layers the moe_fp8 op measures under o (quick: the
// first model's last split only).
func MoEFP8Points(o Options) []MoEPoint {
	if o.Quick {
		m := fp8Models[0]
		return modelPoints(m.Model, m.Splits[len(m.Splits)-1:], quickFP8Tokens)
	}
	var out []MoEPoint
	for _, m := range fp8Models {
		out = append(out, modelPoints(m.Model, m.Splits, fp8Tokens)...)
	}
	return out
}

// moeFP8Op measures whole block-fp8 MoE layers (kernels/gpu fp8moe.cu and
// glue.cu) at DeepSeek-V3/R1, Qwen3-235B and GLM-5 expert shapes.
type moeFP8Op struct{}

func (moeFP8Op) Name() string                 { return opMoEFP8 }
func (moeFP8Op) Steps(o Options) (int, error) { return len(MoEFP8Points(o)), nil }
func (moeFP8Op) Tables() bool                 { return true }

func (moeFP8Op) Run(e *Env) (*Output, error) {
	g, err := gpu.LoadGlue(e.Dev)
	if err != nil {
		return nil, err
	}
	f, err := gpu.LoadFP8MoE(e.Dev)
	if err != nil {
		return nil, err
	}
	var res []MoEResult
	for i, p := range MoEFP8Points(e.Options) {
		mm, sp := p.Model, p.Split
		c := gpu.FP8LayerCase{Name: p.layer(), Tokens: p.Tokens, Experts: mm.Experts,
			TopK: mm.TopK, Hidden: mm.Hidden, Inter: mm.Inter / sp.MoETP, Local: p.local(),
			Seed: uint64(2_000_003*(i+1)) ^ uint64(p.Tokens), WholeOnly: !fp8Breakdown[p.Tokens]}
		lr, err := gpu.MeasureFP8MoELayer(f, g, c, rotateBytes, e.Stream)
		if err != nil {
			return nil, err
		}
		r := layerResult(p, lr)
		r.Quant = lr.Quant
		r.GlueImage = g.Image
		r.GEMMImage = f.Image
		res = append(res, r)
		if c.WholeOnly {
			e.Say("moe_fp8 %s tokens %d: %.1f us, %.1f experts", c.Name, p.Tokens, r.Latency()*1e6, r.Touched)
			continue
		}
		e.Say("moe_fp8 %s tokens %d: %.1f us (align %.1f, quant %.1f, gate_up %.1f, act %.1f, down %.1f, sum %.1f), %.1f experts",
			c.Name, p.Tokens, r.Latency()*1e6, float64(r.Align.Median)*1e6, float64(r.Quant.Median)*1e6,
			float64(r.GateUp.Median)*1e6, float64(r.Act.Median)*1e6, float64(r.Down.Median)*1e6, float64(r.Sum.Median)*1e6, r.Touched)
	}
	return MoEFP8Output(res), nil
}

// MoEFP8Output makes one fp8_block MoE table per model (rows per split and
// token count) and the report.
func MoEFP8Output(res []MoEResult) *Output {
	out := &Output{Op: opMoEFP8, Data: res}
	out.Tables = moeTables(res, func(mm moeModel, rows []MoEResult) calib.Table {
		img := "fp8moe.cu"
		if rows[0].GEMMImage != "" {
			img = rows[0].GEMMImage
		}
		return calib.Table{
			Name: fmt.Sprintf("moe.moecast_fp8moe.fp8_block.e%d.k%d.h%d.i%d.uniform", mm.Experts, mm.TopK, mm.Hidden, mm.Inter),
			Keys: moeKeys("fp8_block", mm),
			Provenance: calib.Provenance{Method: moeFP8Method(mm),
				Kernel: "moecast block-fp8 MoE GEMMs (kernels/gpu " + img + ") + glue (kernels/gpu " + rows[0].GlueImage + ")"},
		}
	})
	rt := &report.Table{Columns: []report.Column{{Name: "model", Left: true}, {Name: "moe_tp"}, {Name: "ep"}, {Name: "tokens"},
		{Name: "latency_us", Text: "%.1f"}, {Name: "spread_pct", Text: "%.1f"},
		{Name: "align_us", Text: "%.1f"}, {Name: "quant_us", Text: "%.1f"}, {Name: "gate_up_us", Text: "%.1f"}, {Name: "act_us", Text: "%.1f"},
		{Name: "down_us", Text: "%.1f"}, {Name: "sum_us", Text: "%.1f"}, {Name: "experts", Text: "%.1f"}, {Name: "kernels", Left: true}}}
	for _, m := range res {
		rt.Add(m.Point.Model.Name, m.Point.Split.MoETP, m.Point.Split.EP, m.Point.Tokens, m.Latency()*1e6, m.spreadPct(),
			float64(m.Align.Median)*1e6, float64(m.Quant.Median)*1e6, float64(m.GateUp.Median)*1e6, float64(m.Act.Median)*1e6,
			float64(m.Down.Median)*1e6, float64(m.Sum.Median)*1e6, m.Touched, m.GateUpVariant+"+"+m.DownVariant)
	}
	out.Report = rt
	return out
}

// moeFP8Method is the block-fp8 MoE table's method.
func moeFP8Method(mm moeModel) string {
	return fmt.Sprintf("%s experts (block fp8: e4m3 weights, one fp32 scale per 128x128 block; activations quantised to e4m3 per token "+
		"and group of 128 on the device): the routed-expert layer as vLLM's triton fused_moe runs a block-quantised checkpoint, "+
		"captured as one CUDA graph per call: moe_align_block_size on the device (moecast_moe_align) -> per-token-group "+
		"quantisation (fp8moe_quant) -> gate_up grouped GEMM (fp8moe_mt*, %d -> 2x%d/moe_tp; e4m3 widened exactly to fp16 for "+
		"mma.sync m16n8k16 with fp32 accumulation, each 128-wide K block scaled by its activation and weight scales: not "+
		"Hopper's fp8 wgmma; split-K with a reduction kernel where the tiles are few) -> silu_and_mul -> quantisation -> "+
		"down grouped GEMM -> moe_sum (top-%d weighted, bf16 out); not included: the router (gate GEMM and top-k), the shared "+
		"expert and any all-reduce or all-to-all; uniform top-%d routing drawn on the host (EP: rank 0 holds experts/ep of "+
		"them), routings rotated until their weights total %d MiB so every call reads HBM; latency = the median of "+gpu.ReplayRule+" "+
		"of the graph; per-kernel times (report only) at %v tokens",
		mm.Name, mm.Hidden, mm.Inter, mm.TopK, mm.TopK, rotateBytes>>20, breakdownList(fp8Tokens, fp8Breakdown))
}

// breakdownList is the token counts of tokens that breakdown marks.
func breakdownList(tokens []int, breakdown map[int]bool) []int {
	var out []int
	for _, t := range tokens {
		if breakdown[t] {
			out = append(out, t)
		}
	}
	return out
}
