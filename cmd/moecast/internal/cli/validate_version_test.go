package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/scenarios"
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
