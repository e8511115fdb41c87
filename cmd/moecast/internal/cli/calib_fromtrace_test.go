package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report/view"
)

// calib from-trace, then validate with the written file: the tables answer
// their ops (table sources), the calibrated categories match the trace.
func TestCalibFromTraceRoundTrip(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gptoss.toml")
	tr := traceData + "tracelens_vllm_decode_full_graph_execution.json.gz"
	code, stdout, errOut := runCLI(t, "calib", "from-trace", tr, "--scenario", gptOssScenario, "-o", out)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, stdout, "wrote "+out+": 5 tables, 12 rows")
	assert.Contains(t, stdout, "from 1 steps (0 prefill, 0 mixed, 1 decode) of 1 trace files")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), `engine = "vllm"`)
	assert.Contains(t, string(data), `gpu = "mi300x"`)

	code, stdout, errOut = runCLI(t, "validate", "trace", tr, "--scenario", gptOssScenario, "--calibration", out, "--format", "json")
	require.Equal(t, ExitOK, code, errOut)
	var rep view.ValidateJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	cats := rep.Steps[0].Categories
	for _, c := range []string{"gemm", "moe", "attention"} {
		assert.InDelta(t, cats[c].MeasuredMs, cats[c].PredictedMs, 0.05*cats[c].MeasuredMs, c)
	}
	for _, o := range rep.Steps[0].Ops {
		if o.Category == "gemm" || o.Category == "elementwise" || o.Op == "fused_moe (routed experts)" || o.Op == "router top-k" {
			assert.True(t, strings.HasPrefix(o.Source, "table "+out+"#"), "%s: %s", o.Op, o.Source)
		}
	}
}

func TestCalibFromTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	tr := traceData + "tracelens_vllm_decode_full_graph_execution.json.gz"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no -o", []string{tr, "--scenario", gptOssScenario}, "-o OUT is required"},
		{"-o a directory", []string{tr, "--scenario", gptOssScenario, "-o", dir}, "is a directory"},
		{"-o the input", []string{tr, "--scenario", gptOssScenario, "-o", tr}, "is one of the inputs"},
		{"another model", []string{traceData + "tracelens_sglang_Qwen3-8B_decode.json.gz", "--scenario", gptOssScenario, "-o", filepath.Join(dir, "x.toml")},
			"a trace of another model?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"calib", "from-trace"}, tc.args...)...)
			assert.Equal(t, ExitInput, code, errOut)
			assert.Contains(t, errOut, tc.want)
		})
	}
	_, err := os.Stat(filepath.Join(dir, "x.toml"))
	assert.True(t, os.IsNotExist(err), "nothing written on error")
}
