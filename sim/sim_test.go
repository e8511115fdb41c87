package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// setup is a named test configuration.
type setup struct {
	name          string
	preset        string
	gpu, fabric   string
	gpus          int
	tp, ep, dp    int
	dpAttention   bool
	graphs        bool
	spec          Spec
	kv            dtype.KVCache
	fromScenarios bool // one of the shipped scenarios' layouts
}

func (st setup) config(t testing.TB) Config {
	t.Helper()
	m, err := model.Preset(st.preset)
	require.NoError(t, err)
	g, ok := kernels.LookupGPU(st.gpu)
	require.True(t, ok, "gpu %s", st.gpu)
	f, ok := comm.LookupFabric(st.fabric)
	require.True(t, ok, "fabric %s", st.fabric)
	return Config{
		Model: m, KVCache: st.kv, GPU: g, GPUs: st.gpus, Fabric: f,
		Layout: model.Layout{TP: st.tp, EP: st.ep, DP: st.dp, DPAttention: st.dpAttention},
		Graphs: st.graphs, AllReduce: comm.Auto, GPUMemoryUtilization: 0.9, Spec: st.spec,
	}
}

func (st setup) sim(t testing.TB) *Sim {
	t.Helper()
	s, err := New(st.config(t))
	require.NoError(t, err, st.name)
	return s
}

var kimiRTX = setup{name: "kimi-k2.5 rtx-pro-6000 tp8 ep8", preset: "kimi-k2.5", gpu: "rtx-pro-6000-server",
	fabric: "pcie-gen5", gpus: 8, tp: 8, ep: 8, dp: 1, graphs: true, fromScenarios: true}

// setups covers the shipped scenarios' layouts and the other layout
// families sim models (DP attention with TP 1 and with TP 8, DP groups with
// TP > 1, expert-TP, eager mode, fp8 KV, each speculative method).
var setups = []setup{
	kimiRTX,
	{name: "kimi-k2.5 h200 tp8 ep8", preset: "kimi-k2.5", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 8, ep: 8, dp: 1, graphs: true, fromScenarios: true},
	{name: "deepseek-v3 h200 tp8 ep1", preset: "deepseek-v3", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 8, ep: 1, dp: 1, graphs: true, fromScenarios: true},
	{name: "deepseek-v3 h200 tp8 mtp", preset: "deepseek-v3", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 8, ep: 1, dp: 1, graphs: true,
		spec: Spec{Method: SpecMTP, DraftTokens: 1, Acceptance: []float64{0.85}}, fromScenarios: true},
	{name: "qwen3-235b h100 tp4", preset: "qwen3-235b-a22b", gpu: "h100-sxm", fabric: "nvlink4", gpus: 4, tp: 4, ep: 1, dp: 1, graphs: true, fromScenarios: true},
	{name: "gpt-oss-120b h200 tp1", preset: "gpt-oss-120b", gpu: "h200-sxm", fabric: "nvlink4", gpus: 1, tp: 1, ep: 1, dp: 1, graphs: true, fromScenarios: true},
	{name: "kimi-k2.5 rtx eagle3", preset: "kimi-k2.5", gpu: "rtx-pro-6000-server", fabric: "pcie-gen5", gpus: 8, tp: 8, ep: 8, dp: 1, graphs: true,
		spec: Spec{Method: SpecEAGLE3, DraftTokens: 3, Acceptance: []float64{0.8, 0.6, 0.45}}, fromScenarios: true},
	{name: "kimi-k2.5 h200 dp8 ep8 dp-attention", preset: "kimi-k2.5", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 1, ep: 8, dp: 8, dpAttention: true, graphs: true},
	{name: "deepseek-v3 h200 tp8 ep8 dp-attention (sglang)", preset: "deepseek-v3", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 8, ep: 8, dp: 1, dpAttention: true, graphs: true},
	{name: "deepseek-v3 h200 tp2 dp4 ep8", preset: "deepseek-v3", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 2, ep: 8, dp: 4, graphs: true},
	{name: "qwen3-30b h100 tp1 dp2 ep1", preset: "qwen3-30b-a3b", gpu: "h100-sxm", fabric: "nvlink4", gpus: 2, tp: 1, ep: 1, dp: 2, dpAttention: true, graphs: true},
	{name: "mixtral h100 tp2 eager fp8kv", preset: "mixtral-8x7b", gpu: "h100-sxm", fabric: "nvlink4", gpus: 2, tp: 2, ep: 2, dp: 1, kv: dtype.KVFP8},
	{name: "glm-5 b200 tp8 ngram", preset: "glm-5", gpu: "b200-sxm", fabric: "nvlink5", gpus: 8, tp: 8, ep: 8, dp: 1, graphs: true,
		spec: Spec{Method: SpecNgram, DraftTokens: 4, Acceptance: []float64{0.5}}},
}

