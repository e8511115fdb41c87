package cli

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/model"
)

// The options of the listing, inspection, trace and calib commands,
// captured through runF as TestPredictOptions does: no computation runs.

// captured builds a command with a runF that keeps the options it is given.
func captured[T any](t *testing.T, mk func(*streams, func(*T) error) *cobra.Command, args ...string) *T {
	t.Helper()
	var got *T
	cmd := mk(&streams{}, func(o *T) error { got = o; return nil })
	require.NoError(t, parseWith(t, cmd, args...))
	require.NotNil(t, got, "runF was not called")
	return got
}

func TestListOptions(t *testing.T) {
	assert.Equal(t, modelsOptions{Format: formatText}, *captured(t, newModelsCmd))
	assert.Equal(t, modelsOptions{Format: formatCSV}, *captured(t, newModelsCmd, "--format", "csv"))
	assert.Equal(t, gpusOptions{Format: formatText}, *captured(t, newGPUsCmd))
	assert.Equal(t, gpusOptions{Format: formatJSON}, *captured(t, newGPUsCmd, "--format", "json"))
	assert.Equal(t, gpuInfoOptions{Format: formatText}, *captured(t, newGPUInfoCmd))
	assert.Equal(t, gpuInfoOptions{Format: formatJSON}, *captured(t, newGPUInfoCmd, "--format", "json"))
}

func TestModelShowOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want modelShowOptions
	}{
		{"defaults", []string{"kimi-k2.5"},
			modelShowOptions{Model: "kimi-k2.5", Layout: model.Layout{TP: 1, EP: 1, DP: 1}, Format: formatText}},
		{"every flag", []string{"config.json", "--tp", "8", "--ep", "8", "--dp", "2", "--dp-attention", "--format", "json"},
			modelShowOptions{Model: "config.json", Layout: model.Layout{TP: 8, EP: 8, DP: 2, DPAttention: true}, Format: formatJSON}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, *captured(t, newModelShowCmd, tc.args...))
		})
	}
	t.Run("no model never reaches the run function", func(t *testing.T) {
		called := false
		err := parseWith(t, newModelShowCmd(&streams{}, func(*modelShowOptions) error { called = true; return nil }))
		require.Error(t, err)
		assert.False(t, called)
	})
}

func TestTraceOptions(t *testing.T) {
	assert.Equal(t, traceSummaryOptions{Inputs: []string{"a.json.gz", "dir"}, Gap: "1ms", Format: formatText},
		*captured(t, newTraceSummaryCmd, "a.json.gz", "dir"))
	assert.Equal(t, traceSummaryOptions{Inputs: []string{"a.json"}, Kind: "decode", Step: "step.*", Rules: "r.toml",
		Gap: "2ms", Format: formatCSV, Strict: true},
		*captured(t, newTraceSummaryCmd, "a.json", "--kind", "decode", "--step", "step.*", "--rules", "r.toml",
			"--gap", "2ms", "--format", "csv", "--strict"))
	assert.Equal(t, traceKernelsOptions{File: "a.json", Top: 30, Format: formatText}, *captured(t, newTraceKernelsCmd, "a.json"))
	assert.Equal(t, traceKernelsOptions{File: "a.json", Top: 0, Rules: "r.toml", Format: formatJSON},
		*captured(t, newTraceKernelsCmd, "a.json", "--top", "0", "--rules", "r.toml", "--format", "json"))
}

func TestCalibOptions(t *testing.T) {
	assert.Equal(t, ncclImportOptions{Files: []string{"ar.txt", "ag.txt"}, GPU: "h200-sxm", Fabric: "nvlink4", Date: "2026-01-02", Out: "c.toml"},
		*captured(t, newCalibImportNCCLCmd, "ar.txt", "ag.txt", "--gpu", "h200-sxm", "--fabric", "nvlink4", "--date", "2026-01-02", "-o", "c.toml"))
	assert.Equal(t, perfdbImportOptions{Dir: "systems", Source: perfdbSource, License: perfdbLicense, Date: perfdbDate, Out: "-"},
		*captured(t, newCalibImportPerfDBCmd, "systems", "-o", "-"))
	assert.Equal(t, perfdbImportOptions{Dir: "d", GPU: "b200-sxm", L2: "60MiB", Source: "s", License: "l", Date: "2026-02-03", Out: "o.toml"},
		*captured(t, newCalibImportPerfDBCmd, "d", "--gpu", "b200-sxm", "--l2", "60MiB", "--source", "s", "--license", "l",
			"--date", "2026-02-03", "--output", "o.toml"))
	assert.Equal(t, calibShowOptions{Ref: "embedded:h200-sxm"}, *captured(t, newCalibShowCmd, "embedded:h200-sxm"))
	assert.Equal(t, calibFromTraceOptions{Inputs: []string{"t.json.gz"}, Scenario: "s.toml", StepKind: "all", Out: "c.toml"},
		*captured(t, newCalibFromTraceCmd, "t.json.gz", "--scenario", "s.toml", "-o", "c.toml"))
	assert.Equal(t, calibFromTraceOptions{Inputs: []string{"a", "b"}, Scenario: "s", Step: "x", Rules: "r", Batch: 8, Context: 1024,
		StepKind: "decode", Prefill: 512, Date: "2026-03-04", Out: "o", Strict: true},
		*captured(t, newCalibFromTraceCmd, "a", "b", "--scenario", "s", "--step", "x", "--rules", "r", "--batch", "8",
			"--context", "1024", "--step-kind", "decode", "--prefill-tokens", "512", "--date", "2026-03-04", "-o", "o", "--strict"))

	got := captured(t, newCalibGPUCmd, "--out", "h.toml")
	assert.Equal(t, calibGPUOptions{GPUs: 1, Out: "h.toml", CommTimeout: time.Minute}, *got)
	got = captured(t, newCalibGPUCmd, "--quick", "--ops", "copy,comm", "--gpus", "8", "--gpu", "h200-sxm", "--date", "2026-12-01",
		"--output", "dir/h.toml", "--fabric", "nvlink4", "--comm-timeout", "30s")
	assert.Equal(t, calibGPUOptions{Quick: true, Ops: []string{"copy", "comm"}, GPUs: 8, GPU: "h200-sxm", Date: "2026-12-01",
		Out: "dir/h.toml", Fabric: "nvlink4", CommTimeout: 30 * time.Second}, *got)
	assert.Equal(t, "moecast calib gpu --quick --ops copy,comm --gpu h200-sxm --date 2026-12-01 --gpus 8 --fabric nvlink4 --out h.toml",
		got.command())
}
