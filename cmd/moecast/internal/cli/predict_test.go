package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
)

// TestPredictGolden runs predict on every shipped scenario in text and
// JSON; refresh with `go test ./internal/cli -run PredictGolden -update`
// and review the diff.
func TestPredictGolden(t *testing.T) {
	for _, name := range scenarios.Names() {
		for _, format := range []string{formatText, formatJSON} {
			t.Run(name+"/"+format, func(t *testing.T) {
				code, out, errs := runCLI(t, "predict", name, "--format", format)
				require.Equal(t, ExitOK, code, "stderr: %s", errs)
				assert.Empty(t, errs)
				golden(t, "predict_"+name+"."+format+".golden", out)
			})
		}
		// Calibration off: the roofline alone.
		t.Run(name+"/nocalib", func(t *testing.T) {
			code, out, errs := runCLI(t, "predict", name, "--calibration", "none")
			require.Equal(t, ExitOK, code, "stderr: %s", errs)
			assert.Contains(t, out, "calib     none (roofline only)")
			assert.NotContains(t, out, "warning: calibration")
			golden(t, "predict_"+name+".nocalib.text.golden", out)
		})
	}
}

func TestPredictDefault(t *testing.T) {
	code, out, errs := runCLI(t, "predict")
	require.Equal(t, ExitOK, code, errs)
	code2, out2, _ := runCLI(t, "predict", scenarios.DefaultName)
	require.Equal(t, ExitOK, code2)
	assert.Equal(t, out2, out, "no argument runs the embedded default")
	assert.True(t, strings.HasPrefix(out, "scenario  Kimi-K2.5 INT4 on 8x RTX PRO 6000 (PCIe), vLLM TP8 EP8"), out)

	code, out, errs = runCLI(t, "predict", "--format", "csv", "--batch", "1,64")
	require.Equal(t, ExitOK, code, errs)
	golden(t, "predict_default.csv.golden", out)
}

