package campaign

import (
	"fmt"
	"sort"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report"
)

// RotateBytes is how much weight data the MoE routings rotate over.
const RotateBytes = 512 << 20

// MoEResult is one MoE point: the gate_up and down kernels timed apart.
type MoEResult struct {
	Point         MoEPoint
	GateUp, Down  Timing
	Touched       float64 // distinct experts this GPU read, mean over the routings
	WorkingSet    float64 // weight bytes those experts hold (gate_up + down)
	GateUpVariant string  // the kernels the plan chose
	DownVariant   string
	Routings      int // routings rotated over
	CallsPerGraph int
}

// Latency is the layer's time: the two kernels' medians.
func (r MoEResult) Latency() float64 { return r.GateUp.Median + r.Down.Median }

// MoEPoints is the MoE layers the moe op measures under o.
func MoEPoints(o Options) []MoEPoint {
	var out []MoEPoint
	for _, s := range Splits {
		for _, t := range o.Tokens() {
			out = append(out, MoEPoint{Model: KimiK25, Split: s, Tokens: t})
		}
	}
	return out
}

// moeOp measures moecast's W4A16 MoE kernels at the shipped int4 models'
// expert shapes.
type moeOp struct{}

func (moeOp) Name() string                 { return OpMoE }
func (moeOp) Steps(o Options) (int, error) { return len(MoEPoints(o)), nil }
func (moeOp) Tables() bool                 { return true }

func (moeOp) Run(e *Env) (*Output, error) {
	var res []MoEResult
	for i, p := range MoEPoints(e.Options) {
		mm, sp := p.Model, p.Split
		gu, dn := mm.GateUp(sp), mm.Down(sp)
		local := 0
		if sp.EP > 1 {
			local = mm.LocalExperts(sp)
		}
		seed := uint64(1_000_003*(i+1)) ^ uint64(p.Tokens)
		c := gpu.MoECase{Name: "gate_up", Tokens: p.Tokens, Experts: mm.Experts, TopK: mm.TopK, N: gu.N, K: gu.K,
			Group: mm.Group, Seed: seed, Local: local}
		rg, err := gpu.MeasureMoE(e.W4A16, c, RotateBytes, e.Stream)
		if err != nil {
			return nil, err
		}
		c.Name, c.N, c.K, c.Down = "down", dn.N, dn.K, true
		rd, err := gpu.MeasureMoE(e.W4A16, c, RotateBytes, e.Stream)
		if err != nil {
			return nil, err
		}
		wb := func(sh Shape) float64 { return float64(sh.N*sh.K/2 + sh.N*sh.K/mm.Group*2) }
		r := MoEResult{Point: p, GateUp: timing(rg), Down: timing(rd), Touched: rg.Touched,
			WorkingSet: rg.Touched*wb(gu) + rd.Touched*wb(dn), GateUpVariant: rg.Variant, DownVariant: rd.Variant,
			Routings: rg.Copies, CallsPerGraph: rg.CallsPerGraph}
		res = append(res, r)
		e.Say("moe %s tp%d ep%d tokens %d: %.1f us (gate_up %.1f, down %.1f), %.1f experts",
			mm.Name, sp.MoETP, sp.EP, p.Tokens, r.Latency()*1e6, rg.GraphSeconds*1e6, rd.GraphSeconds*1e6, rg.Touched)
	}
	return MoEOutput(res), nil
}

// MoEOutput makes one MoE table per model (rows per split and token
// count) and the report.
func MoEOutput(res []MoEResult) *Output {
	out := &Output{Op: OpMoE, Data: res}
	byModel := map[string][]MoEResult{}
	var models []MoEModel
	for _, m := range res {
		if _, ok := byModel[m.Point.Model.Name]; !ok {
			models = append(models, m.Point.Model)
		}
		byModel[m.Point.Model.Name] = append(byModel[m.Point.Model.Name], m)
	}
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
		t := calib.Table{
			Name: fmt.Sprintf("moe.moecast_w4a16.int4_wo.e%d.uniform", mm.Experts),
			Op:   "moe",
			Keys: calib.Keys{Dtype: "int4_wo", Distribution: "uniform", Experts: mm.Experts, TopK: mm.TopK,
				Hidden: mm.Hidden, Inter: mm.Inter},
			Columns: []string{"moe_tp", "ep", "tokens", "latency_us", "working_set_bytes", "l2_resident"},
			Provenance: calib.Provenance{Method: fmt.Sprintf(
				"%s experts (group %d): moecast's W4A16 MoE kernels, gate_up (%d -> 2x%d/moe_tp) then down, one launch each over the routed batch "+
					"(moe_align-style sorted ids), uniform top-%d routing from seeds (EP: rank 0 holds experts/ep of them and computes the slots routed there), "+
					"routings rotated until their weights total %d MiB so every call reads HBM; latency = the two kernels' medians of 15 graph replays; "+
					"routing (top-k), moe_align, the activation and the top-k sum are not included",
				mm.Name, mm.Group, mm.Hidden, mm.Inter, mm.TopK, RotateBytes>>20)},
		}
		for _, m := range rows {
			t.Rows = append(t.Rows, []float64{float64(m.Point.Split.MoETP), float64(m.Point.Split.EP), float64(m.Point.Tokens),
				roundPS(m.Latency() * 1e6), float64(int64(m.WorkingSet)), 0})
		}
		out.Tables = append(out.Tables, t)
	}
	rt := &report.Table{Columns: []report.Column{{Name: "model", Left: true}, {Name: "moe_tp"}, {Name: "ep"}, {Name: "tokens"},
		{Name: "latency_us", Text: "%.1f"}, {Name: "gate_up_us", Text: "%.1f"}, {Name: "down_us", Text: "%.1f"},
		{Name: "spread_pct", Text: "%.1f"}, {Name: "experts", Text: "%.1f"}, {Name: "kernels", Left: true}}}
	for _, m := range res {
		spread := 0.0
		if m.GateUp.Min > 0 && m.Down.Min > 0 {
			spread = 100 * ((m.GateUp.Max+m.Down.Max)/(m.GateUp.Min+m.Down.Min) - 1)
		}
		rt.Add(m.Point.Model.Name, m.Point.Split.MoETP, m.Point.Split.EP, m.Point.Tokens, m.Latency()*1e6,
			m.GateUp.Median*1e6, m.Down.Median*1e6, spread, m.Touched, m.GateUpVariant+"+"+m.DownVariant)
	}
	out.Report = rt
	return out
}

// roundPS rounds microseconds to 1 ps.
func roundPS(us float64) float64 { return float64(int64(us*1e6+0.5)) / 1e6 }
