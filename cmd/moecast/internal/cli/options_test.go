package cli

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/serve"
)

// The options each command parses from its flags, checked through the run
// function the command calls (gh's newCmdDelete(f, runF) pattern): a test
// injects runF, so no computation runs.

// parseWith runs cmd on args and returns the error of its RunE.
func parseWith(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	var out, errb bytes.Buffer
	if args == nil {
		args = []string{} // cobra reads os.Args (the test binary's flags) for nil
	}
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.Execute()
}

func TestPredictOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want predictOptions
	}{
		{"defaults", nil, predictOptions{Format: formatText}},
		{"every flag", []string{"kimi-k2.5-h200-nvlink-tp8", "--batch", "1, 8,64", "--context", "4096", "--format", "json",
			"--html", "r.html", "--explain", "--calibration", "embedded,none"},
			predictOptions{Scenario: "kimi-k2.5-h200-nvlink-tp8", Batches: []int{1, 8, 64}, Context: 4096, Format: formatJSON,
				HTML: "r.html", Explain: true, Calibration: "embedded,none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *predictOptions
			cmd := newPredictCmd(&streams{}, func(o *predictOptions) error { got = o; return nil })
			require.NoError(t, parseWith(t, cmd, tc.args...))
			require.NotNil(t, got)
			assert.Equal(t, tc.want, *got)
		})
	}
	t.Run("bad batch never reaches the run function", func(t *testing.T) {
		called := false
		cmd := newPredictCmd(&streams{}, func(*predictOptions) error { called = true; return nil })
		err := parseWith(t, cmd, "--batch", "1,x")
		require.Error(t, err)
		assert.Equal(t, ExitInput, exitCodeOf(err), err.Error())
		assert.False(t, called)
	})
}

func TestSimulateOptions(t *testing.T) {
	seed, sys := uint64(7), 512
	for _, tc := range []struct {
		name string
		args []string
		want simulateOptions
	}{
		{"defaults", nil, simulateOptions{Format: formatText}},
		{"closed loop", []string{"s.toml", "--concurrency", "4,64", "--input-tokens", "1000", "--output-tokens", "200",
			"--requests", "300", "--seed", "7", "--goodput", "ttft:2000,tpot:50", "--system-prompt-tokens", "512",
			"--calibration", "none", "--format", "csv", "--html", "r.html"},
			simulateOptions{Scenario: "s.toml", Concurrency: []int{4, 64}, InputTokens: 1000, OutputTokens: 200, Requests: 300,
				Seed: &seed, SLO: serve.SLO{TTFT: unit.Seconds(2), TPOT: unit.Seconds(0.05)}, SystemPrompt: &sys,
				Calibration: "none", Format: formatCSV, HTML: "r.html"}},
		{"open loop, replay off", []string{"--request-rate", "2,8.5", "--no-prefix-cache"},
			simulateOptions{RequestRate: []float64{2, 8.5}, NoPrefixCache: true, Format: formatText}},
		{"replay", []string{"--workload", "requests.jsonl"}, simulateOptions{Workload: "requests.jsonl", Format: formatText}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *simulateOptions
			cmd := newSimulateCmd(&streams{}, func(o *simulateOptions) error { got = o; return nil })
			require.NoError(t, parseWith(t, cmd, tc.args...))
			require.NotNil(t, got)
			assert.Equal(t, tc.want, *got)
		})
	}
	for _, args := range [][]string{
		{"--concurrency", "4", "--request-rate", "2"},
		{"--workload", "r.jsonl", "--requests", "10"},
		{"--goodput", "ttft"},
	} {
		called := false
		cmd := newSimulateCmd(&streams{}, func(*simulateOptions) error { called = true; return nil })
		err := parseWith(t, cmd, args...)
		require.Error(t, err, "%v", args)
		assert.Equal(t, ExitInput, exitCodeOf(err), "%v: %v", args, err)
		assert.False(t, called, "%v", args)
	}
}

