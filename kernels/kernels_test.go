package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

func gpu(t testing.TB, name string) GPU {
	t.Helper()
	g, ok := LookupGPU(name)
	require.True(t, ok, "gpu %q", name)
	return g
}

const rel = 1e-9 // relative tolerance of hand-computed figures

func TestGPUPresets(t *testing.T) {
	require.Equal(t, []string{"rtx-pro-6000-server", "h100-sxm", "h200-sxm", "b200-sxm", "a100-sxm", "b300-sxm", "gb200", "gb300"}, GPUNames())
	cases := []struct {
		name      string
		memGB     float64
		bwTBps    float64
		bf16, fp8 float64 // TFLOP/s
		l2MB      float64
		arch      Arch
		sms       int
	}{
		// Capacities: nvidia-smi memory.total in MiB (the presets' sources).
		{"rtx-pro-6000-server", 102.641958912, 1.792, 467.8, 935.6, 128, "sm_120", 188},
		{"h100-sxm", 81559 * 1048576 / 1e9, 3.35, 989, 1978, 50, "sm_90", 132},
		{"h200-sxm", 143771 * 1048576 / 1e9, 4.8, 989, 1978, 62.91456, "sm_90", 132},
		{"b200-sxm", 183359 * 1048576 / 1e9, 7.7, 2250, 4500, 126, "sm_100", 148},
	}
	for _, tc := range cases {
		g := gpu(t, tc.name)
		assert.NoError(t, g.Validate(), tc.name)
		assert.InEpsilon(t, tc.memGB, g.Memory.GB(), rel, tc.name)
		assert.InEpsilon(t, tc.bwTBps*1e12, float64(g.MemBW), rel, tc.name)
		assert.InEpsilon(t, tc.bf16*1e12, float64(g.Peak[dtype.BF16]), rel, tc.name)
		assert.InEpsilon(t, tc.fp8*1e12, float64(g.Peak[dtype.FP8]), rel, tc.name)
		assert.InEpsilon(t, tc.l2MB*1e6, float64(g.L2), rel, tc.name)
		assert.Equal(t, tc.arch, g.Arch, tc.name)
		assert.Equal(t, tc.sms, g.SMs, tc.name)
		assert.NotEmpty(t, g.Source, tc.name)
		assert.NotEmpty(t, g.Fabric, tc.name)
	}
	// No fp4 tensor cores on Hopper: fall back to the bf16 peak.
	h := gpu(t, "h100-sxm")
	assert.Equal(t, h.Peak[dtype.BF16], h.PeakFor(dtype.FP4))
	b := gpu(t, "b200-sxm")
	assert.Equal(t, 9000*unit.TFLOPS, b.PeakFor(dtype.FP4))
	_, ok := LookupGPU("a100")
	assert.False(t, ok)
}

// TestGPUCUDAMemory: where a preset carries cudaMemGetInfo's total, the
// driver keeps 400-1,200 MiB below nvidia-smi's memory.total (the spread
// of the public figures, bench/RESULTS-gpumem.md: H100 480 MiB, H200 615,
// B200 729, GB200 738, B300 927, GB300 1,072), and EngineMemory returns it;
// a preset without one returns nvidia-smi's.
func TestGPUCUDAMemory(t *testing.T) {
	kept := map[string]float64{ // MiB below memory.total
		"h100-sxm": 480, "h200-sxm": 615, "b200-sxm": 729, "gb200": 738, "b300-sxm": 926.5625, "gb300": 1072,
	}
	for _, name := range GPUNames() {
		g := gpu(t, name)
		want, ok := kept[name]
		if !ok {
			assert.Zero(t, g.CUDAMemory, name)
			assert.Equal(t, g.Memory, g.EngineMemory(), name)
			continue
		}
		assert.Equal(t, g.CUDAMemory, g.EngineMemory(), name)
		assert.InDelta(t, want, float64(g.Memory-g.CUDAMemory)/float64(unit.MiB), 0.5, name)
	}
}

func TestGPUValidate(t *testing.T) {
	good := gpu(t, "h200-sxm")
	cases := []struct {
		name string
		mod  func(g *GPU)
		want string
	}{
		{"no name", func(g *GPU) { g.Name = "" }, "name is empty"},
		{"zero bandwidth", func(g *GPU) { g.MemBW = 0 }, "memory bandwidth must be positive"},
		{"NaN bandwidth", func(g *GPU) { g.MemBW = unit.BytesPerSecond(math.NaN()) }, "memory bandwidth must be positive"},
		{"negative capacity", func(g *GPU) { g.Memory = -1 }, "memory capacity must be positive"},
		{"no bf16 peak", func(g *GPU) { g.Peak[dtype.BF16] = 0 }, "peak bf16"},
		{"negative fp8 peak", func(g *GPU) { g.Peak[dtype.FP8] = -1 }, "peak fp8"},
		{"negative SMs", func(g *GPU) { g.SMs = -4 }, "SM count"},
		{"negative L2", func(g *GPU) { g.L2 = -1 }, "L2"},
	}
	for _, tc := range cases {
		g := good
		tc.mod(&g)
		err := g.Validate()
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
		}
	}
}

