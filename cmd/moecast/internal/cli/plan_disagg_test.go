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

// TestPlanDisagg plans agg and disagg: a small model with short prompts
// at a light load gets the "does not pay" verdict; a large model with long
// prompts at a heavy load lists its xPyD points priced by the serving
// simulation.
func TestPlanDisagg(t *testing.T) {
	for _, tt := range []struct {
		name     string
		toml     string
		args     []string
		wantPays *bool // nil: either
	}{
		{name: "small model, short prompts, low load", toml: `name = "small"
[model]
preset = "qwen3-30b-a3b"
kv_cache = "bf16"
[hardware]
gpu = "h200-sxm"
gpus = 1
calibration = "embedded"
[parallel]
tp = 1
[workload]
input_tokens = 128
output_tokens = 256
[plan]
max_gpus = 4
min_tokens_per_s_per_user = 100
disagg = true
max_prefill_workers = 2
max_decode_workers = 2
`, wantPays: new(false)},
		{name: "large model, long prompts, heavy load", toml: `name = "long"
[model]
preset = "deepseek-v3"
kv_cache = "fp8"
[hardware]
gpu = "h200-sxm"
gpus = 8
calibration = "embedded"
[parallel]
tp = 8
[workload]
input_tokens = 8192
output_tokens = 512
[plan]
gpus = ["h200-sxm"]
max_gpus = 32
min_tokens_per_s_per_user = 10
disagg_transfer = "nvlink4"
`, args: []string{"--disagg"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.toml")
			require.NoError(t, os.WriteFile(file, []byte(tt.toml), 0o644))
			code, out, errs := runCLI(t, append([]string{"plan", file, "--format", "json"}, tt.args...)...)
			require.Equal(t, ExitOK, code, errs)
			var pj view.PlanJSON
			require.NoError(t, json.Unmarshal([]byte(out), &pj))
			require.NotNil(t, pj.Disagg)
			require.NotEmpty(t, pj.Disagg.Points)
			for _, p := range pj.Disagg.Points {
				assert.Equal(t, "disagg", p.Mode)
				assert.Regexp(t, `^\d+P\(TP\d+[^)]*\)\+\d+D\(TP\d+[^)]*\)$`, p.Deployment)
				assert.NotContains(t, p.Verdict, "error", p.Deployment)
				assert.Greater(t, p.TokensPerSPerGPU, 0.0, p.Deployment)
				assert.Greater(t, p.KVTransferMsMean, 0.0, p.Deployment)
				if pj.MaxGPUs > 0 {
					assert.LessOrEqual(t, p.GPUs, pj.MaxGPUs, p.Deployment)
				}
			}
			if tt.wantPays != nil {
				assert.Equal(t, *tt.wantPays, strings.HasPrefix(pj.Disagg.Verdict, "disaggregation pays"), pj.Disagg.Verdict)
				if !*tt.wantPays {
					assert.True(t, strings.HasPrefix(pj.Disagg.Verdict, "disaggregation does not pay"), pj.Disagg.Verdict)
				}
			}
			code, text, errs := runCLI(t, append([]string{"plan", file}, tt.args...)...)
			require.Equal(t, ExitOK, code, errs)
			assert.Contains(t, text, "\ndisaggregated (xPyD")
			assert.Contains(t, text, "\nverdict   disaggregation")
		})
	}
}

// TestPlanDisaggOff: without disagg the JSON has no disagg key.
func TestPlanDisaggOff(t *testing.T) {
	code, out, errs := runCLI(t, "plan", "--format", "json", "--gpus", "h200-sxm")
	require.Equal(t, ExitOK, code, errs)
	assert.NotContains(t, out, `"disagg"`)
}

// TestPlanDisaggBadKeys: a bad disagg key of [plan] is one line naming
// the key, exit 2.
func TestPlanDisaggBadKeys(t *testing.T) {
	for _, tt := range []struct {
		name, plan, want string
	}{
		{"zero prefill workers", "disagg = true\nmax_prefill_workers = 0", "plan.max_prefill_workers: 0 must be in [1, 8]"},
		{"too many decode workers", "disagg = true\nmax_decode_workers = 9", "plan.max_decode_workers: 9 must be in [1, 8]"},
		{"unknown transfer", `disagg_transfer = "pigeon"`, `plan.disagg_transfer: unknown transfer fabric "pigeon"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.toml")
			src := "[model]\npreset = \"qwen3-30b-a3b\"\n[hardware]\ngpu = \"h200-sxm\"\n[plan]\n" + tt.plan + "\n"
			require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
			code, out, errs := runCLI(t, "plan", file)
			assert.Equal(t, ExitInput, code, "stdout: %s", out)
			assert.Contains(t, errs, tt.want)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "\n")+1, "one line: %q", errs)
		})
	}
}

// TestPlanDisaggTarget: with a target each xPyD point is sized in whole
// copies (copies x gpus = total_gpus, copies x output >= the target), the
// verdict says which carries the target on fewer GPUs, and the CSV and
// HTML list the xPyD points.
func TestPlanDisaggTarget(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.toml")
	require.NoError(t, os.WriteFile(file, []byte(`name = "small"
[model]
preset = "qwen3-30b-a3b"
kv_cache = "bf16"
[hardware]
gpu = "h200-sxm"
gpus = 1
calibration = "embedded"
[parallel]
tp = 1
[workload]
input_tokens = 2048
output_tokens = 256
[plan]
max_gpus = 4
min_tokens_per_s_per_user = 50
target_output_tokens_per_s = 20000
disagg = true
`), 0o644))
	code, out, errs := runCLI(t, "plan", file, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var pj view.PlanJSON
	require.NoError(t, json.Unmarshal([]byte(out), &pj))
	require.NotNil(t, pj.Disagg)
	require.NotEmpty(t, pj.Disagg.Points)
	for _, p := range pj.Disagg.Points {
		require.NotNil(t, p.Copies, p.Deployment)
		require.NotNil(t, p.TotalGPUs, p.Deployment)
		assert.Equal(t, *p.Copies*p.GPUs, *p.TotalGPUs, p.Deployment)
		assert.GreaterOrEqual(t, float64(*p.Copies)*p.OutputTokensPerS, 20000*(1-1e-6), p.Deployment)
		assert.Less(t, float64(*p.Copies-1)*p.OutputTokensPerS, 20000.0, p.Deployment)
	}
	assert.Contains(t, pj.Disagg.Verdict, "; for the target: ")

	code, csv, errs := runCLI(t, "plan", file, "--format", "csv")
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, csv, ",disagg: ")
	assert.Contains(t, csv, pj.Disagg.Points[0].Deployment+",h200-sxm,")

	html := filepath.Join(dir, "p.html")
	code, _, errs = runCLI(t, "plan", file, "--html", html)
	require.Equal(t, ExitOK, code, errs)
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), "Disaggregated deployments (xPyD)")
}
