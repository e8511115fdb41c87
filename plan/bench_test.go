package plan_test

import (
	"flag"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/sim"
)

var roofline = flag.Bool("plan.roofline", false, "benchmarks: roofline only, without the embedded calibration tables")

// option is a GPU preset in an 8-GPU node of its usual fabric, with its
// embedded calibration (as `predict` uses by default) unless -plan.roofline.
func option(tb testing.TB, name string) plan.GPUOption {
	g, ok := kernels.LookupGPU(name)
	require.True(tb, ok, name)
	f, ok := comm.LookupFabric(g.Fabric)
	require.True(tb, ok, g.Fabric)
	o := plan.GPUOption{GPU: g, Fabric: f, NodeGPUs: 8}
	if !*roofline {
		cf, err := calib.Embedded(name)
		require.NoError(tb, err)
		require.NotNil(tb, cf, name)
		o.KernelTables, o.CommTables = cf.KernelTables(), cf.CommTablesFor(true)
	}
	return o
}

func kimi(tb testing.TB) *model.Config {
	m, err := model.Preset("kimi-k2.5")
	require.NoError(tb, err)
	return m
}

// BenchmarkSweepDecodeSteps sweeps 1,000,000 decode steps: batch 1..1000 x
// 1000 contexts (128..128,000 tokens) of Kimi-K2.5 on 8x RTX PRO 6000
// (PCIe) TP8 EP8, each combination parsed from its strings as a scenario
// sweep would, priced by sim.Step on every core.
func BenchmarkSweepDecodeSteps(b *testing.B) {
	o := option(b, "rtx-pro-6000-server")
	sm, err := sim.New(sim.Config{Model: kimi(b), GPU: o.GPU, GPUs: 8, Fabric: o.Fabric,
		Layout: model.Layout{TP: 8, DP: 1, EP: 8}, Graphs: true, AllReduce: comm.Auto, GPUMemoryUtilization: 0.9,
		KernelTables: o.KernelTables, CommTables: o.CommTables})
	require.NoError(b, err)
	batch, ctx := plan.Axis{Name: "workload.batch"}, plan.Axis{Name: "workload.context"}
	for i := 1; i <= 1000; i++ {
		batch.Values = append(batch.Values, strconv.Itoa(i))
		ctx.Values = append(ctx.Values, strconv.Itoa(128*i))
	}
	type point struct {
		step unit.Seconds
		tps  float64
		fits bool
	}
	apply := func(set []plan.Setting) (point, error) {
		bs, err := strconv.Atoi(set[0].Value)
		if err != nil {
			return point{}, err
		}
		c, err := strconv.Atoi(set[1].Value)
		if err != nil {
			return point{}, err
		}
		p, err := sm.Step(bs, c)
		if err != nil {
			return point{}, err
		}
		return point{p.Step.Time, p.TokensPerSecond, p.Fits}, nil
	}
	var n int
	cpu := cpuSeconds()
	for b.Loop() {
		r, err := plan.Sweep([]plan.Axis{batch, ctx}, apply, 0)
		require.NoError(b, err)
		require.Len(b, r.Points, 1000000)
		n += len(r.Points)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
}

// BenchmarkPlanKimi is the plan search of issue 10: Kimi-K2.5 over four GPU
// types in 8-GPU nodes, at most 64 GPUs, bf16 and fp8 KV, with and without
// EAGLE-3 (K=3), every concurrency 1..512, SLO 20 tok/s per user and
// TPOT p99 50 ms, a 5,000 output tok/s target, 1k/1k requests.
func BenchmarkPlanKimi(b *testing.B) {
	s := &plan.Space{Model: kimi(b), MaxGPUs: 64,
		KVCaches: []dtype.KVCache{dtype.KVBF16, dtype.KVFP8},
		Specs: []sim.Spec{{Method: sim.SpecNone},
			{Method: sim.SpecEAGLE3, DraftTokens: 3, Acceptance: []float64{0.8, 0.6, 0.45}}},
		Base:     sim.Config{Graphs: true, AllReduce: comm.Auto, GPUMemoryUtilization: 0.9},
		Workload: plan.Workload{Input: 1024, Output: 1024}}
	for _, g := range kernels.GPUNames() {
		s.GPUs = append(s.GPUs, option(b, g))
	}
	o := plan.Options{SLO: plan.SLO{MinPerUser: 20, TPOTP99: 50 * unit.Millisecond},
		Target: plan.Target{OutputTokensPerSecond: 5000}}
	for c := 1; c <= 512; c++ {
		o.Concurrency = append(o.Concurrency, c)
	}
	var r *plan.Result
	var err error
	cpu := cpuSeconds()
	for b.Loop() {
		r, err = plan.Search(s, o)
		require.NoError(b, err)
	}
	priced := 0
	for _, p := range r.Points {
		if p.Verdict != plan.NoMemory {
			priced++
		}
	}
	require.NotNil(b, r.Best)
	best := &r.Points[r.Best.Point]
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(len(r.Candidates)), "candidates")
	b.ReportMetric(float64(priced), "priced-points")
	b.ReportMetric(float64(len(r.Front)), "front")
	b.Logf("best %s at concurrency %d: %.0f tok/s/GPU, %.1f tok/s/user; %d replicas, %d GPUs for 5000 tok/s",
		r.Candidates[best.Candidate].Label(), best.Concurrency, best.PerGPU, best.Metrics.PerUser, r.Best.Replicas, r.Best.GPUs)
}