// Hand-computed figures for Kimi-K2.5 shapes (hidden 7168, 64 heads, MLA
// kv_lora 512 + rope 64, experts 3x7168x2048 W4A16 g32 = 0.5625 B/param) at
// TP8, and one Qwen3-235B GQA shape at TP4.
func TestOpFigures(t *testing.T) {
	rtx := newCosts(gpu(t, "rtx-pro-6000-server"), true)
	h200 := newCosts(gpu(t, "h200-sxm"), true)
	h100 := newCosts(gpu(t, "h100-sxm"), true)
	const rtxBW = 1.792e12 * 0.8
	const h200BW = 4.8e12 * 0.8
	us := 1e-6
	cases := []struct {
		name    string
		got     cost.Estimate
		bytes   float64
		flops   float64
		time    float64
		bound   string
		kernels float64
	}{
		{
			"o_proj bf16 TP8 M=1 (K=1024, N=7168) on RTX",
			rtx.GEMM(GEMMShape{M: 1, N: 7168, K: 1024, Weight: dtype.BF16Weights}),
			1024*7168*2 + 1024*2 + 7168*2, 2 * 7168 * 1024,
			(1024*7168*2+1024*2+7168*2)/rtxBW + 3*us, "memory", 1,
		},
		{
			"W4A16 GEMM M=1 (K=7168, N=4096) on RTX",
			rtx.GEMM(GEMMShape{M: 1, N: 4096, K: 7168, Weight: dtype.INT4G32}),
			7168*4096*0.5625 + 7168*2 + 4096*2, 2 * 4096 * 7168,
			(7168*4096*0.5625+7168*2+4096*2)/rtxBW + 3*us, "memory", 1,
		},
		{
			"fp8-b128 GEMM M=1 (K=2304, N=7168) on H200: quant + GEMM kernels at sm_90's QuantGEMM figures",
			h200.GEMM(GEMMShape{M: 1, N: 7168, K: 2304, Weight: dtype.FP8Block128}),
			(2304*7168+2304)*(1+4.0/16384) + 7168*2, 2 * 7168 * 2304,
			((2304*7168+2304)*(1+4.0/16384)+7168*2)/(4.8e12*0.84) + 6.1*us, "latency", 2,
		},
		{
			"bf16 GEMM M=4096 (K=N=7168) on H200 is compute-bound",
			h200.GEMM(GEMMShape{M: 4096, N: 7168, K: 7168, Weight: dtype.BF16Weights}),
			7168*7168*2 + 2*4096*7168*2, 2 * 4096 * 7168 * 7168.0,
			2*4096*7168*7168.0/(989e12*0.7) + 3*us, "compute", 1,
		},
		{
			"MoE W4A16 TP8, 1 token (8 pairs, 8 experts) on RTX",
			rtx.MoE(MoEShape{Tokens: 1, Pairs: 8, ExpertsTouched: 8, Hidden: 7168, Inter: 256, Weight: dtype.INT4G32}),
			8*3*7168*256*0.5625 + 2*(2*7168+8*(4*256+2*256+2*7168)), 2 * 8 * 3 * 7168 * 256,
			(8*3*7168*256*0.5625+2*(2*7168+8*(4*256+2*256+2*7168)))/rtxBW + 2*3*us + 3*1.5*us + 13*us, "latency", 5,
		},
		{
			"MoE W4A16 TP8, 64 tokens (512 pairs, 384 experts) on H200",
			h200.MoE(MoEShape{Tokens: 64, Pairs: 512, ExpertsTouched: 384, Hidden: 7168, Inter: 256, Weight: dtype.INT4G32}),
			384*3*7168*256*0.5625 + 2*(2*64*7168+512*(4*256+2*256+2*7168)), 2 * 512 * 3 * 7168 * 256,
			(384*3*7168*256*0.5625+2*(2*64*7168+512*(4*256+2*256+2*7168)))/(4.8e12*0.58) + 6*us + 4.5*us + 30*us, "memory", 5,
		},
		{
			"MLA decode TP8 (8 heads), batch 1, context 2048 on H200",
			h200.MLADecode(MLAShape{Batch: 1, Context: 2048, Heads: 8, KVLoRARank: 512, QKRopeDim: 64, TotalHeads: 64}),
			2048*576*2 + 2*8*576 + 2*8*512, 8 * 2048 * (2*576 + 2*512),
			(2048*576*2+2*8*576+2*8*512)/h200BW + 6*us, "latency", 2,
		},
		{
			"MLA decode TP8 on RTX: Triton pads 8 heads to 16; compute side above memory side",
			rtx.MLADecode(MLAShape{Batch: 1, Context: 2048, Heads: 8, KVLoRARank: 512, QKRopeDim: 64, TotalHeads: 64}),
			2048*576*2 + 2*8*576 + 2*8*512, 8 * 2048 * (2*576 + 2*512),
			16*2048*(2*576+2*512)/(467.8e12*0.08) + 6*us, "latency", 2,
		},
		{
			"MLA decode 128 heads (DP attention), batch 64, context 8192 on RTX: compute-bound",
			rtx.MLADecode(MLAShape{Batch: 64, Context: 8192, Heads: 128, KVLoRARank: 512, QKRopeDim: 64}),
			64*8192*576*2 + 2*64*128*576 + 2*64*128*512, 64 * 128 * 8192 * (2*576 + 2*512.0),
			64*128*8192*(2*576+2*512.0)/(467.8e12*0.08) + 6*us, "compute", 2,
		},
		{
			"MLA decode fp8 KV halves the cache read",
			h200.MLADecode(MLAShape{Batch: 4, Context: 4096, Heads: 8, KVLoRARank: 512, QKRopeDim: 64, KV: dtype.KVFP8}),
			4*4096*576 + 2*4*8*576 + 2*4*8*512, 4 * 8 * 4096 * (2*576 + 2*512),
			(4*4096*576+2*4*8*576+2*4*8*512)/h200BW + 6*us, "latency", 2,
		},
		{
			"GQA decode Qwen3-235B TP4 (16 q heads, 1 kv head) batch 1 context 2048 on H100",
			h100.GQADecode(GQAShape{Batch: 1, Context: 2048, Heads: 16, KVHeads: 1, HeadDim: 128}),
			2048*2*128*2 + 4*16*128, 4 * 16 * 2048 * 128,
			(2048*2*128*2+4*16*128)/(3.35e12*0.8) + 6*us, "latency", 2,
		},
		{
			"fused add+RMSNorm 1 token x 7168 on RTX",
			rtx.Elementwise(fusedAddRMSNormBytes(1, 7168)),
			2 * (4*7168 + 7168), 0,
			2*(4*7168+7168)/(1.792e12*0.6) + 1.5*us, "latency", 1,
		},
		{
			"router 1 token x 7168 x 384 + top-8 on RTX",
			rtx.Router(RouterShape{Tokens: 1, Hidden: 7168, Experts: 384, TopK: 8}),
			7168*384*2 + 7168*2 + 384*2 + 4*384 + 8*8, 2 * 7168 * 384,
			(7168*384*2+7168*2+384*2)/rtxBW + 3*us + (4*384+8*8)/(1.792e12*0.6) + 1.5*us, "memory", 2,
		},
		{
			"greedy sampling batch 8 x vocab 163840 on H200",
			h200.Sampling(SamplingShape{Batch: 8, Vocab: 163840, Greedy: true}),
			4 * 8 * 163840, 0,
			4*8*163840/(4.8e12*0.6) + 1.5*us, "memory", 1,
		},
		{
			"top-p sampling batch 8 x vocab 163840 on H200: 4 passes",
			h200.Sampling(SamplingShape{Batch: 8, Vocab: 163840}),
			4 * 4 * 8 * 163840, 0,
			4 * (4*8*163840/(4.8e12*0.6) + 1.5*us), "memory", 4,
		},
	}
	for _, tc := range cases {
		e := tc.got
		assert.InEpsilon(t, tc.bytes, float64(e.Bytes), rel, "%s: bytes", tc.name)
		if tc.flops == 0 {
			assert.Zero(t, e.FLOPs, tc.name)
		} else {
			assert.InEpsilon(t, tc.flops, float64(e.FLOPs), rel, "%s: FLOPs", tc.name)
		}
		assert.InEpsilon(t, tc.time, float64(e.Time), 1e-6, "%s: time %v", tc.name, e.Time)
		assert.Equal(t, tc.bound, e.Source.Bound, tc.name)
		assert.Equal(t, tc.kernels, e.Kernels, tc.name)
		assert.Equal(t, cost.Roofline, e.Source.Kind, tc.name)
		assert.NotEmpty(t, e.Source.Formula, tc.name)
		assert.Greater(t, e.Source.Efficiency, 0.0, tc.name)
	}
}

