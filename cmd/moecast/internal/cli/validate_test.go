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

const gptOssScenario = "../../../../validate/testdata/gpt-oss-20b-mi300x-tp1.toml"

// The vLLM FULL-graph decode trace of gpt-oss-20b on MI300X against the
// roofline: text, reviewed in the golden.
func TestValidateTraceText(t *testing.T) {
	code, out, errOut := runCLI(t, "validate", "trace", traceData+"tracelens_vllm_decode_full_graph_execution.json.gz", "--scenario", gptOssScenario)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "batch 32  context 1721")
	assert.Contains(t, out, "worst category moe")
	golden(t, "validate_trace_vllm_gptoss.txt", out)
}

// The JSON contract of issue 11: exactly these keys at each level (ops'
// fields as listed; steps and summary may carry more).
func TestValidateTraceJSONContract(t *testing.T) {
	code, out, errOut := runCLI(t, "validate", "trace", "--format", "json", "--context", "2048",
		traceData+"tracelens_vllm_decode_full_graph_execution.json.gz", "--scenario", gptOssScenario)
	require.Equal(t, ExitOK, code, errOut)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &top))
	for _, k := range []string{"scenario", "trace", "steps", "summary"} {
		assert.Contains(t, top, k)
	}
	var steps []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(top["steps"], &steps))
	require.Len(t, steps, 1)
	for _, k := range []string{"rank", "index", "batch", "measured_ms", "predicted_ms", "error_pct", "categories", "ops"} {
		assert.Contains(t, steps[0], k)
	}
	assert.JSONEq(t, "2048", string(steps[0]["context"]))
	var cats map[string]map[string]float64
	require.NoError(t, json.Unmarshal(steps[0]["categories"], &cats))
	assert.Contains(t, cats["moe"], "measured_ms")
	assert.Contains(t, cats["moe"], "predicted_ms")
	var ops []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(steps[0]["ops"], &ops))
	require.NotEmpty(t, ops)
	assert.Equal(t, []string{"category", "count", "measured_us", "op", "predicted_count", "predicted_us", "source"}, traceKeys(ops[0]))
	var sum map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(top["summary"], &sum))
	assert.Contains(t, sum, "median_error_pct")
	assert.JSONEq(t, `"moe"`, string(sum["worst_category"]))
}

func TestValidateTraceCSV(t *testing.T) {
	code, out, errOut := runCLI(t, "validate", "trace", "--format", "csv", traceData+"tracelens_vllm_decode_full_graph_execution.json.gz", "--scenario", gptOssScenario)
	require.Equal(t, ExitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Equal(t, "file,rank,index,batch,kind,name,category,count,predicted_count,measured_us,predicted_us,measured_ms,predicted_ms,source", lines[0])
	assert.Contains(t, out, ",op,lm_head,gemm,1,1,")
}

// Bad input: one line naming the file and what is wrong, exit 2.
func TestValidateTraceBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"another model", []string{traceData + "tracelens_sglang_Qwen3-8B_decode.json.gz", "--scenario", gptOssScenario},
			"tracelens_sglang_Qwen3-8B_decode.json.gz: the scenario's model"},
		{"layer count", []string{traceData + "tracelens_vllm_decode_full_graph_execution.json.gz", "--scenario", "gpt-oss-120b-h200-tp1"},
			"has 36 layers (36 MoE) but the step's longest per-layer kernel"},
		{"no decode step", []string{traceData + "tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz", "--scenario", gptOssScenario, "--step-kind", "decode"},
			"no decode step found"},
		{"bad step kind", []string{traceData + "tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz", "--scenario", gptOssScenario, "--step-kind", "verify"},
			`--step-kind "verify": want prefill, mixed, decode or all`},
		{"negative prefill tokens", []string{traceData + "tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz", "--scenario", gptOssScenario, "--prefill-tokens", "-1"},
			"--prefill-tokens: want positive values"},
		{"no scenario", []string{traceData + "tracelens_vllm_decode_full_graph_execution.json.gz"}, "--scenario: required"},
		{"missing file", []string{"nonexistent.json.gz", "--scenario", gptOssScenario}, "nonexistent.json.gz"},
		{"not a trace", []string{"../../../../validate/testdata/gpt-oss-20b_config.json", "--scenario", gptOssScenario}, "gpt-oss-20b_config.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"validate", "trace"}, tc.args...)...)
			assert.Equal(t, ExitInput, code, "stdout %s stderr %s", out, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errOut), "\n")+1, "one line: %q", errOut)
		})
	}
}

