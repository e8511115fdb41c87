package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report/view"
)

const benchFixtures = "../../../../validate/testdata/bench/"

func TestValidateBenchText(t *testing.T) {
	code, stdout, stderr := runCLI(t, "validate", "bench", benchFixtures+"vllm-c16.json", benchFixtures+"sglang-rates.jsonl",
		"--scenario", "kimi-k2.5-h200-nvlink-tp8")
	require.Equal(t, ExitOK, code, stderr)
	golden(t, "validate_bench.txt", stdout+"--- stderr\n"+stderr)
	assert.Contains(t, stderr, `backend "sglang" but the scenario simulates engine vllm`)

	// On a box that cannot keep up with the fixture's 4 req/s (the PCIe
	// RTX PRO 6000 scenario), the run is said to be beyond capacity.
	code, _, stderr = runCLI(t, "validate", "bench", benchFixtures+"sglang-rates.jsonl", "--scenario", "kimi-k2.5-rtx-pro-6000-pcie-tp8")
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stderr, "sglang-rates.jsonl:3: request rate 4/s is beyond capacity")
	assert.NotContains(t, stderr, "sglang-rates.jsonl:1: request rate", "a closed-loop run has no request rate")
}

func TestValidateBenchJSON(t *testing.T) {
	code, stdout, stderr := runCLI(t, "validate", "bench", benchFixtures+"vllm-c16.json", "--scenario", "kimi-k2.5-h200-nvlink-tp8", "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var got view.BenchJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Len(t, got.Results, 1)
	r := got.Results[0]
	assert.Equal(t, 16, r.Concurrency)
	assert.Equal(t, 160, r.Requests, "num_prompts")
	assert.Equal(t, 1024, r.InputTokens)
	require.NotEmpty(t, r.Rows)
	assert.Equal(t, "ttft", r.Rows[0].Metric)
	assert.Equal(t, "mean", r.Rows[0].Stat)
	require.NotNil(t, r.Rows[0].Measured)
	assert.InDelta(t, 412.5, *r.Rows[0].Measured, 1e-9)
	require.NotNil(t, r.WorstMeanErrorPct)

	// --fail-above: exit 1 above the worst error, 0 at a looser bound.
	worst := *r.WorstMeanErrorPct
	if worst < 0 {
		worst = -worst
	}
	code, _, stderr = runCLI(t, "validate", "bench", benchFixtures+"vllm-c16.json", "--scenario", "kimi-k2.5-h200-nvlink-tp8",
		"--fail-above", strings.TrimRight(strings.TrimRight(jsonNum(worst*0.5), "0"), "."))
	assert.Equal(t, ExitFailure, code)
	assert.Contains(t, stderr, "more than --fail-above")
	code, _, stderr = runCLI(t, "validate", "bench", benchFixtures+"vllm-c16.json", "--scenario", "kimi-k2.5-h200-nvlink-tp8",
		"--fail-above", jsonNum(worst*2))
	assert.Equal(t, ExitOK, code, stderr)
}

func jsonNum(x float64) string { b, _ := json.Marshal(x); return string(b) }

func TestValidateBenchBadInput(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.json")
	require.NoError(t, os.WriteFile(trace, []byte(`{"traceEvents": []}`), 0o644))
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, []byte("\n\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no scenario", []string{benchFixtures + "vllm-c16.json"}, "validate bench: --scenario is required"},
		{"a trace", []string{trace, "--scenario", "kimi-k2.5-h200-nvlink-tp8"}, trace + ": not a result file of a known format; looked for: "},
		{"blank lines only", []string{empty, "--scenario", "kimi-k2.5-h200-nvlink-tp8"}, empty + ": empty file"},
		{"a directory", []string{dir, "--scenario", "kimi-k2.5-h200-nvlink-tp8"}, dir + ": "},
		{"missing file", []string{filepath.Join(dir, "nope.json"), "--scenario", "kimi-k2.5-h200-nvlink-tp8"}, "nope.json: no such file or directory"},
		{"bad fail-above", []string{benchFixtures + "vllm-c16.json", "--scenario", "kimi-k2.5-h200-nvlink-tp8", "--fail-above", "-3"}, "--fail-above: want a percentage >= 0"},
		{"unknown scenario", []string{benchFixtures + "vllm-c16.json", "--scenario", "no-such-scenario"}, "a shipped scenario"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"validate", "bench"}, tc.args...)...)
			assert.Equal(t, ExitInput, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}

// TestValidateBenchWarningOrder: on one stream, the text report comes
// before its warnings (report.Views.WarnAfter), a CSV table after them,
// and JSON writes none to stderr.
func TestValidateBenchWarningOrder(t *testing.T) {
	args := []string{"validate", "bench", benchFixtures + "vllm-c16.json", benchFixtures + "sglang-rates.jsonl",
		"--scenario", "kimi-k2.5-h200-nvlink-tp8"}
	run := func(format string) (string, string) {
		var both, errw strings.Builder
		code := RunIO(append(args, "--format", format), strings.NewReader(""), &both, &both)
		require.Equal(t, ExitOK, code, both.String())
		require.Equal(t, ExitOK, RunIO(append(args, "--format", format), strings.NewReader(""), io.Discard, &errw))
		return both.String(), errw.String()
	}
	text, warns := run("text")
	require.NotEmpty(t, warns)
	assert.True(t, strings.HasPrefix(text, "scenario  kimi-k2.5-h200-nvlink-tp8\n"), text)
	assert.True(t, strings.HasSuffix(text, warns), "text: the warnings last")
	csv, warns := run("csv")
	assert.True(t, strings.HasPrefix(csv, warns), "csv: the warnings first")
	assert.True(t, strings.HasPrefix(csv[len(warns):], "file,line,metric"), csv)
	js, warns := run("json")
	assert.Empty(t, warns)
	assert.True(t, strings.HasPrefix(js, "{"), js)
}