func TestPlanOptions(t *testing.T) {
	var got *planOptions
	cmd := newPlanCmd(&streams{}, func(o *planOptions) error { got = o; return nil })
	require.NoError(t, parseWith(t, cmd, "p.toml", "--gpus", "h200-sxm,b200-sxm", "--max-gpus", "16", "--ttft-p99", "2s",
		"--tpot-p99", "50ms", "--min-tokens-per-s-per-user", "20", "--target-request-rate", "4", "--disagg", "--format", "json"))
	require.NotNil(t, got)
	assert.Equal(t, "p.toml", got.Scenario)
	assert.Equal(t, formatJSON, got.Format)
	f := got.Set
	assert.Equal(t, planFlags{gpus: "h200-sxm,b200-sxm", maxGPUs: 16, ttft: "2s", tpot: "50ms", perUser: 20, targetRate: 4,
		hasGPUs: true, hasMax: true, hasTTFT: true, hasTPOT: true, hasPerUser: true, hasTarget: true, disagg: true, hasDisagg: true}, f)

	got = nil
	cmd = newPlanCmd(&streams{}, func(o *planOptions) error { got = o; return nil })
	require.NoError(t, parseWith(t, cmd))
	require.NotNil(t, got)
	assert.Equal(t, planFlags{}, got.Set, "no flag given: the scenario's [plan] holds")
}

func TestValidateOptions(t *testing.T) {
	t.Run("trace", func(t *testing.T) {
		var got *validateTraceOptions
		cmd := newValidateTraceCmd(&streams{}, func(o *validateTraceOptions) error { got = o; return nil })
		require.NoError(t, parseWith(t, cmd, "a.json", "b.json.gz", "--scenario", "s.toml", "--calibration", "none", "--step", "step_(?P<batch>\\d+)",
			"--rules", "r.toml", "--batch", "8", "--context", "2048", "--step-kind", "decode", "--prefill-tokens", "100",
			"--strict", "--format", "csv", "--html", "r.html"))
		require.NotNil(t, got)
		assert.Equal(t, validateTraceOptions{Inputs: []string{"a.json", "b.json.gz"}, Scenario: "s.toml", Calibration: "none",
			Step: "step_(?P<batch>\\d+)", Rules: "r.toml", Batch: 8, Context: 2048, StepKind: "decode", Prefill: 100,
			Strict: true, Format: formatCSV, HTML: "r.html"}, *got)
	})
	t.Run("bench", func(t *testing.T) {
		var got *validateBenchOptions
		cmd := newValidateBenchCmd(&streams{}, func(o *validateBenchOptions) error { got = o; return nil })
		require.NoError(t, parseWith(t, cmd, "r.json", "--scenario", "s.toml", "--fail-above", "12.5", "--format", "json"))
		require.NotNil(t, got)
		assert.Equal(t, validateBenchOptions{Inputs: []string{"r.json"}, Scenario: "s.toml", FailAbove: 12.5, Format: formatJSON}, *got)
	})
	t.Run("corpus", func(t *testing.T) {
		var got *validateCorpusOptions
		cmd := newValidateCorpusCmd(&streams{}, func(o *validateCorpusOptions) error { got = o; return nil })
		require.NoError(t, parseWith(t, cmd, "manifest.csv", "--every", "5", "--without", "a,b", "--with", "c", "--markdown", "A.md"))
		require.NotNil(t, got)
		assert.Equal(t, validateCorpusOptions{Corpus: "manifest.csv", Every: 5, Without: []string{"a", "b"}, With: []string{"c"},
			Markdown: "A.md", Format: formatText}, *got)
	})
}

func TestSweepOptions(t *testing.T) {
	var got *sweepOptions
	cmd := newSweepCmd(&streams{}, func(o *sweepOptions) error { got = o; return nil })
	require.NoError(t, parseWith(t, cmd, "s.toml", "--set", "workload.batch=1,2", "--set", "layout.tp=4,8", "--serving", "--format", "csv"))
	require.NotNil(t, got)
	assert.Equal(t, "s.toml", got.Scenario)
	assert.Equal(t, []string{"workload.batch=1,2", "layout.tp=4,8"}, got.Sets)
	assert.True(t, got.Serving)
	assert.Equal(t, formatCSV, got.Format)
}