// TestPredictJSON checks the JSON contract: exactly the documented keys,
// step_ms equal to the sum of breakdown_ms, the interval around it, and
// the flags --batch and --context honoured.
func TestPredictJSON(t *testing.T) {
	code, out, errs := runCLI(t, "predict", "--format", "json", "--batch", "1,8,64", "--context", "4096")
	require.Equal(t, ExitOK, code, errs)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, []string{"accuracy", "calibration", "points", "scenario", "warnings"}, keys(doc))
	var pr view.PredictJSON
	require.NoError(t, json.Unmarshal([]byte(out), &pr))
	require.Len(t, pr.Points, 3)
	var points []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc["points"], &points))
	assert.Equal(t, []string{"batch", "breakdown_ms", "context", "fits", "memory", "sources", "step_ms", "step_ms_hi",
		"step_ms_lo", "tokens_per_s", "tokens_per_s_per_user", "tokens_per_step", "tpot_ms"}, keys(points[0]))
	for i, p := range pr.Points {
		assert.Equal(t, []int{1, 8, 64}[i], p.Batch)
		assert.Equal(t, 4096, p.Context)
		var sum float64
		for c := cost.Category(0); c < cost.NumCategories; c++ {
			if c != cost.Idle {
				assert.Contains(t, p.BreakdownMs, c.String(), "every category is listed")
			}
		}
		for c, ms := range p.BreakdownMs {
			sum += ms
			if ms > 0 {
				assert.NotEmpty(t, p.Sources[c], "category %s has time but no source", c)
			}
		}
		assert.InDelta(t, p.StepMs, sum, 1e-5, "batch %d: step_ms is the sum of breakdown_ms (each rounded to 1e-6 ms)", p.Batch)
		assert.LessOrEqual(t, p.StepMsLo, p.StepMs)
		assert.GreaterOrEqual(t, p.StepMsHi, p.StepMs)
		assert.InEpsilon(t, p.StepMs/p.TokensPerStep, p.TPOTMs, 1e-6)
		assert.InEpsilon(t, float64(p.Batch)*p.TokensPerStep/(p.StepMs/1e3), p.TokensPerS, 1e-6)
		assert.Positive(t, p.Memory.WeightsGBPerGPU)
	}
	assert.NotNil(t, pr.Warnings)
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestPredictBadInput: each bad input gives exit code 2 and one line on
// stderr naming the file, the line or key, and the problem.
func TestPredictBadInput(t *testing.T) {
	const dir = "testdata/predict_bad/"
	tests := []struct {
		name string
		args []string
		want []string // substrings of the one stderr line
	}{
		{"unknown key", []string{dir + "unknown-key.toml"}, []string{dir + "unknown-key.toml:16: ", `unknown key "parallel.tpp"`}},
		{"unknown preset", []string{dir + "unknown-preset.toml"}, []string{dir + "unknown-preset.toml:5: model.preset: ", "kimi-k9"}},
		{"tp heads", []string{dir + "tp-heads.toml"}, []string{dir + "tp-heads.toml:14: parallel.tp: "}},
		{"ep experts", []string{dir + "ep-experts.toml"}, []string{dir + "ep-experts.toml:15: parallel.ep: "}},
		{"gpus tp dp", []string{dir + "gpus-tp-dp.toml"}, []string{dir + "gpus-tp-dp.toml:9: hardware.gpus: "}},
		{"batch zero", []string{dir + "batch-zero.toml"}, []string{dir + "batch-zero.toml:18: workload.batch: ", "0"}},
		{"acceptance", []string{dir + "acceptance.toml"}, []string{dir + "acceptance.toml:24: speculative.acceptance: "}},
		{"unsupported architecture", []string{dir + "unsupported-arch.toml"},
			[]string{dir + "unsupported-arch.toml:5: model.config: ", "llama-config.json", "architectures", "FalconForCausalLM"}},
		{"missing file", []string{dir + "nope.toml"}, []string{"nope.toml"}},
		{"bad format", []string{"--format", "yaml"}, []string{"--format", `"yaml"`}},
		{"bad batch", []string{"--batch", "1,x"}, []string{"--batch", `"x"`}},
		{"batch zero flag", []string{"--batch", "8,0"}, []string{"--batch", "0"}},
		{"bad context", []string{"--context", "0"}, []string{"--context"}},
		{"batch huge", []string{"--batch", "8,9223372036854775807"}, []string{"--batch", "9223372036854775807", "exceeds the limit of 16777216"}},
		{"batch overflow", []string{"--batch", "9223372036854775808"}, []string{"--batch", "not an integer"}},
		{"context huge", []string{"--context", "9223372036854775807"}, []string{"--context", "exceeds the limit of 16777216 tokens"}},
		{"context above limit", []string{"--context", "16777217", "--batch", "1"}, []string{"--context", "16777217"}},
		{"bad calibration", []string{"--calibration", "/nonexistent/calib.toml"}, []string{"--calibration", "/nonexistent/calib.toml"}},
		{"unknown flag", []string{"--batches", "1"}, []string{"--batches"}},
		{"two args", []string{"a.toml", "b.toml"}, []string{"accepts at most 1 arg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"predict"}, tt.args...)...)
			assert.Equal(t, ExitInput, code, "stdout %q stderr %q", out, errs)
			assert.Empty(t, out)
			lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
			require.Len(t, lines, 1, "one line on stderr: %q", errs)
			assert.True(t, strings.HasPrefix(lines[0], "moecast: "), lines[0])
			for _, w := range tt.want {
				assert.Contains(t, lines[0], w)
			}
			assert.NotContains(t, errs, "goroutine", "no stack trace")
		})
	}
}

// TestPredictExplain: --explain lists the ops of one layer of each kind;
// count x (time + launch) over the ops adds up to the step.
func TestPredictExplain(t *testing.T) {
	code, out, errs := runCLI(t, "predict", "--explain", "--batch", "8")
	require.Equal(t, ExitOK, code, errs)
	golden(t, "predict_explain_default_b8.text.golden", out)

	code, out, errs = runCLI(t, "predict", "--explain", "--batch", "8,64", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var ex view.ExplainJSON
	require.NoError(t, json.Unmarshal([]byte(out), &ex))
	assert.Equal(t, 8, ex.Batch, "the first batch point")
	require.NotEmpty(t, ex.Ops)
	var sum float64
	layers := map[string]bool{}
	for _, o := range ex.Ops {
		sum += o.Count * (o.TimeUs + o.LaunchUs) / 1e3
		layers[o.Layer] = true
		assert.NotEmpty(t, o.Source, o.Name)
		assert.NotEmpty(t, o.Shape, o.Name)
		assert.Positive(t, o.Count, o.Name)
	}
	assert.InEpsilon(t, ex.StepMs, sum, 1e-6)
	assert.True(t, layers["dense"] && layers["moe"], "both layer kinds of Kimi-K2.5: %v", layers)

	code, out, errs = runCLI(t, "predict", "--explain", "--format", "csv")
	require.Equal(t, ExitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "layer,op,category,count,shape,bytes,flops,time_us,time_us_lo,time_us_hi,launch_us,source\n"), out)
}

