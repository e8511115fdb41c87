package serve

import (
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// busy is a fake coster of about the real step model's cost per call
// (~1 us): the realistic affine cost plus a fixed chain of dependent
// floating-point operations, and a per-sequence term, so that benchmarks
// show how much of a point's time the simulator itself takes.
type busy struct {
	linear
	spin int
}

func (b busy) StepCost(seqs []Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	t, c := b.linear.StepCost(seqs)
	x := 1.0
	for i := 0; i < b.spin; i++ {
		x = x*0.999999 + 1e-9
	}
	for _, s := range seqs {
		x += math.Sqrt(float64(s.Context+1)) * 1e-30
	}
	return t + unit.Seconds(x*1e-30), c
}

var busy1us = busy{linear: realistic, spin: 250}

// BenchmarkStepCost is the fake coster's own cost per call (batch 64).
func BenchmarkStepCost(b *testing.B) {
	seqs := make([]Seq, 64)
	for i := range seqs {
		seqs[i] = Seq{Query: 1, Context: 8192 + i}
	}
	cpu0 := cpuTime()
	for b.Loop() {
		busy1us.StepCost(seqs)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user + system CPU time. On a shared machine it
// is a steadier measure than wall time (ns/op).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchPoint(b *testing.B, cfg Config, c StepCoster) {
	b.ReportAllocs()
	var r *Result
	cpu0 := cpuTime()
	for b.Loop() {
		var err error
		if r, err = Run(cfg, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(r.Steps), "steps/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Steps), "ns/step")
}

// BenchmarkClosedLoop is issue 9's speed points: 640 requests at
// concurrency 64 with 8192/1024 tokens (target 0.3 s on one core with the
// real step model), and 10,000 requests at concurrency 256 (target 3 s),
// each with a free coster (the simulator alone) and with busy1us.
func BenchmarkClosedLoop(b *testing.B) {
	points := []struct {
		name                 string
		c, requests, in, out int
		below                bool // InferenceX's client: lengths on [int(0.8 L), L]
	}{
		{"C64-640x8192-1024", 64, 640, 8192, 1024, false},
		{"C64-640x8192-1024-below0.8", 64, 640, 8192, 1024, true},
		{"C256-10000x1024-1024", 256, 10000, 1024, 1024, false},
		{"C256-10000x1024-1024-below0.8", 256, 10000, 1024, 1024, true},
		{"C256-10000x8192-1024", 256, 10000, 8192, 1024, false},
	}
	costers := []struct {
		name string
		c    StepCoster
	}{{"linear", realistic}, {"busy1us", busy1us}}
	for _, e := range []Engine{VLLM, SGLang} {
		for _, p := range points {
			for _, c := range costers {
				b.Run(e.String()+"/"+p.name+"/"+c.name, func(b *testing.B) {
					cfg := point(e, p.c, p.requests, p.in, p.out)
					if p.below {
						cfg.Workload.RangeStyle, cfg.Workload.RangeRatio = RangeBelow, 0.8
					}
					benchPoint(b, cfg, c.c)
				})
			}
		}
	}
	// vLLM as the scenarios configure it: full-ISL admission and the
	// prefix cache over each request's own blocks (RecoverPreempted).
	for _, p := range points {
		b.Run("vllm-admission/"+p.name+"/linear", func(b *testing.B) {
			cfg := point(VLLM, p.c, p.requests, p.in, p.out)
			cfg.ReserveFullISL, cfg.RecoverPreempted = true, true
			benchPoint(b, cfg, realistic)
		})
	}
}