// TestSpreads: a roofline estimate carries the spread of its bound.
func TestSpreads(t *testing.T) {
	c := newCosts(gpu(t, "h200-sxm"), true)
	// Large memory-bound GEMM: body dominates; Hi/Time close to MemorySpread.Hi.
	e := c.GEMM(GEMMShape{M: 1, N: 7168 * 8, K: 7168, Weight: dtype.BF16Weights})
	require.Equal(t, "memory", e.Source.Bound)
	body := float64(e.Time) - 3e-6
	assert.InEpsilon(t, body*MemorySpread.Hi+3e-6*LatencySpread.Hi, float64(e.Hi), 1e-9)
	assert.InEpsilon(t, body*MemorySpread.Lo+3e-6*LatencySpread.Lo, float64(e.Lo), 1e-9)
}

// shapes is a spread of op shapes across the regimes, for the property tests.
func forEachOp(t *testing.T, fn func(name string, e cost.Estimate, g GPU)) {
	for _, gn := range GPUNames() {
		g := gpu(t, gn)
		for _, graphs := range []bool{true, false} {
			c := newCosts(g, graphs)
			for _, m := range []int{1, 3, 16, 64, 512, 4096} {
				for _, w := range []dtype.Format{dtype.BF16Weights, dtype.FP8Block128, dtype.INT4G32, dtype.MXFP4} {
					fn("gemm", c.GEMM(GEMMShape{M: m, N: 7168, K: 2048, Weight: w}), g)
					fn("gemm batched", c.GEMM(GEMMShape{M: m, N: 512, K: 128, Weight: w, Count: 8}), g)
					fn("moe", c.MoE(MoEShape{Tokens: m, Pairs: float64(8 * m), ExpertsTouched: math.Min(float64(8*m), 384), Hidden: 7168, Inter: 256, Weight: w}), g)
				}
				for _, ctx := range []int{1, 1024, 131072} {
					for _, h := range []int{1, 8, 16, 128} {
						fn("mla", c.MLADecode(MLAShape{Batch: m, Context: ctx, Heads: h, KVLoRARank: 512, QKRopeDim: 64}), g)
					}
					fn("gqa", c.GQADecode(GQAShape{Batch: m, Context: ctx, Heads: 16, KVHeads: 2, HeadDim: 128, KV: dtype.KVFP8}), g)
				}
				fn("elementwise", c.Elementwise(RMSNormBytes(m, 7168)), g)
				fn("router", c.Router(RouterShape{Tokens: m, Hidden: 7168, Experts: 384, TopK: 8}), g)
				fn("sampling", c.Sampling(SamplingShape{Batch: m, Vocab: 163840}), g)
			}
		}
	}
}