// TestPredictWeightsDoNotFit: when the weights and reserve exceed the
// memory budget the header says so, rather than printing a negative KV
// cache.
func TestPredictWeightsDoNotFit(t *testing.T) {
	src, err := scenarios.EmbeddedSource(scenarios.DefaultName)
	require.NoError(t, err)
	tight := strings.Replace(string(src), "gpu_memory_utilization = 0.90", "gpu_memory_utilization = 0.75", 1)
	require.NotEqual(t, string(src), tight)
	path := filepath.Join(t.TempDir(), "tight.toml")
	require.NoError(t, os.WriteFile(path, []byte(tight), 0o644))
	code, out, errs := runCLI(t, "predict", path, "--batch", "1")
	require.Equal(t, ExitOK, code, errs)
	// 102.64 GB x 0.75 = 76.98 GB < 76.18 GB weights + 1.88 GB reserve
	// (vLLM's profile run at 8192 tokens, 1024 sampler rows).
	assert.Contains(t, out, "weights 76.18GB, reserve 1.88GB, the weights and reserve do not fit (1.08GB short), no room for a KV cache\n")
	assert.NotContains(t, out, "KV cache -")
	assert.Contains(t, out, "warning: batch 1: does not fit: weights take 76.18 GB per GPU")
}

// TestPredictExplainNoZeroEfficiency: alpha-beta collective sources have no
// efficiency; --explain must not print one as "eff 0.00".
func TestPredictExplainNoZeroEfficiency(t *testing.T) {
	code, out, errs := runCLI(t, "predict", "--explain", "--batch", "8", "--calibration", "none")
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "roofline nccl ")
	assert.NotContains(t, out, "eff 0.00")
}

// TestPredictCalibrationLayered: --calibration takes several sources,
// comma-separated; an imported nccl-tests file on top of the embedded
// tables keeps the embedded MoE and MLA tables, and the text and JSON name
// every source.
func TestPredictCalibrationLayered(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "my-box-nccl.toml")
	// H100 measurements labelled as this PCIe box: only the messages of at
	// most 1 MiB, the larger ran faster than a PCIe Gen5 link allows.
	var small []string
	for _, p := range ncclFixtures {
		small = append(small, smallMessages(t, dir, p))
	}
	code, _, errs := runCLI(t, append(append([]string{"calib", "import", "nccl-tests"}, small...),
		"--gpu", "rtx-pro-6000-server", "--fabric", "pcie-gen5", "--date", "2026-11-30", "-o", mine)...)
	require.Equal(t, ExitOK, code, errs)

	code, out, errs := runCLI(t, "predict", "--format", "json", "--batch", "8", "--calibration", "embedded,"+mine)
	require.Equal(t, ExitOK, code, errs)
	var pr view.PredictJSON
	require.NoError(t, json.Unmarshal([]byte(out), &pr))
	assert.Equal(t, []string{"embedded:rtx-pro-6000-server", mine}, pr.Calibration)
	src := pr.Points[0].Sources
	assert.Contains(t, src["moe"], "table embedded:rtx-pro-6000-server#moe.", "embedded MoE table kept")
	assert.Contains(t, src["attention"], "table embedded:rtx-pro-6000-server#mla.", "embedded MLA table kept")

	// Alone, the import leaves MoE and MLA on the roofline.
	code, out, errs = runCLI(t, "predict", "--format", "json", "--batch", "8", "--calibration", mine)
	require.Equal(t, ExitOK, code, errs)
	pr = view.PredictJSON{}
	require.NoError(t, json.Unmarshal([]byte(out), &pr))
	assert.Equal(t, []string{mine}, pr.Calibration)
	assert.True(t, strings.HasPrefix(pr.Points[0].Sources["moe"], "roofline"), pr.Points[0].Sources["moe"])

	code, out, errs = runCLI(t, "predict", "--batch", "8", "--calibration", "embedded, "+mine)
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, "calib     embedded:rtx-pro-6000-server, 374 tables + "+mine+", ")

	code, out, _ = runCLI(t, "predict", "--format", "json", "--calibration", "none")
	require.Equal(t, ExitOK, code)
	assert.Contains(t, out, `"calibration": [],`)

	code, _, errs = runCLI(t, "predict", "--calibration", "embedded,nope.toml")
	assert.Equal(t, ExitInput, code)
	assert.True(t, strings.HasPrefix(errs, `moecast: --calibration: source 2 ("nope.toml"): calibration file: `), errs)
}

// smallMessages copies an nccl-tests output into dir without its rows of
// more than 1 MiB.
func smallMessages(t *testing.T, dir, path string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	var keep []string
	for _, ln := range strings.Split(string(src), "\n") {
		if f := strings.Fields(ln); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 1<<20 {
				continue
			}
		}
		keep = append(keep, ln)
	}
	out := filepath.Join(dir, filepath.Base(path))
	require.NoError(t, os.WriteFile(out, []byte(strings.Join(keep, "\n")), 0o644))
	return out
}
