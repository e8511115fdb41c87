package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/scenarios"
)

// small keeps the default scenario's simulate goldens fast.
var small = []string{"--concurrency", "1,8", "--requests", "16", "--input-tokens", "512", "--output-tokens", "64"}

// TestSimulateGolden runs simulate on the embedded default (reduced by
// flags) in every format; refresh with
// `go test ./internal/cli -run Simulate -update` and review the diff.
func TestSimulateGolden(t *testing.T) {
	for _, format := range []string{formatText, formatJSON, formatCSV} {
		t.Run(format, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"simulate", "--format", format}, small...)...)
			require.Equal(t, ExitOK, code, "stderr: %s", errs)
			assert.Empty(t, errs)
			golden(t, "simulate_default."+format+".golden", out)
		})
	}
}

// TestSimulateScripts runs each scenario script in testdata/simulate (an
// open loop beyond capacity, SGLang mixed chunks, MTP, preemption, a
// prompt the KV cache cannot hold) and compares its text output.
func TestSimulateScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/simulate/*.toml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".toml")
		t.Run(name, func(t *testing.T) {
			code, out, errs := runCLI(t, "simulate", f)
			require.Equal(t, ExitOK, code, "stderr: %s", errs)
			golden(t, "simulate/"+name+".text.golden", out)
			assert.NotContains(t, out, "NaN")
			assert.NotContains(t, out, "Inf")
		})
	}
}

// TestSimulateDefault: no argument runs the embedded default, with its
// serving workload.
func TestSimulateDefault(t *testing.T) {
	code, out, errs := runCLI(t, append([]string{"simulate"}, small...)...)
	require.Equal(t, ExitOK, code, errs)
	code2, out2, _ := runCLI(t, append([]string{"simulate", scenarios.DefaultName}, small...)...)
	require.Equal(t, ExitOK, code2)
	assert.Equal(t, out2, out)
	sc, err := scenarios.Default()
	require.NoError(t, err)
	assert.NotEmpty(t, sc.Serving.Concurrency, "the default scenario has a serving workload")
	assert.True(t, sc.Given("workload.concurrency"))
}

// TestSimulateJSON checks the JSON contract: exactly the documented keys
// (vllm bench serve's names), no NaN/Inf, and points in the order given
// whatever the parallel schedule.
func TestSimulateJSON(t *testing.T) {
	code, out, errs := runCLI(t, "simulate", "--format", "json", "--concurrency", "8,1,4", "--requests", "16",
		"--input-tokens", "256", "--output-tokens", "32")
	require.Equal(t, ExitOK, code, errs)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, []string{"accuracy", "calibration", "engine", "engine_config", "points", "scenario", "warnings"}, keys(doc))
	var points []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc["points"], &points))
	require.Len(t, points, 3)
	want := []string{"concurrency", "requests", "input_tokens", "output_tokens", "duration_s", "completed",
		"request_throughput", "output_throughput", "total_token_throughput"}
	for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, s := range []string{"mean", "median", "p90", "p99"} {
			want = append(want, s+"_"+m+"_ms")
		}
	}
	want = append(want, "mean_batch", "steps", "mixed_steps", "preemptions", "kv_peak_gb_per_gpu", "breakdown_share",
		"mean_acceptance_length", "interactivity")
	for i, p := range points {
		assert.ElementsMatch(t, want, keys(p))
		var c int
		require.NoError(t, json.Unmarshal(p["concurrency"], &c))
		assert.Equal(t, []int{8, 1, 4}[i], c)
		var share map[string]float64
		require.NoError(t, json.Unmarshal(p["breakdown_share"], &share))
		sum := 0.0
		for _, v := range share {
			sum += v
		}
		assert.InDelta(t, 1, sum, 1e-5)
	}
	var e string
	require.NoError(t, json.Unmarshal(doc["engine"], &e))
	assert.Equal(t, "vllm", e)

	// An open loop has request_rate instead of concurrency.
	code, out, errs = runCLI(t, "simulate", "--format", "json", "--request-rate", "0.5", "--requests", "8",
		"--input-tokens", "256", "--output-tokens", "16")
	require.Equal(t, ExitOK, code, errs)
	var open struct {
		Points []map[string]any `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &open))
	require.Len(t, open.Points, 1)
	assert.Equal(t, 0.5, open.Points[0]["request_rate"])
	assert.NotContains(t, open.Points[0], "concurrency")
}

// TestSimulateDeterministic: the same run twice gives the same bytes.
func TestSimulateDeterministic(t *testing.T) {
	args := []string{"simulate", "--format", "json", "--concurrency", "1,2,4,8", "--requests", "16",
		"--input-tokens", "256", "--output-tokens", "32", "--seed", "5"}
	_, a, _ := runCLI(t, args...)
	_, b, _ := runCLI(t, args...)
	assert.Equal(t, a, b)
}

// TestSimulateBadInput: each bad input gives exit code 2 and one line on
// stderr naming the file, the line and key, and the problem.
func TestSimulateBadInput(t *testing.T) {
	const dir = "testdata/simulate_bad/"
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"concurrency zero", []string{dir + "concurrency-zero.toml"}, []string{dir + "concurrency-zero.toml:21: workload.concurrency: ", "0"}},
		{"both", []string{dir + "both.toml"}, []string{dir + "both.toml:22: workload.request_rate: ", "not both"}},
		{"output zero", []string{dir + "output-zero.toml"}, []string{dir + "output-zero.toml:22: workload.output_tokens: "}},
		{"rate inf", []string{dir + "rate-inf.toml"}, []string{dir + "rate-inf.toml:21: workload.request_rate: ", "finite"}},
		{"rate nan", []string{dir + "rate-nan.toml"}, []string{dir + "rate-nan.toml:21: workload.request_rate: ", "finite"}},
		{"engine", []string{dir + "engine.toml"}, []string{dir + "engine.toml:18: runtime.engine: ", `"tgi"`}},
		{"budget", []string{dir + "budget.toml"}, []string{dir + "budget.toml:18: runtime.max_num_batched_tokens: ", "below max_num_seqs 1024"}},
		{"range", []string{dir + "range.toml"}, []string{dir + "range.toml:22: workload.range_ratio: "}},
		{"concurrency flag zero", []string{"--concurrency", "4,0"}, []string{"--concurrency", "0"}},
		{"concurrency flag text", []string{"--concurrency", "x"}, []string{"--concurrency", `"x"`}},
		{"both flags", []string{"--concurrency", "4", "--request-rate", "2"}, []string{"--concurrency", "--request-rate", "not both"}},
		{"rate flag inf", []string{"--request-rate", "inf"}, []string{"--request-rate", "finite"}},
		{"rate flag nan", []string{"--request-rate", "NaN"}, []string{"--request-rate", "finite"}},
		{"rate flag negative", []string{"--request-rate", "-1"}, []string{"--request-rate", "positive"}},
		{"output flag zero", []string{"--output-tokens", "0"}, []string{"--output-tokens"}},
		{"input flag huge", []string{"--input-tokens", "9223372036854775807"}, []string{"--input-tokens", "exceeds"}},
		{"requests negative", []string{"--requests", "-3"}, []string{"--requests"}},
		{"bad format", []string{"--format", "yaml"}, []string{"--format"}},
		{"missing file", []string{dir + "nope.toml"}, []string{"nope.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"simulate"}, tt.args...)...)
			assert.Equal(t, ExitInput, code, "stdout %q stderr %q", out, errs)
			assert.Empty(t, out)
			lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
			require.Len(t, lines, 1, "one line on stderr: %q", errs)
			assert.True(t, strings.HasPrefix(lines[0], "moecast: "), lines[0])
			for _, w := range tt.want {
				assert.Contains(t, lines[0], w)
			}
		})
	}
}

// TestProgressOn: the progress line goes only to a terminal (or where
// forced); a buffer or a regular file gets none.
func TestProgressOn(t *testing.T) {
	var b strings.Builder
	assert.Nil(t, progressOn(&b, nil))
	on, off := true, false
	assert.Equal(t, &b, progressOn(&b, &on))
	assert.Nil(t, progressOn(&b, &off))
	f, err := os.Create(filepath.Join(t.TempDir(), "err"))
	require.NoError(t, err)
	defer f.Close()
	assert.Nil(t, progressOn(f, nil), "a regular file is not a terminal")
}

// TestSimulateCalibration: --calibration replaces the scenario's sources
// as predict's does: "none" prices every op with the roofline, the perf
// database's h200-sxm file alone gives other step times than the
// embedded calibration (calib gpu's tables stacked on it), and a bad
// source is one line, exit 2.
func TestSimulateCalibration(t *testing.T) {
	args := []string{"simulate", "kimi-k2.5-h200-nvlink-tp8", "--concurrency", "4", "--requests", "8",
		"--input-tokens", "256", "--output-tokens", "32", "--format", "json"}
	tpot := func(cal string) (float64, []string) {
		a := args
		if cal != "" {
			a = append(append([]string{}, args...), "--calibration", cal)
		}
		code, out, errs := runCLI(t, a...)
		require.Equal(t, ExitOK, code, errs)
		var got struct {
			Calibration []string `json:"calibration"`
			Points      []struct {
				MeanTPOTMs float64 `json:"mean_tpot_ms"`
			} `json:"points"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.Len(t, got.Points, 1)
		return got.Points[0].MeanTPOTMs, got.Calibration
	}
	def, defCal := tpot("")
	emb, embCal := tpot("embedded")
	assert.Equal(t, def, emb, "the scenario's calibration is embedded")
	assert.Equal(t, defCal, embCal)
	perfdb, perfdbCal := tpot("../../../../calib/embedded/h200-sxm.toml.zst")
	assert.Equal(t, []string{"../../../../calib/embedded/h200-sxm.toml.zst"}, perfdbCal)
	none, noneCal := tpot("none")
	assert.Empty(t, noneCal)
	assert.NotEqual(t, def, perfdb)
	assert.NotEqual(t, def, none)
	assert.Greater(t, def, 0.0)

	code, _, errs := runCLI(t, "simulate", "kimi-k2.5-h200-nvlink-tp8", "--calibration", "nosuch.toml")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, errs, "nosuch.toml")
	assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
}