// TestRooflineFloor: no op is ever faster than its bytes at peak DRAM
// bandwidth, and Lo <= Time <= Hi.
func TestRooflineFloor(t *testing.T) {
	n := 0
	forEachOp(t, func(name string, e cost.Estimate, g GPU) {
		floor := unit.TransferTime(e.Bytes, g.MemBW)
		assert.GreaterOrEqual(t, float64(e.Lo), float64(floor)*(1-1e-12), "%s on %s: Lo %v below floor %v", name, g.Name, e.Lo, floor)
		assert.Greater(t, float64(e.Time), float64(floor), "%s on %s", name, g.Name)
		assert.True(t, e.Lo <= e.Time && e.Time <= e.Hi, "%s on %s: interval %v %v %v", name, g.Name, e.Lo, e.Time, e.Hi)
		assert.Greater(t, e.Kernels, 0.0, name)
		n++
	})
	assert.Greater(t, n, 1000)
}

// expectedDistinct is the expected number of distinct experts T tokens
// touch under uniform top-k routing: E*(1-(1-k/E)^T).
func expectedDistinct(tokens int, experts, k float64) float64 {
	return experts * (1 - math.Pow(1-k/experts, float64(tokens)))
}

func TestMonotone(t *testing.T) {
	for _, gn := range GPUNames() {
		c := newCosts(gpu(t, gn), true)
		var prev [6]unit.Seconds
		for m := 1; m <= 8192; m *= 2 {
			cur := [6]unit.Seconds{
				c.GEMM(GEMMShape{M: m, N: 7168, K: 1024, Weight: dtype.BF16Weights}).Time,
				c.GEMM(GEMMShape{M: m, N: 4096, K: 7168, Weight: dtype.INT4G32}).Time,
				c.MoE(MoEShape{Tokens: m, Pairs: float64(8 * m), ExpertsTouched: expectedDistinct(m, 384, 8), Hidden: 7168, Inter: 256, Weight: dtype.INT4G32}).Time,
				c.MoE(MoEShape{Tokens: m, Pairs: float64(8 * m), ExpertsTouched: expectedDistinct(m, 256, 8), Hidden: 7168, Inter: 2048, Weight: dtype.FP8Block128}).Time,
				c.MLADecode(MLAShape{Batch: m, Context: 2048, Heads: 16, KVLoRARank: 512, QKRopeDim: 64}).Time,
				c.GQADecode(GQAShape{Batch: m, Context: 2048, Heads: 8, KVHeads: 1, HeadDim: 128}).Time,
			}
			for i := range cur {
				assert.GreaterOrEqual(t, float64(cur[i]), float64(prev[i]), "%s op %d at M=%d", gn, i, m)
			}
			prev = cur
		}
		var pm, pg unit.Seconds
		for ctx := 1; ctx <= 1<<18; ctx *= 4 {
			m := c.MLADecode(MLAShape{Batch: 8, Context: ctx, Heads: 8, KVLoRARank: 512, QKRopeDim: 64}).Time
			g := c.GQADecode(GQAShape{Batch: 8, Context: ctx, Heads: 8, KVHeads: 1, HeadDim: 128}).Time
			assert.Greater(t, float64(m), float64(pm), "%s MLA at context %d", gn, ctx)
			assert.Greater(t, float64(g), float64(pg), "%s GQA at context %d", gn, ctx)
			pm, pg = m, g
		}
	}
}

// W4A16 is memory-bound up to M ~ 16-32 (IST-DASLab/marlin README @ 2f6d7c1;
// Frantar et al., arXiv 2408.11743): the time at
// M=16 is within 10% of M=1's, and compute-bound by M=256.
func TestMarlinCrossover(t *testing.T) {
	c := newCosts(gpu(t, "rtx-pro-6000-server"), true)
	s := GEMMShape{N: 4096, K: 7168, Weight: dtype.INT4G32}
	s.M = 1
	t1 := c.GEMM(s).Time
	s.M = 16
	e16 := c.GEMM(s)
	assert.Equal(t, "memory", e16.Source.Bound)
	assert.Less(t, float64(e16.Time), float64(t1)*1.1)
	s.M = 256
	assert.Equal(t, "compute", c.GEMM(s).Source.Bound)
}