var batches = []int{1, 2, 3, 4, 8, 16, 31, 32, 64, 128, 256, 512}

func TestStepInvariants(t *testing.T) {
	for _, st := range setups {
		t.Run(st.name, func(t *testing.T) {
			s := st.sim(t)
			for _, b := range batches {
				p, err := s.Step(b, 2048)
				require.NoError(t, err)
				var sum unit.Seconds
				for c, e := range p.Breakdown {
					sum += e.Time
					assert.GreaterOrEqual(t, e.Time, unit.Seconds(0), "batch %d %s", b, cost.Category(c))
					assert.LessOrEqual(t, float64(e.Lo), float64(e.Time)*(1+1e-12), "batch %d %s lo", b, cost.Category(c))
					assert.GreaterOrEqual(t, float64(e.Hi), float64(e.Time)*(1-1e-12), "batch %d %s hi", b, cost.Category(c))
				}
				assert.InEpsilon(t, float64(p.Step.Time), float64(sum), 1e-9, "batch %d: breakdown sums to step", b)
				assert.Less(t, float64(p.Step.Lo), float64(p.Step.Time), "batch %d", b)
				assert.Greater(t, float64(p.Step.Hi), float64(p.Step.Time), "batch %d", b)
				assert.Zero(t, p.Breakdown[cost.Idle].Time, "sim never predicts idle")
				if st.tp == 1 {
					assert.Zero(t, p.Breakdown[cost.AllReduce].Time, "batch %d: TP=1 has no allreduce", b)
				} else if !st.dpAttention {
					assert.Positive(t, p.Breakdown[cost.AllReduce].Time, "batch %d: TP>1 has allreduces", b)
				}
				if st.ep == 1 {
					assert.Zero(t, p.Breakdown[cost.AllToAll].Time, "batch %d: EP=1 has no all-to-all", b)
				}
				if st.graphs {
					assert.Zero(t, p.Breakdown[cost.Launch].Time, "batch %d: graphs on, no launch cost", b)
				}
				assert.InEpsilon(t, p.TokensPerStep, st.spec.TokensPerStep(), 1e-12)
				assert.InEpsilon(t, float64(p.Step.Time)/p.TokensPerStep, float64(p.TPOT), 1e-12)
				assert.InEpsilon(t, float64(b)*p.TokensPerStep/float64(p.Step.Time), p.TokensPerSecond, 1e-12)
			}
		})
	}
}

// weightFloor is the DRAM time of the weights one GPU must read in a step
// at T tokens per expert domain: every non-expert weight class it holds
// except the embedding table (a lookup reads only its rows) and the
// norms, plus the routed experts an average rank touches,
// MoELayers x m(1-(1-k/E)^T) experts of its m = E/EP.
func weightFloor(t *testing.T, c Config, tokens int) unit.Seconds {
	m := c.Model
	w := m.Weights(c.Layout)
	var b unit.Bytes
	for _, cls := range []model.Class{model.ClassAttention, model.ClassDenseMLP, model.ClassSharedExpert, model.ClassLMHead, model.ClassRouter} {
		b += w.PerGPU[cls]
	}
	E, k := float64(m.MoE.Experts), float64(m.MoE.TopK)
	perRank := float64(c.Layout.ExpertsPerRank(m.MoE.Experts))
	touched := perRank * (1 - math.Pow(1-k/E, float64(tokens)))
	b += w.PerGPU[model.ClassRoutedExperts] * unit.Bytes(touched/perRank)
	return unit.TransferTime(b, c.GPU.MemBW)
}

