package sim

import (
	"math"
	"testing"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// FuzzStep drives New and Step with arbitrary layouts, speculative settings,
// batches and contexts: they must never panic, New must either return a
// *model.FieldError or a Sim, and every evaluated point must be finite, with the
// breakdown adding up to the step and Lo <= Time <= Hi; a batch or context
// above the limits is a *model.FieldError.
func FuzzStep(f *testing.F) {
	f.Add(uint8(0), uint8(8), uint8(8), uint8(1), false, true, 1, 2048, uint8(0), uint8(0), 0.0)
	f.Add(uint8(1), uint8(8), uint8(1), uint8(1), false, true, 64, 4096, uint8(1), uint8(1), 0.85)
	f.Add(uint8(0), uint8(1), uint8(8), uint8(8), true, true, 3, 100000, uint8(2), uint8(3), 0.7)
	f.Add(uint8(2), uint8(4), uint8(4), uint8(1), false, false, 300, 1, uint8(3), uint8(16), 1.0)
	f.Add(uint8(3), uint8(1), uint8(1), uint8(1), false, true, 1<<20, 1<<20, uint8(0), uint8(0), 0.0)
	f.Add(uint8(5), uint8(2), uint8(8), uint8(4), false, true, 7, 333, uint8(1), uint8(2), -1.0)
	f.Add(uint8(0), uint8(0), uint8(0), uint8(0), true, false, 0, -5, uint8(9), uint8(200), math.NaN())
	f.Add(uint8(0), uint8(1), uint8(8), uint8(8), true, true, math.MaxInt, math.MaxInt, uint8(0), uint8(0), 0.0)
	names := model.PresetNames()
	gpus := kernels.GPUNames()
	fabric, _ := comm.LookupFabric("nvlink4")
	f.Fuzz(func(t *testing.T, mi, tp, ep, dp uint8, dpa, graphs bool, batch, ctx int, method, k uint8, acc float64) {
		m, err := model.Preset(names[int(mi)%len(names)])
		if err != nil {
			t.Fatal(err)
		}
		g, _ := kernels.LookupGPU(gpus[int(mi/16)%len(gpus)])
		c := Config{
			Model: m, KVCache: dtype.KVCache(k % 3), GPU: g, GPUs: int(tp) * int(dp), Fabric: fabric,
			Layout: model.Layout{TP: int(tp), EP: int(ep), DP: int(dp), DPAttention: dpa},
			Graphs: graphs, GPUMemoryUtilization: 0.9,
			Spec: Spec{Method: SpecMethod(method % 5), DraftTokens: int(k % 20), Acceptance: []float64{acc}},
		}
		s, err := New(c)
		if err != nil {
			if _, ok := err.(*model.FieldError); !ok {
				t.Fatalf("New: %T %v is not a *model.FieldError", err, err)
			}
			return
		}
		p, err := s.Step(batch, ctx)
		if err != nil {
			if _, ok := err.(*model.FieldError); !ok {
				t.Fatalf("Step: %T %v is not a *model.FieldError", err, err)
			}
			return
		}
		var sum float64
		for _, e := range p.Breakdown {
			sum += float64(e.Time)
			if !(e.Lo <= e.Time*(1+1e-12)) || !(e.Hi >= e.Time*(1-1e-12)) {
				t.Fatalf("interval %v..%v around %v", e.Lo, e.Hi, e.Time)
			}
		}
		st := float64(p.Step.Time)
		if math.IsNaN(st) || math.IsInf(st, 0) || st <= 0 || math.Abs(sum-st) > 1e-9*st {
			t.Fatalf("step %v, breakdown sum %v", st, sum)
		}
		if math.IsNaN(p.TokensPerStep) || p.TokensPerStep < 1 || math.IsNaN(float64(p.Memory.KV)) {
			t.Fatalf("tokens per step %v, memory %+v", p.TokensPerStep, p.Memory)
		}
	})
}

// FuzzStepBatch: any batch of sequences is an error or a finite step
// whose breakdown adds up, with Lo <= Time <= Hi, never a panic.
func FuzzStepBatch(f *testing.F) {
	f.Add(uint8(0), uint16(4), 2048, 0, 100, true)
	f.Add(uint8(2), uint16(1), 1, 8192, 0, true)
	f.Add(uint8(5), uint16(300), 100000, 1, 1, false)
	f.Add(uint8(8), uint16(0), -1, -1, -5, true)
	f.Add(uint8(11), uint16(7), 1<<30, 1<<30, 1<<30, true)
	f.Fuzz(func(t *testing.T, si uint8, n uint16, ctx, q, pctx int, prefill bool) {
		s := setups[int(si)%len(setups)].sim(t)
		seqs := decodes(int(n%512), ctx, 1)
		if prefill {
			seqs = append(seqs, Seq{Query: q, Context: pctx, Prefill: true})
		}
		var r BatchResult
		if err := s.StepBatch(seqs, &r); err != nil {
			return
		}
		var sum float64
		for _, e := range r.Breakdown {
			sum += float64(e.Time)
			if !(e.Lo <= e.Time*(1+1e-12)) || !(e.Hi >= e.Time*(1-1e-12)) {
				t.Fatalf("interval %v..%v around %v", e.Lo, e.Hi, e.Time)
			}
		}
		st := float64(r.Step.Time)
		if math.IsNaN(st) || math.IsInf(st, 0) || st <= 0 || math.Abs(sum-st) > 1e-9*st {
			t.Fatalf("step %v, breakdown sum %v", st, sum)
		}
	})
}