func TestKernelOverheadAndLaunchCost(t *testing.T) {
	g := gpu(t, "h200-sxm")
	graph := newCosts(g, true)
	eager := newCosts(g, false)
	assert.Zero(t, graph.KernelOverhead().Time)
	assert.Equal(t, HostLaunchLatency, eager.KernelOverhead().Time)
	assert.Equal(t, cost.Fixed, eager.KernelOverhead().Source.Kind)
	short := cost.Estimate{Time: 10e-6, Kernels: 5}
	assert.Zero(t, graph.LaunchCost(short).Time)
	assert.InEpsilon(t, 40e-6, float64(eager.LaunchCost(short).Time), 1e-9)
	long := cost.Estimate{Time: 100e-6, Kernels: 2}
	assert.Zero(t, eager.LaunchCost(long).Time)
}

func TestEfficiencyFor(t *testing.T) {
	assert.Equal(t, EffMemMarlinSM90, EfficiencyFor(gpu(t, "h200-sxm")).MemMarlin)
	assert.Equal(t, EffComputeAttentionSM120, EfficiencyFor(gpu(t, "rtx-pro-6000-server")).ComputeAttention)
	b200 := DefaultEfficiency()
	b200.QuantGEMM = QuantGEMMSM100.WithCompute(QuantGEMMComputeSM100)
	assert.Equal(t, b200, EfficiencyFor(gpu(t, "b200-sxm")), "sm_100: the defaults but for its quantized GEMMs")
	assert.Equal(t, QuantGEMMSM103.WithCompute(QuantGEMMComputeSM103), EfficiencyFor(gpu(t, "b300-sxm")).QuantGEMM, "sm_103")
	_, ok := QuantGEMMComputeFor(SM120)
	assert.False(t, ok, "sm_120: no perf database GEMM rows")
	assert.Equal(t, QuantGEMMSM90.WithCompute(QuantGEMMComputeSM90), EfficiencyFor(gpu(t, "h100-sxm")).QuantGEMM)
	assert.Equal(t, 0.0, EfficiencyFor(gpu(t, "rtx-pro-6000-server")).QuantGEMM.FP8.Compute, "sm_120: the bf16 fraction")
	assert.Equal(t, DefaultEfficiency(), EfficiencyFor(gpu(t, "a100-sxm")), "sm_80: no perf database rows")
	// A zero Eff means EfficiencyFor(GPU).
	g := gpu(t, "h200-sxm")
	c0 := &Costs{GPU: g}
	s := MoEShape{Tokens: 4, Pairs: 32, ExpertsTouched: 32, Hidden: 7168, Inter: 256, Weight: dtype.INT4G32}
	assert.Equal(t, newCosts(g, false).MoE(s), c0.MoE(s))
}

// fakeTables answers every query with a fixed estimate.
type fakeTables struct {
	e  cost.Estimate
	ok bool
}

func (f fakeTables) GEMM(GEMMShape) (cost.Estimate, bool)         { return f.e, f.ok }
func (f fakeTables) MoE(MoEShape) (cost.Estimate, bool)           { return f.e, f.ok }
func (f fakeTables) MLAModule(MLAShape) (cost.Estimate, bool)     { return f.e, f.ok }
func (f fakeTables) GQA(GQAShape) (cost.Estimate, bool)           { return f.e, f.ok }
func (f fakeTables) Prefill(PrefillShape) (cost.Estimate, bool)   { return cost.Estimate{}, false }
func (f fakeTables) Elementwise(unit.Bytes) (cost.Estimate, bool) { return f.e, f.ok }

