package cli

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report"
)

const traceData = "../../../../trace/testdata/"

// Text summary of the vLLM FULL-graph decode trace: one decode step of batch
// 32 (10.743 ms); moe (triton matmul_ogs) is 72.5% of it. Reviewed against
// trace/testdata/golden/vllm_decode_full_graph.txt.
func TestTraceSummaryText(t *testing.T) {
	code, out, errOut := runCLI(t, "trace", "summary", traceData+"tracelens_vllm_decode_full_graph_execution.json.gz")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "moe 73% of the step on rank 0")
	golden(t, "trace_summary_vllm_decode.txt", out)
}

// Two files: one block per rank, and the spread of collective time.
func TestTraceSummaryTwoFiles(t *testing.T) {
	code, out, errOut := runCLI(t, "trace", "summary",
		traceData+"hta_nccl_parser_config_nccl_data.json.gz", traceData+"tracelens_b200_vllm_gptoss_eager_trace.json.gz")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "collective time per step over ranks")
	golden(t, "trace_summary_two_files.txt", out)
}

// The JSON contract: exactly these keys at each level.
func TestTraceSummaryJSONContract(t *testing.T) {
	code, out, errOut := runCLI(t, "trace", "summary", "--format", "json", traceData+"tracelens_sglang_Qwen3-8B_decode.json.gz")
	require.Equal(t, ExitOK, code, errOut)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &top))
	assert.Equal(t, []string{"files", "ranks", "unclassified", "warnings"}, traceKeys(top))
	var ranks []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(top["ranks"], &ranks))
	require.Len(t, ranks, 1)
	assert.Equal(t, []string{"file", "rank", "steps", "summary"}, traceKeys(ranks[0]))
	var steps []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(ranks[0]["steps"], &steps))
	require.Len(t, steps, 1)
	assert.Equal(t, []string{"batch", "busy_ms", "by_category_ms", "exposed_ms", "idle_ms", "index", "kind", "label", "wall_ms"}, traceKeys(steps[0]))
	assert.JSONEq(t, "32", string(steps[0]["batch"]))
	assert.JSONEq(t, `"decode"`, string(steps[0]["kind"]))
	var sum map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(ranks[0]["summary"], &sum))
	assert.Equal(t, []string{"by_category_ms", "median_step_ms", "p10_step_ms", "p90_step_ms", "share", "steps"}, traceKeys(sum))
	golden(t, "trace_summary_sglang.json", out)
}

func traceKeys[V any](m map[string]V) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func TestTraceSummaryCSV(t *testing.T) {
	code, out, errOut := runCLI(t, "trace", "summary", "--format", "csv", traceData+"hta_nccl_parser_config_nccl_data.json.gz")
	require.Equal(t, ExitOK, code, errOut)
	golden(t, "trace_summary_hta.csv", out)
}

// A directory of per-rank files is read as ranks, numbered from the file
// names when the traces carry no distributedInfo.
func TestTraceSummaryDirectory(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(traceData + "tracelens_vllm_decode_full_graph_execution.json.gz")
	require.NoError(t, err)
	for _, n := range []string{"dp0_pp0_tp0_dcp0_ep0_rank0.1.pt.trace.json.gz", "dp0_pp0_tp1_dcp0_ep0_rank1.1.pt.trace.json.gz"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), src, 0o644))
	}
	code, out, errOut := runCLI(t, "trace", "summary", "--format", "json", dir)
	require.Equal(t, ExitOK, code, errOut)
	var rep report.TraceSummary
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Ranks, 2)
	// These traces carry distributedInfo rank 0 (world size 1): that wins over the name.
	assert.Equal(t, 0, rep.Ranks[0].Rank)
	assert.Len(t, rep.Files, 2)

	// a JSON file in the directory that is not a trace is skipped with a warning
	require.NoError(t, os.WriteFile(filepath.Join(dir, "execution_details.json"), []byte(`{"batch_size": 32}`), 0o644))
	code, out, errOut = runCLI(t, "trace", "summary", "--format", "json", dir)
	require.Equal(t, ExitOK, code, errOut)
	rep = report.TraceSummary{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Len(t, rep.Ranks, 2)
	require.NotEmpty(t, rep.Warnings)
	assert.Contains(t, rep.Warnings[0], "execution_details.json")
	code, _, errOut = runCLI(t, "trace", "summary", "--strict", dir)
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, errOut, "execution_details.json")
}

