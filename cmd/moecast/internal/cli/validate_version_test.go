package cli

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/validate"
)

// TestBenchWorkloadEngineVersion: a result that records its engine
// version (aiconfigurator's backend_version) sets the scenario's
// runtime.engine_version unless the scenario names one.
func TestBenchWorkloadEngineVersion(t *testing.T) {
	r := validate.BenchResult{Concurrency: 4, NumPrompts: 40, InputTokens: 1024, OutputTokens: 128,
		Layout: validate.Layout{Extra: map[string]string{"backend_version": "0.12.0"}}}
	sc, err := scenarios.Embedded(scenarios.DefaultName)
	require.NoError(t, err)
	_, _, err = benchWorkload(sc, r)
	require.NoError(t, err)
	assert.Equal(t, "0.12.0", sc.Serving.EngineVersion)

	sc, err = scenarios.Embedded(scenarios.DefaultName)
	require.NoError(t, err)
	sc.Serving.EngineVersion = "0.15.1"
	_, _, err = benchWorkload(sc, r)
	require.NoError(t, err)
	assert.Equal(t, "0.15.1", sc.Serving.EngineVersion, "the scenario's own version wins")
}

// TestServingRefineVersion: plan's serving stage follows
// runtime.engine_version: vLLM 0.12 (no async scheduling) pays its host
// work on every decode step, the newest hides it.
func TestServingRefineVersion(t *testing.T) {
	sc, err := scenarios.Embedded("gpt-oss-120b-h200-tp1")
	require.NoError(t, err)
	sm, err := sc.Sim()
	require.NoError(t, err)
	c := &plan.Candidate{Config: sc.Config, Sim: sm, Engine: plan.Engine(1 << serve.VLLM)}
	tpot := func(version string) float64 {
		sc.Serving.EngineVersion = version
		ev, err := servingRefine(sc)
		require.NoError(t, err)
		m, err := ev.Evaluate(c, 4, plan.Workload{Input: 256, Output: 64})
		require.NoError(t, err)
		return float64(m.TPOTP99)
	}
	newest, old := tpot(""), tpot("0.12.0")
	assert.InDelta(t, float64(serve.EngineHost(serve.VLLM).PerStep), old-newest, 0.2e-3,
		"TPOT p99 %.3f ms at 0.12.0, %.3f ms newest", old*1e3, newest*1e3)
}

// TestBenchWorkloadServerInputScale: a result whose server tokenised the
// prompts into more tokens (validate's ServerInputScale) is simulated at
// the server's length, unless the client-tokenizer mechanism is off.
func TestBenchWorkloadServerInputScale(t *testing.T) {
	r := validate.BenchResult{Concurrency: 4, NumPrompts: 40, InputTokens: 1000, OutputTokens: 128, ServerInputScale: 5.03, RequestRate: math.Inf(1)}
	sc, err := scenarios.Embedded(scenarios.DefaultName)
	require.NoError(t, err)
	_, w, err := benchWorkload(sc, r)
	require.NoError(t, err)
	assert.Equal(t, 5030, sc.Serving.InputTokens)
	require.Len(t, w, 1)
	assert.Contains(t, w[0], "5030 simulated")

	sc, err = scenarios.Embedded(scenarios.DefaultName)
	require.NoError(t, err)
	require.NoError(t, sc.SetMechanism("client-tokenizer", false))
	_, _, err = benchWorkload(sc, r)
	require.NoError(t, err)
	assert.Equal(t, 1000, sc.Serving.InputTokens, "off: the client's lengths")

	r.ServerInputScale = 0
	sc, err = scenarios.Embedded(scenarios.DefaultName)
	require.NoError(t, err)
	_, _, err = benchWorkload(sc, r)
	require.NoError(t, err)
	assert.Equal(t, 1000, sc.Serving.InputTokens, "no mismatch known")
}

// TestBenchWorkloadHugeLengths: a result's mean lengths beyond what an
// int holds (a corrupt or hostile file: 1e308 tokens, or a length the
// server's tokenizer scale pushes over) are refused as the recorded
// figure, never as the wrapped integer a float-to-int conversion makes.
func TestBenchWorkloadHugeLengths(t *testing.T) {
	for _, r := range []validate.BenchResult{
		{InputTokens: 1e308, OutputTokens: 128},
		{InputTokens: 1000, OutputTokens: 1e308},
		{InputTokens: 9.3e18, OutputTokens: 128},
		{InputTokens: 1e300, OutputTokens: 128, ServerInputScale: 5.03},
		{InputTokens: math.MaxFloat64, OutputTokens: 128, ServerInputScale: 5.03},
	} {
		r.Concurrency, r.NumPrompts, r.RequestRate = 4, 40, math.Inf(1)
		sc, err := scenarios.Embedded(scenarios.DefaultName)
		require.NoError(t, err)
		_, _, err = benchWorkload(sc, r)
		require.Error(t, err, "%+v", r)
		assert.Contains(t, err.Error(), "exceeds the limit", "%+v", r)
		assert.NotContains(t, err.Error(), "-9223372036854775808")
		assert.NotContains(t, err.Error(), "Inf")
	}
}