func TestTablesAndFloor(t *testing.T) {
	g := gpu(t, "rtx-pro-6000-server")
	moe := MoEShape{Tokens: 1, Pairs: 8, ExpertsTouched: 8, Hidden: 7168, Inter: 256, Weight: dtype.INT4G32}
	gemm := GEMMShape{M: 1, N: 7168, K: 1024, Weight: dtype.BF16Weights}
	gqa := GQAShape{Batch: 8, Context: 4096, Heads: 16, KVHeads: 1, HeadDim: 128}
	mla := MLAShape{Batch: 8, Context: 4096, Heads: 8, KVLoRARank: 512, QKRopeDim: 64, TotalHeads: 64}
	proj := [...]GEMMShape{
		{M: 8, N: 1536, K: 7168, Weight: dtype.BF16Weights},
		{M: 8, N: 7168, K: 1024, Weight: dtype.BF16Weights},
	}
	src := cost.Source{Kind: cost.Table, Table: "embedded:rtx:moe", RowLo: 2, RowHi: 3}

	// A table point faster than the hardware allows is floored at the
	// physical limit max(bytes/peak BW, flops/peak) (never an efficiency:
	// issue 25), and the note says so.
	fast := newCosts(g, true)
	fast.Tables = fakeTables{e: cost.Estimate{Time: 1e-6, Lo: 0.9e-6, Hi: 1.1e-6, Source: src}, ok: true}
	for name, e := range map[string]cost.Estimate{
		"moe": fast.MoE(moe), "gemm": fast.GEMM(gemm), "gqa": fast.GQADecode(gqa),
	} {
		floor := max(unit.TransferTime(e.Bytes, g.MemBW), unit.ComputeTime(e.FLOPs, g.PeakFor(dtype.BF16)))
		assert.InEpsilon(t, float64(floor), float64(e.Time), 1e-9, name)
		assert.Equal(t, noteFloor, e.Source.Note, name)
		assert.Equal(t, cost.Table, e.Source.Kind, name)
		assert.True(t, e.Lo <= e.Time && e.Time <= e.Hi, name)
		assert.GreaterOrEqual(t, float64(e.Lo), float64(unit.TransferTime(e.Bytes, g.MemBW))*(1-1e-12), name)
	}
	// A compute-bound GEMM is floored at its FLOPs at the peak, not at an
	// efficiency of it.
	big := GEMMShape{M: 8192, N: 8192, K: 8192, Weight: dtype.BF16Weights}
	eb := fast.GEMM(big)
	assert.InEpsilon(t, float64(unit.ComputeTime(GEMMFLOPs(big), g.PeakFor(dtype.BF16))), float64(eb.Time), 1e-9, "compute-bound gemm")
	assert.Less(t, float64(eb.Time), float64(newCosts(g, true).GEMM(big).Time), "the floor is below the roofline's efficiency")
	ew := fast.Elementwise(RMSNormBytes(4096, 7168))
	assert.InEpsilon(t, float64(unit.TransferTime(ew.Bytes, g.MemBW)), float64(ew.Time), 1e-9, "elementwise")
	assert.Equal(t, noteFloor, ew.Source.Note, "elementwise")
	m, ok := fast.MLAModule(mla, proj[:])
	require.True(t, ok)
	wantBytes := mlaBytes(mla) + GEMMBytes(proj[0]) + GEMMBytes(proj[1])
	assert.InEpsilon(t, float64(wantBytes), float64(m.Bytes), 1e-9)
	assert.InEpsilon(t, float64(unit.TransferTime(wantBytes, g.MemBW)), float64(m.Time), 1e-9)
	roofs := []ProjRoof{fast.ProjRoof(proj[0]), fast.ProjRoof(proj[1])}
	mr, ok := fast.MLAModuleRoofs(mla, roofs)
	require.True(t, ok)
	assert.Equal(t, m, mr, "MLAModuleRoofs with the projections' ProjRoofs is MLAModule")

	// A slower table point is used as is.
	slow := newCosts(g, true)
	te := cost.Estimate{Time: 5e-3, Lo: 4e-3, Hi: 6e-3, Source: src}
	slow.Tables = fakeTables{e: te, ok: true}
	e := slow.MoE(moe)
	assert.Equal(t, te.Time, e.Time)
	assert.Equal(t, te.Lo, e.Lo)
	assert.Empty(t, e.Source.Note)
	assert.Equal(t, MoEBytes(moe), e.Bytes, "bytes filled from the roofline")

	// Not covered: roofline.
	none := newCosts(g, true)
	none.Tables = fakeTables{ok: false}
	assert.Equal(t, newCosts(g, true).MoE(moe), none.MoE(moe))
	_, ok = none.MLAModule(mla, proj[:])
	assert.False(t, ok)
	_, ok = none.MLAModuleRoofs(mla, roofs)
	assert.False(t, ok)
	_, ok = newCosts(g, true).MLAModule(mla, proj[:])
	assert.False(t, ok, "no tables")
}

func TestNoAllocations(t *testing.T) {
	c := newCosts(gpu(t, "rtx-pro-6000-server"), false)
	c.Tables = fakeTables{e: cost.Estimate{Time: 1e-6}, ok: true}
	proj := [...]GEMMShape{{M: 8, N: 1536, K: 7168, Weight: dtype.BF16Weights}}
	moe := MoEShape{Tokens: 8, Pairs: 64, ExpertsTouched: 60, Hidden: 7168, Inter: 256, Weight: dtype.INT4G32}
	n := testing.AllocsPerRun(100, func() {
		_ = c.GEMM(GEMMShape{M: 8, N: 7168, K: 1024, Weight: dtype.BF16Weights})
		_ = c.MoE(moe)
		_ = c.MLADecode(MLAShape{Batch: 8, Context: 2048, Heads: 8, KVLoRARank: 512, QKRopeDim: 64})
		_, _ = c.MLAModule(MLAShape{Batch: 8, Context: 2048, Heads: 8, KVLoRARank: 512, QKRopeDim: 64}, proj[:])
		_ = c.GQADecode(GQAShape{Batch: 8, Context: 2048, Heads: 8, KVHeads: 1, HeadDim: 128})
		_ = c.Elementwise(RMSNormBytes(8, 7168))
		_ = c.Router(RouterShape{Tokens: 8, Hidden: 7168, Experts: 384, TopK: 8})
		_ = c.Sampling(SamplingShape{Batch: 8, Vocab: 163840})
		_ = c.LaunchCost(c.KernelOverhead())
	})
	assert.Zero(t, n)
}