func TestStepNeverBelowWeightStreaming(t *testing.T) {
	for _, st := range setups {
		t.Run(st.name, func(t *testing.T) {
			c := st.config(t)
			s := st.sim(t)
			for _, b := range batches {
				p, err := s.Step(b, 1)
				require.NoError(t, err)
				tokens := b * st.spec.queryTokens()
				if st.dpAttention {
					tokens = ceilDiv(b, st.gpus/c.Layout.AttentionTP()) * st.spec.queryTokens() * st.gpus / c.Layout.AttentionTP()
				}
				floor := weightFloor(t, c, tokens)
				assert.GreaterOrEqual(t, float64(p.Step.Time), float64(floor), "batch %d: step below the weight-streaming floor", b)
			}
			// Once every expert is touched the floor is all the weights a GPU
			// holds, but for the embedding table and the norms.
			p, err := s.Step(4096, 1)
			require.NoError(t, err)
			w := c.Model.Weights(c.Layout)
			all := w.PerGPUTotal(false) - w.PerGPU[model.ClassEmbedding] - w.PerGPU[model.ClassNorm]
			assert.GreaterOrEqual(t, float64(p.Step.Time), float64(unit.TransferTime(all, c.GPU.MemBW)))
		})
	}
}

// TestStepMonotone: the step grows with batch and context. Every
// non-collective category must be monotone; collectives may dip where
// comm's auto choice switches algorithm by message size (vLLM's custom
// all-reduce goes one-shot -> two-shot at 512 KB on 4 ranks, and the
// two-shot is faster there), so the total is held monotone within 1%.
func TestStepMonotone(t *testing.T) {
	check := func(t *testing.T, prev, p Point, what string) {
		t.Helper()
		assert.GreaterOrEqual(t, float64(p.Step.Time), float64(prev.Step.Time)*0.99, what)
		for c := range p.Breakdown {
			if cost.Category(c).IsCollective() || cost.Category(c) == cost.Launch {
				continue // launch = max(0, host - GPU time) per op: falls as ops grow
			}
			assert.GreaterOrEqual(t, float64(p.Breakdown[c].Time), float64(prev.Breakdown[c].Time)*(1-1e-12), "%s: %s", what, cost.Category(c))
		}
	}
	for _, st := range setups {
		t.Run(st.name, func(t *testing.T) {
			s := st.sim(t)
			prev, err := s.Step(1, 2048)
			require.NoError(t, err)
			for b := 2; b <= 300; b++ {
				p, err := s.Step(b, 2048)
				require.NoError(t, err)
				check(t, prev, p, fmt.Sprintf("batch %d -> %d", b-1, b))
				prev = p
			}
			for _, b := range []int{1, 32} {
				prev, err = s.Step(b, 1)
				require.NoError(t, err)
				for ctx := 2; ctx <= 1<<17; ctx *= 2 {
					p, err := s.Step(b, ctx)
					require.NoError(t, err)
					check(t, prev, p, fmt.Sprintf("batch %d context %d -> %d", b, ctx/2, ctx))
					prev = p
				}
			}
		})
	}
}

func TestExplainAddsUpToStep(t *testing.T) {
	for _, st := range setups {
		t.Run(st.name, func(t *testing.T) {
			s := st.sim(t)
			p, err := s.Step(16, 4096)
			require.NoError(t, err)
			ops, err := s.Explain(16, 4096)
			require.NoError(t, err)
			var sum unit.Seconds
			var byCat [cost.NumCategories]unit.Seconds
			for _, o := range ops {
				assert.NotEmpty(t, o.Shape, o.Name)
				assert.NotEmpty(t, o.Layer, o.Name)
				sum += unit.Seconds(o.Count) * (o.Estimate.Time + o.Launch)
				byCat[o.Category] += unit.Seconds(o.Count) * o.Estimate.Time
			}
			assert.InEpsilon(t, float64(p.Step.Time), float64(sum), 1e-9)
			for c := range byCat {
				if cost.Category(c) != cost.Launch {
					assert.InDelta(t, float64(p.Breakdown[c].Time), float64(byCat[c]), 1e-12, cost.Category(c).String())
				}
			}
			_, err = s.Explain(0, 4096)
			assert.Error(t, err)
		})
	}
}