func TestTraceKernels(t *testing.T) {
	code, out, errOut := runCLI(t, "trace", "kernels", "--top", "6", traceData+"hta_nccl_parser_config_nccl_data.json.gz")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "allreduce 6637568 Float x2")
	golden(t, "trace_kernels_hta.txt", out)

	code, out, errOut = runCLI(t, "trace", "kernels", "--top", "3", "--format", "json", traceData+"tracelens_b200_vllm_gptoss_eager_trace.json.gz")
	require.Equal(t, ExitOK, code, errOut)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 3)
	assert.Equal(t, "moe", rows[0]["category"])
	assert.Contains(t, rows[1]["kernel"], "multimem_all_reduce_kernel")
}

func TestTraceRulesFlag(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "r.toml")
	require.NoError(t, os.WriteFile(rules, []byte("[[rule]]\nmatch = \"_matmul_ogs_\"\ncategory = \"gemm\"\nop = \"mine\"\n"), 0o644))
	code, out, errOut := runCLI(t, "trace", "kernels", "--top", "1", "--rules", rules, traceData+"tracelens_vllm_decode_full_graph_execution.json.gz")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "gemm")
	assert.Contains(t, out, "mine")

	bad := filepath.Join(t.TempDir(), "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("\n[[rule]]\nmatch = \"x\"\ncategory = \"conv\"\n"), 0o644))
	code, _, errOut = runCLI(t, "trace", "summary", "--rules", bad, traceData+"tracelens_vllm_decode_full_graph_execution.json.gz")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, errOut, bad+":2: rule 1: unknown category \"conv\"")
}

func TestTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	notTrace := filepath.Join(dir, "x.json")
	require.NoError(t, os.WriteFile(notTrace, []byte(`{"a": 1}`), 0o644))
	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, []byte(`{"traceEvents": []}`), 0o644))

	// a trace cut at 90%: ProfilerStep#4 and #5 are complete before the cut
	f, err := os.Open(traceData + "hta_nccl_parser_config_nccl_data.json.gz")
	require.NoError(t, err)
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	f.Close()
	cut := filepath.Join(dir, "cut.json")
	require.NoError(t, os.WriteFile(cut, data[:len(data)*9/10], 0o644))

	tests := []struct {
		name    string
		args    []string
		code    int
		errPart string
	}{
		{"missing file", []string{"trace", "summary", filepath.Join(dir, "nope.json")}, ExitInput, "no such file"},
		{"not a trace", []string{"trace", "summary", notTrace}, ExitInput, "no traceEvents"},
		{"no kernels", []string{"trace", "summary", empty}, ExitInput, "no kernel events"},
		{"bad kind", []string{"trace", "summary", "--kind", "training", empty}, ExitInput, "--kind"},
		{"bad step regex", []string{"trace", "summary", "--step", "(", empty}, ExitInput, "--step"},
		{"bad format", []string{"trace", "summary", "--format", "xml", empty}, ExitInput, "--format"},
		{"bad gap", []string{"trace", "summary", "--gap", "soon", empty}, ExitInput, "--gap"},
		{"no steps of kind", []string{"trace", "summary", "--kind", "prefill", traceData + "tracelens_vllm_decode_full_graph_execution.json.gz"}, ExitInput, "no prefill steps"},
		{"cut strict", []string{"trace", "summary", "--strict", cut}, ExitInput, "cut.json"},
		{"cut", []string{"trace", "summary", cut}, ExitOK, "partly broken trace"},
		{"kernels no args", []string{"trace", "kernels"}, ExitInput, "accepts 1 arg"},
		{"kernels bad top", []string{"trace", "kernels", "--top", "-1", empty}, ExitInput, "--top"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			assert.Equal(t, tt.code, code, errOut)
			assert.Contains(t, errOut, tt.errPart)
		})
	}
}