func BenchmarkMoE(b *testing.B) {
	c := newCosts(gpu(b, "rtx-pro-6000-server"), true)
	s := MoEShape{Tokens: 64, Pairs: 512, ExpertsTouched: 280, Hidden: 7168, Inter: 256, Weight: dtype.INT4G32}
	var sum unit.Seconds
	for i := 0; b.Loop(); i++ {
		s.Tokens = 1 + i%256
		sum += c.MoE(s).Time
	}
	_ = sum
}

func BenchmarkGEMM(b *testing.B) {
	c := newCosts(gpu(b, "h200-sxm"), true)
	s := GEMMShape{N: 7168, K: 1024, Weight: dtype.BF16Weights}
	var sum unit.Seconds
	for i := 0; b.Loop(); i++ {
		s.M = 1 + i%256
		sum += c.GEMM(s).Time
	}
	_ = sum
}

// TestGEMMBatchEfficiencySM120: on sm_120 a bf16 GEMM of more than
// GEMMBatchRows rows streams its weights at EffMemGEMMBatchSM120 (vLLM
// 0.19.0's measured GEMMs), at most GEMMBatchRows rows at EffMem; fp8 and
// weight-only GEMMs and other architectures keep their efficiencies.
func TestGEMMBatchEfficiencySM120(t *testing.T) {
	rtx, h200 := newCosts(gpu(t, "rtx-pro-6000-server"), true), newCosts(gpu(t, "h200-sxm"), true)
	bw := float64(rtx.GPU.MemBW)
	for _, tc := range []struct {
		name string
		c    *Costs
		s    GEMMShape
		eff  float64
	}{
		{"sm120 bf16 M=128", rtx, GEMMShape{M: 128, N: 25600, K: 5120, Weight: dtype.BF16Weights}, EffMemGEMMBatchSM120},
		{"sm120 bf16 M=17", rtx, GEMMShape{M: 17, N: 25600, K: 5120, Weight: dtype.BF16Weights}, EffMemGEMMBatchSM120},
		{"sm120 bf16 M=16", rtx, GEMMShape{M: 16, N: 25600, K: 5120, Weight: dtype.BF16Weights}, EffMem},
		{"sm120 fp8 M=128", rtx, GEMMShape{M: 128, N: 25600, K: 5120, Weight: dtype.FP8Block128}, EffMem},
	} {
		e := tc.c.GEMM(tc.s)
		want := float64(GEMMBytes(tc.s))/(bw*tc.eff) + float64(StreamKernelLatency) + (gemmKernels(tc.s.Weight)-1)*float64(SmallKernelLatency)
		assert.InEpsilon(t, want, float64(e.Time), rel, "%s: %s", tc.name, e.Source)
	}
	s := GEMMShape{M: 128, N: 25600, K: 5120, Weight: dtype.BF16Weights}
	want := float64(GEMMBytes(s))/(float64(h200.GPU.MemBW)*EffMem) + float64(StreamKernelLatency)
	assert.InEpsilon(t, want, float64(h200.GEMM(s).Time), rel, "sm90 keeps EffMem")
	assert.Zero(t, DefaultEfficiency().MemGEMMBatch)
}

// TestHostLaunch: Costs.HostLaunch replaces HostLaunchLatency per eager
// kernel in HostTime, LaunchCost and KernelOverhead; zero keeps it.
func TestHostLaunch(t *testing.T) {
	g := gpu(t, "h200-sxm")
	eager := newCosts(g, false)
	e := cost.Estimate{Time: 50e-6, Kernels: 3}
	assert.InEpsilon(t, 30e-6, float64(eager.HostTime(e)), 1e-9)
	eager.HostLaunch = EngineHostLaunch("vllm")
	assert.InEpsilon(t, 3*44.3e-6, float64(eager.HostTime(e)), 1e-9)
	assert.InEpsilon(t, 3*44.3e-6-50e-6, float64(eager.LaunchCost(e).Time), 1e-9)
	assert.Equal(t, EngineHostLaunch("vllm"), eager.KernelOverhead().Time)
	graph := newCosts(g, true)
	graph.HostLaunch = EngineHostLaunch("vllm")
	assert.Zero(t, graph.LaunchCost(e).Time)
}