// A directory stands for its traces; a JSON file in it that has no steps
// (vLLM's execution_details.json) is skipped with a warning.
func TestValidateTraceDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{traceData + "tracelens_vllm_decode_full_graph_execution.json.gz"} {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "execution_details.json"), []byte(`{"file": "x", "batch_size": 32, "mode": "FULL"}`), 0o644))
	code, out, errOut := runCLI(t, "validate", "trace", dir, "--scenario", gptOssScenario)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, errOut, "warning: skipped (")
	assert.Contains(t, out, "summary  1 steps")
}

// The TraceLens vLLM mixed step (9 prefill requests, 8155 new tokens on
// 275 cached, 37 decodes) against the roofline: text, reviewed in the
// golden; JSON states the mix.
func TestValidateTraceMixedStep(t *testing.T) {
	tr := traceData + "tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz"
	code, out, errOut := runCLI(t, "validate", "trace", tr, "--scenario", gptOssScenario)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "mixed step: 9 prefill requests, 8155 new tokens on 275 cached; 37 decodes; 8192 tokens in all")
	golden(t, "validate_trace_vllm_mixed.txt", out)

	code, out, errOut = runCLI(t, "validate", "trace", tr, "--scenario", gptOssScenario, "--format", "json", "--step-kind", "mixed")
	require.Equal(t, ExitOK, code, errOut)
	var rep view.ValidateJSON
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Steps, 1)
	st := rep.Steps[0]
	assert.Equal(t, "mixed", st.Kind)
	assert.Equal(t, [5]int{9, 8155, 275, 37, 8192}, [5]int{st.Prefills, st.PrefillToks, st.Prefix, st.Decodes, st.Tokens})
	assert.InDelta(t, 0.565, st.UnmappedMs, 0.001)
	assert.Zero(t, st.LaunchMs, "an eager 8192-token step: the host issues its launches ahead of the GPU, hidden behind its GPU time (launch-ahead)")
	// the mixed step's attention pool shows the prediction's two parts
	var parts []view.ValidatePartJSON
	for _, o := range st.Ops {
		if o.Category == "attention" {
			parts = o.Parts
		} else {
			assert.Empty(t, o.Parts, o.Op)
		}
	}
	require.Len(t, parts, 2)
	assert.Equal(t, [2]string{"gqa decode attention", "gqa prefill attention"}, [2]string{parts[0].Op, parts[1].Op})
	assert.Contains(t, parts[1].Shape, "9 chunks, 8155 tokens")
	assert.InDelta(t, 3.041, parts[1].PredictedMs, 0.001)
}

// calib from-trace over two prefill sizes of the tinymoe traces, then
// validate trace on the third size with the written tables: within 5%.
func TestCalibFromTracePrefillSizes(t *testing.T) {
	scen := "../../../../validate/testdata/tiny-moe-h200.toml"
	out := filepath.Join(t.TempDir(), "tiny.toml")
	code, stdout, errOut := runCLI(t, "calib", "from-trace", traceData+"tinymoe_prefill_1024.json.gz", traceData+"tinymoe_prefill_4096.json.gz",
		"--scenario", scen, "-o", out)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, stdout, "from 4 steps (4 prefill, 0 mixed, 0 decode) of 2 trace files")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	for _, tb := range []string{`op = "prefill"`, `prefix`, `op = "unmapped"`, `op = "moe"`, `op = "gemm"`} {
		assert.Contains(t, string(data), tb)
	}
	code, stdout, errOut = runCLI(t, "validate", "trace", traceData+"tinymoe_prefill_2048.json.gz", "--scenario", scen,
		"--calibration", out, "--format", "json")
	require.Equal(t, ExitOK, code, errOut)
	var rep view.ValidateJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	for _, st := range rep.Steps {
		assert.InDelta(t, 0, st.ErrorPct, 5, "step %d: measured %.3f ms, predicted %.3f ms", st.Index, st.MeasuredMs, st.PredictedMs)
	}
}
