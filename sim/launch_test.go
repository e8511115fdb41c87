package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

// hostAndGPU sums an eager step's host launch time (each op's kernels at
// per) and its GPU time (every op), from the per-op listing of a Sim
// without LaunchAhead.
func hostAndGPU(t *testing.T, s *Sim, seqs []Seq, per unit.Seconds) (host, gpu unit.Seconds) {
	t.Helper()
	ops, err := s.ExplainBatch(seqs)
	require.NoError(t, err)
	for _, o := range ops {
		host += unit.Seconds(o.Count*o.Estimate.Kernels) * per
		gpu += unit.Seconds(o.Count) * o.Estimate.Time
	}
	return host, gpu
}

// TestLaunchAhead: with Config.LaunchAhead an eager step's launch time is
// max(0, host - GPU) over the whole step: zero for a long prefill whose
// GPU time covers the host's launches (where the per-op rule charges
// every small op's excess), exactly host - GPU for a short one, never
// more than the per-op rule; --explain's ops still sum to the step.
func TestLaunchAhead(t *testing.T) {
	cfg := setups[1].config(t) // kimi-k2.5 h200 tp8 ep8
	cfg.Graphs = false
	perOp, err := New(cfg)
	require.NoError(t, err)
	cfg.LaunchAhead = true
	ahead, err := New(cfg)
	require.NoError(t, err)

	long := []Seq{{Query: 8192, Prefill: true}}
	host, gpu := hostAndGPU(t, perOp, long, kernels.HostLaunchLatency)
	require.Less(t, host, gpu, "the long prefill's GPU time covers its launches")
	assert.Positive(t, stepBatch(t, perOp, long).Breakdown[cost.Launch].Time, "per op: small ops pay their excess")
	assert.Zero(t, stepBatch(t, ahead, long).Breakdown[cost.Launch].Time, "ahead: hidden behind the GPU")

	short := decodes(1, 128, 1)
	host, gpu = hostAndGPU(t, perOp, short, kernels.HostLaunchLatency)
	require.Greater(t, host, gpu, "one decode is host-bound")
	r := stepBatch(t, ahead, short)
	assert.InDelta(t, float64(host-gpu), float64(r.Breakdown[cost.Launch].Time), 1e-9)
	assert.InDelta(t, float64(host), float64(r.Step.Time), 1e-9, "host-bound step: its host time")
	assert.LessOrEqual(t, r.Step.Time, stepBatch(t, perOp, short).Step.Time+1e-12)

	for _, seqs := range [][]Seq{long, short, append(decodes(16, 4096, 1), Seq{Query: 300, Prefill: true})} {
		ops, err := ahead.ExplainBatch(seqs)
		require.NoError(t, err)
		var sum unit.Seconds
		for _, o := range ops {
			sum += unit.Seconds(o.Count) * (o.Estimate.Time + o.Launch)
		}
		assert.InDelta(t, float64(stepBatch(t, ahead, seqs).Step.Time), float64(sum), 1e-9, "explain sums to the step")
	}
}

// TestEngineLaunch: with Config.EngineLaunch an eager kernel costs the
// engine's own measured host time (vLLM's 44.3 us), so a host-bound eager
// step grows by the kernels x the difference; an unknown engine keeps
// kernels.HostLaunchLatency; graph-replayed steps do not change.
func TestEngineLaunch(t *testing.T) {
	cfg := setups[1].config(t)
	cfg.Graphs, cfg.LaunchAhead, cfg.Engine = false, true, "vllm"
	base, err := New(cfg)
	require.NoError(t, err)
	cfg.EngineLaunch = true
	eng, err := New(cfg)
	require.NoError(t, err)
	cfg.Engine = ""
	unknown, err := New(cfg)
	require.NoError(t, err)

	short := decodes(1, 128, 1)
	host10, _ := hostAndGPU(t, base, short, kernels.HostLaunchLatency)
	host44, gpu := hostAndGPU(t, base, short, kernels.EngineHostLaunch("vllm"))
	require.Greater(t, host10, gpu)
	assert.InDelta(t, float64(host44), float64(stepBatch(t, eng, short).Step.Time), 1e-9)
	assert.InDelta(t, float64(host10), float64(stepBatch(t, unknown, short).Step.Time), 1e-9)
	assert.InDelta(t, 44.3, kernels.EngineHostLaunch("vllm").Us(), 1e-9)
	assert.InDelta(t, 17.3, kernels.EngineHostLaunch("sglang").Us(), 1e-9)
	assert.Equal(t, kernels.HostLaunchLatency, kernels.EngineHostLaunch(""))

	cfg = setups[1].config(t)
	cfg.Engine, cfg.LaunchAhead = "vllm", true
	g0, err := New(cfg)
	require.NoError(t, err)
	cfg.EngineLaunch = true
	g1, err := New(cfg)
	require.NoError(t, err)
	dec := decodes(64, 2048, 1)
	assert.Equal(t, stepBatch(t, g0, dec).Step.Time, stepBatch(t, g1, dec).Step.Time, "a full graph launches nothing")
}
