package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

// measuredAR is a comm.Lookup that knows one all-reduce point: the in-step
// cost of a 14,336 B (one token of hidden 7168, bf16) all-reduce over 8
// RTX PRO 6000 on PCIe, about 55 us as measured in vLLM decode (brief H3).
type measuredAR struct{ t unit.Seconds }

func (m measuredAR) AllReduce(impl comm.Impl, ranks int, b unit.Bytes) (cost.Estimate, bool) {
	if ranks != 8 || b != 14336 {
		return cost.Estimate{}, false
	}
	return cost.Estimate{Time: m.t, Lo: m.t * 0.9, Hi: m.t * 1.1, Bytes: b, Kernels: 1,
		Source: cost.Source{Kind: cost.Table, Table: "test measured AR", RowLo: 1, RowHi: 1}}, true
}
func (measuredAR) AllGather(int, unit.Bytes) (cost.Estimate, bool)     { return cost.Estimate{}, false }
func (measuredAR) ReduceScatter(int, unit.Bytes) (cost.Estimate, bool) { return cost.Estimate{}, false }
func (measuredAR) AllToAll(int, unit.Bytes) (cost.Estimate, bool)      { return cost.Estimate{}, false }

// TestKimiRTXAllReduceDominatesBatch1: Kimi-K2.5 on 8x RTX PRO 6000 (PCIe)
// at TP8 EP8, batch 1, runs 2 all-reduces per layer (61) plus one after the
// embedding, each of one token's hidden state; with the measured in-step
// all-reduce cost AllReduce is the largest category, and there is no
// all-to-all (EP inside the TP group: each rank computes its experts for all
// tokens and the all-reduce combines).
func TestKimiRTXAllReduceDominatesBatch1(t *testing.T) {
	c := kimiRTX.config(t)
	c.CommTables = measuredAR{t: 55 * unit.Microsecond}
	s, err := New(c)
	require.NoError(t, err)
	p, err := s.Step(1, 2048)
	require.NoError(t, err)
	ar := p.Breakdown[cost.AllReduce]
	assert.InEpsilon(t, 123*55e-6, float64(ar.Time), 1e-9, "2 x 61 layers + 1 embedding all-reduces")
	assert.Equal(t, cost.Table, ar.Source.Kind)
	for cat, e := range p.Breakdown {
		if cost.Category(cat) != cost.AllReduce {
			assert.Less(t, e.Time, ar.Time, "%s (%v) vs allreduce (%v)", cost.Category(cat), e.Time, ar.Time)
		}
	}
	assert.Zero(t, p.Breakdown[cost.AllToAll].Time)
	assert.Positive(t, p.Breakdown[cost.AllGather].Time, "logits all-gather")
	// Share: AllReduce is a large part of the step at batch 1 on PCIe.
	assert.Greater(t, float64(ar.Time/p.Step.Time), 0.3)
	t.Logf("batch 1: step %v, allreduce %v (%.0f%%); roofline-only allreduce is %v",
		p.Step.Time, ar.Time, 100*float64(ar.Time/p.Step.Time), func() unit.Seconds {
			q, _ := kimiRTX.sim(t).Step(1, 2048)
			return q.Breakdown[cost.AllReduce].Time
		}())
}

// mlaTable is a kernels.Lookup that covers only the MLA module.
type mlaTable struct{ t unit.Seconds }

func (mlaTable) GEMM(kernels.GEMMShape) (cost.Estimate, bool)       { return cost.Estimate{}, false }
func (mlaTable) MoE(kernels.MoEShape) (cost.Estimate, bool)         { return cost.Estimate{}, false }
func (mlaTable) GQA(kernels.GQAShape) (cost.Estimate, bool)         { return cost.Estimate{}, false }
func (mlaTable) Prefill(kernels.PrefillShape) (cost.Estimate, bool) { return cost.Estimate{}, false }
func (mlaTable) Elementwise(unit.Bytes) (cost.Estimate, bool)       { return cost.Estimate{}, false }
func (m mlaTable) MLAModule(kernels.MLAShape) (cost.Estimate, bool) {
	return cost.Estimate{Time: m.t, Lo: m.t * 0.8, Hi: m.t * 1.3,
		Source: cost.Source{Kind: cost.Table, Table: "test mla module", RowLo: 3, RowHi: 4}}, true
}

