package cli

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/validate"
)

// TestBenchWorkloadDeployBudget: a result whose deployment's token budget
// is known (validate's MaxNumBatchedTokens) runs the engine at that
// budget, unless the scenario sets its own or the aic-generator-budget
// mechanism is off.
func TestBenchWorkloadDeployBudget(t *testing.T) {
	r := validate.BenchResult{Concurrency: 8, NumPrompts: 80, InputTokens: 1024, OutputTokens: 128, MaxNumBatchedTokens: 2532, RequestRate: math.Inf(1)}
	sc, err := scenarios.Embedded(scenarios.DefaultName)
	require.NoError(t, err)
	_, _, err = benchWorkload(sc, r)
	require.NoError(t, err)
	assert.Equal(t, 2532, sc.Serving.MaxNumBatchedTokens)

	sc, err = scenarios.Embedded(scenarios.DefaultName)
	require.NoError(t, err)
	require.NoError(t, sc.SetMechanism("aic-generator-budget", false))
	_, _, err = benchWorkload(sc, r)
	require.NoError(t, err)
	assert.Zero(t, sc.Serving.MaxNumBatchedTokens, "off: the engine's default")

	sc, err = scenarios.Embedded(scenarios.DefaultName)
	require.NoError(t, err)
	sc.Serving.MaxNumBatchedTokens = 4096
	_, _, err = benchWorkload(sc, r)
	require.NoError(t, err)
	assert.Equal(t, 4096, sc.Serving.MaxNumBatchedTokens, "the scenario's own budget stands")
}

// TestDeployBudgetBreaksWaves: Qwen3-32B on 2x H100 under vLLM 0.12, a
// closed loop of 8 prompts of 1024 tokens. At vLLM's default budget (8192
// tokens on an H100) the whole wave is prefilled in one step, every
// request finishes at the same step and the waves never break up: each
// TTFT is one 8-prompt prefill step. At the generator's budget (8 + 1024 +
// 1500 = 2532) a step prefills at most two prompts and a chunk of a
// third, so the requests finish at different steps and come back spread
// out: the mean TTFT falls to about half the lockstep one.
func TestDeployBudgetBreaksWaves(t *testing.T) {
	m, err := openCorpus("")
	require.NoError(t, err)
	var e *scenarios.ManifestEntry
	for i := range m.Entries {
		if m.Entries[i].Name == "aiconfigurator/h100-sxm-vllm-qwen3-32b-tp2-dp0-ep1" {
			e = &m.Entries[i]
		}
	}
	require.NotNil(t, e, "the corpus entry")
	ttft := func(budget int) (mean, median float64) {
		sc, err := m.Scenario(*e)
		require.NoError(t, err)
		sm, err := sc.Sim()
		require.NoError(t, err)
		r := validate.BenchResult{Concurrency: 8, NumPrompts: 80, InputTokens: 1024, OutputTokens: 128, RequestRate: math.Inf(1),
			MaxNumBatchedTokens: budget, Metrics: map[string]validate.Stats{"ttft": {Mean: 1, Median: 1}, "tpot": {Mean: 1}},
			Layout: validate.Layout{Extra: map[string]string{"backend_version": "0.12.0"}}}
		row := corpusRowOf(*e, r)
		simulateCorpusRow(sc, simHandle{sm: sm}, r, &row)
		require.Empty(t, row.Skip)
		return row.Predicted["ttft"].Mean, row.Predicted["ttft"].Median
	}
	lockMean, lockMedian := ttft(0)
	mean, _ := ttft(8 + 1024 + 1500)
	assert.InDelta(t, lockMedian, lockMean, 0.15*lockMean, "lockstep: (almost) every request waits for the wave's one prefill step")
	assert.Less(t, mean, 0.6*lockMean, "the generator's budget breaks the waves up: %.0f ms vs %.0f ms", mean, lockMean)
}