// TestGPUOwnGEMMEfficiency: a GPU carrying its own measured bf16 GEMM
// fractions (a custom GPU's gemm_mem_efficiency, gemm_compute_efficiency;
// here an RTX 4090 with vLLM 0.19.0's, from LLMServingSim's profile)
// streams bf16 weights at GEMMMem above GEMMBatchRows rows, at EffMem up to
// it, and computes at GEMMCompute of its bf16 peak on any engine; fp8 GEMMs
// and a GPU without them keep the architecture's fractions.
func TestGPUOwnGEMMEfficiency(t *testing.T) {
	g := GPU{Name: "rtx-4090", Arch: "sm_89", SMs: 128, Memory: 25250627584, MemBW: 1008e9, L2: 72e6,
		Peak: [4]unit.FLOPsPerSecond{dtype.BF16: 165.2e12, dtype.FP8: 330.3e12}, GEMMMem: 0.83, GEMMCompute: 0.96}
	require.NoError(t, g.Validate())
	e := EfficiencyFor(g)
	assert.Equal(t, 0.83, e.MemGEMMBatch)
	assert.Equal(t, 0.96, e.ComputeGEMMBF16)
	plain := g
	plain.GEMMMem, plain.GEMMCompute = 0, 0
	assert.Equal(t, DefaultEfficiency(), EfficiencyFor(plain), "sm_89 has no facts of its own")
	c := newCosts(g, true)
	bw := float64(g.MemBW)
	fixed := float64(StreamKernelLatency)
	for _, tc := range []struct {
		m   int
		eff float64
	}{{40, 0.83}, {17, 0.83}, {16, EffMem}} {
		s := GEMMShape{M: tc.m, N: 28672, K: 4096, Weight: dtype.BF16Weights}
		want := float64(GEMMBytes(s))/(bw*tc.eff) + fixed
		assert.InEpsilon(t, want, float64(c.GEMM(s).Time), rel, "M=%d", tc.m)
	}
	// The measured layer (Llama-3.1-8B gate_up_proj) at M = 40: 276.1 us;
	// at M = 1024: 1455.0 us, on vLLM and SGLang alike.
	s := GEMMShape{M: 40, N: 28672, K: 4096, Weight: dtype.BF16Weights}
	assert.InEpsilon(t, 276.1e-6, float64(c.GEMM(s).Time), 0.08)
	s.M = 1024
	for _, eng := range []string{"vllm", "sglang", ""} {
		s.Engine = eng
		want := float64(GEMMFLOPs(s))/(165.2e12*0.96) + fixed
		assert.InEpsilon(t, want, float64(c.GEMM(s).Time), rel, "engine %q, compute-bound", eng)
		assert.InEpsilon(t, 1455.0e-6, float64(c.GEMM(s).Time), 0.08, "the measured layer")
	}
	s.Engine = ""
	old := newCosts(plain, true)
	assert.InEpsilon(t, float64(GEMMFLOPs(s))/(165.2e12*EffComputeGEMM)+fixed, float64(old.GEMM(s).Time), rel, "without: the default")
	fp8 := GEMMShape{M: 1024, N: 28672, K: 4096, Weight: dtype.FP8Block128}
	assert.Equal(t, old.GEMM(fp8).Time, c.GEMM(fp8).Time, "fp8 keeps its fractions")
}

// TestGQADecodeMixedFA2: beside a prefill chunk, FlashAttention-2's varlen
// kernel reads each decode's KV once per query head: q_heads/kv_heads x KV
// bytes at the GPU's FA2MixedRead, never below the decode-only cost; a GPU
// without the rate, or MHA (no grouping), keeps the decode-only cost. On the
// RTX PRO 6000 preset the Qwen3-32B TP2 shape (32 q / 4 kv heads, 128
// decodes at 1024) lands within 5% of LLMServingSim's row: 788.6 us with a
// 1024-token chunk less 60.5 us for the chunk alone.
func TestGQADecodeMixedFA2(t *testing.T) {
	rtx := newCosts(gpu(t, "rtx-pro-6000-server"), true)
	require.Positive(t, float64(rtx.GPU.FA2MixedRead))
	s := GQAShape{Batch: 128, Context: 1024, Heads: 32, KVHeads: 4, HeadDim: 128, KV: dtype.KVBF16}
	alone := rtx.GQADecode(s)
	mixed := rtx.GQADecodeMixedFA2(s, alone)
	kv := 128.0 * 1024 * 2 * 4 * 128 * 2
	want := 8*kv/float64(rtx.GPU.FA2MixedRead) + float64(GQAKernels*StreamKernelLatency)
	assert.InEpsilon(t, want, float64(mixed.Time), 1e-9)
	assert.Greater(t, float64(mixed.Time), 2*float64(alone.Time))
	assert.InEpsilon(t, 728.1e-6, float64(mixed.Time), 0.05)
	assert.LessOrEqual(t, float64(mixed.Lo), float64(mixed.Time))
	assert.GreaterOrEqual(t, float64(mixed.Hi), float64(mixed.Time))

	mha := s
	mha.KVHeads = 32
	assert.Equal(t, rtx.GQADecode(mha), rtx.GQADecodeMixedFA2(mha, rtx.GQADecode(mha)), "no grouping: no re-reads")
	h200 := newCosts(gpu(t, "h200-sxm"), true)
	assert.Equal(t, h200.GQADecode(s), h200.GQADecodeMixedFA2(s, h200.GQADecode(s)), "no measured rate")
	tiny := s
	tiny.Batch, tiny.Context = 1, 16
	small := rtx.GQADecodeMixedFA2(tiny, rtx.GQADecode(tiny))
	assert.GreaterOrEqual(t, float64(small.Time), float64(rtx.GQADecode(tiny).Time), "never below the decode-only cost")
	assert.InEpsilon(t, float64(rtx.GQADecode(tiny).Time), float64(small.Time), 0.05, "a tiny KV: the kernels' fixed cost")
	big := rtx.GQADecode(s)
	big.Time *= 10
	assert.Equal(t, big, rtx.GQADecodeMixedFA2(s, big), "a decode-only cost above the re-reads stands")
}