// TestCalibratedMLAModule: a hit of KernelTables.MLAModule replaces the
// module's ops (projections, its norms, rotary, cache write and attention)
// with the table time, split in the ops' own proportions; other ops are
// unchanged.
func TestCalibratedMLAModule(t *testing.T) {
	const table = 400 * unit.Microsecond // above the module's DRAM floor
	plain := kimiRTX.sim(t)
	c := kimiRTX.config(t)
	c.KernelTables = mlaTable{t: table}
	cal, err := New(c)
	require.NoError(t, err)
	plainOps, err := plain.Explain(4, 2048)
	require.NoError(t, err)
	calOps, err := cal.Explain(4, 2048)
	require.NoError(t, err)
	require.Len(t, calOps, len(plainOps))
	var sum, plainSum, attn, plainAttn unit.Seconds
	for i, o := range calOps {
		if o.Layer != "moe" {
			continue
		}
		if o.Estimate.Source.Kind != cost.Table {
			assert.Equal(t, plainOps[i].Estimate.Time, o.Estimate.Time, "%s unchanged", o.Name)
			continue
		}
		assert.Contains(t, []cost.Category{cost.GEMM, cost.Attention, cost.Elementwise}, o.Category, o.Name)
		assert.Equal(t, noteMLAModule, o.Estimate.Source.Note)
		sum += o.Estimate.Time
		plainSum += plainOps[i].Estimate.Time
		if o.Category == cost.Attention {
			attn += o.Estimate.Time
			plainAttn += plainOps[i].Estimate.Time
		}
	}
	assert.InEpsilon(t, float64(table), float64(sum), 1e-9, "module ops add up to the table time")
	assert.InEpsilon(t, float64(plainAttn/plainSum), float64(attn/sum), 1e-9, "attention share kept")
	// Step and breakdown still add up.
	p, err := cal.Step(4, 2048)
	require.NoError(t, err)
	var total unit.Seconds
	for _, e := range p.Breakdown {
		total += e.Time
	}
	assert.InEpsilon(t, float64(p.Step.Time), float64(total), 1e-9)
	assert.Equal(t, noteMixed, p.Breakdown[cost.GEMM].Source.Note, "gemm mixes table (module) and roofline (MLP) ops")
	var explained unit.Seconds
	for _, o := range calOps {
		explained += unit.Seconds(o.Count) * o.Estimate.Time
	}
	assert.InEpsilon(t, float64(p.Step.Time), float64(explained), 1e-9, "Explain and Step agree with a module table")

	// A table faster than streaming the module's bytes from DRAM is floored
	// at the physical limit bytes/(peak BW) (decode: memory-bound).
	c.KernelTables = mlaTable{t: 1 * unit.Nanosecond}
	fast, err := New(c)
	require.NoError(t, err)
	fastOps, err := fast.Explain(4, 2048)
	require.NoError(t, err)
	var ft unit.Seconds
	var fb unit.Bytes
	for _, o := range fastOps {
		if o.Layer == "moe" && o.Estimate.Source.Kind == cost.Table {
			ft += o.Estimate.Time
			if o.Category != cost.Elementwise { // the floor counts the projections and attention
				fb += o.Estimate.Bytes
			}
			if o.Name == "mla decode attention" {
				assert.Contains(t, o.Estimate.Source.Note, "floor", o.Name)
			} else {
				assert.Equal(t, noteMLAModule, o.Estimate.Source.Note, o.Name)
			}
		}
	}
	require.Positive(t, float64(fb))
	floor := unit.TransferTime(fb, c.GPU.MemBW)
	assert.InEpsilon(t, float64(floor), float64(ft), 1e-9)
}

// TestEagerLaunch: without CUDA graphs the host launch cost shows in the
// launch category and the step is slower; with graphs it is zero.
func TestEagerLaunch(t *testing.T) {
	graphs, err := kimiRTX.sim(t).Step(1, 2048)
	require.NoError(t, err)
	st := kimiRTX
	st.graphs = false
	eager, err := st.sim(t).Step(1, 2048)
	require.NoError(t, err)
	assert.Zero(t, graphs.Breakdown[cost.Launch].Time)
	assert.Positive(t, eager.Breakdown[cost.Launch].Time)
	assert.Greater(t, eager.Step.Time, graphs.Step.Time)
	assert.Equal(t, cost.Fixed, eager.Breakdown[cost.Launch].Source.Kind)
}

// TestStepDoesNotAllocate: Step is called a million times in sweeps.
func TestStepDoesNotAllocate(t *testing.T) {
	for _, st := range setups {
		s := st.sim(t)
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := s.Step(32, 2048); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, st.name)
	}
}

// BenchmarkStep is one decode-step evaluation of Kimi-K2.5 TP8 EP8 on
// 8x RTX PRO 6000 at batch 32, context 2048.
func BenchmarkStep(b *testing.B) {
	s := kimiRTX.sim(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Step(32, 2048); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// TestPCIeAllReduceShare: the same model and layout spends a larger share of
// its batch-1 step in all-reduce on PCIe (RTX PRO 6000) than on NVLink
// (H200), from comm's own fabric models.
func TestPCIeAllReduceShare(t *testing.T) {
	share := func(st setup) float64 {
		p, err := st.sim(t).Step(1, 2048)
		require.NoError(t, err)
		return float64(p.Breakdown[cost.AllReduce].Time / p.Step.Time)
	}
	h200 := kimiRTX
	h200.gpu, h200.fabric = "h200-sxm", "nvlink4"
	pcie, nvlink := share(kimiRTX), share(h200)
	assert.Greater(t, pcie, nvlink)
	t.Logf("all-reduce share at batch 1: PCIe %.0f%%, NVLink %.0f%%", 100*pcie, 100*nvlink)
}

// BenchmarkStepBatch is BenchmarkStep's decode step through StepBatch (32
// decodes at context 2048), and a mixed step (31 decodes and a 2048-token
// prefill chunk over a 4096-token prefix).
func BenchmarkStepBatch(b *testing.B) {
	s := kimiRTX.sim(b)
	dec := make([]Seq, 32)
	for i := range dec {
		dec[i] = Seq{Query: 1, Context: 2048}
	}
	mixed := append(slices.Clone(dec[:31]), Seq{Query: 2048, Context: 4096, Prefill: true})
	for _, c := range []struct {
		name string
		seqs []Seq
	}{{"decode", dec}, {"mixed", mixed}} {
		b.Run(c.name, func(b *testing.B) {
			var r BatchResult
			b.ReportAllocs()
			for b.Loop() {
				if err := s.StepBatch(c.seqs, &r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
