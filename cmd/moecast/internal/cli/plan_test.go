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
	"github.com/moecast/moecast/scenarios"
)

// TestPlanGolden plans the embedded default in every format, with and
// without objectives; refresh with `go test ./internal/cli -run PlanGolden
// -update` and review the diff.
func TestPlanGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"kimi-k2.5-plan-1k1k", []string{"kimi-k2.5-plan-1k1k"}},
		{"kimi-k2.5-plan-8k1k", []string{"kimi-k2.5-plan-8k1k"}},
		{"slo_target", []string{"--gpus", "rtx-pro-6000-server,h200-sxm", "--min-tokens-per-s-per-user", "20", "--tpot-p99", "50ms",
			"--target-output-tokens-per-s", "1000"}},
	} {
		formats := []string{formatText, formatJSON, formatCSV}
		if strings.HasPrefix(tt.name, "kimi") {
			formats = formats[:1] // the shipped planning cases: the text answer
		}
		for _, format := range formats {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				code, out, errs := runCLI(t, append([]string{"plan", "--format", format}, tt.args...)...)
				require.Equal(t, ExitOK, code, "stderr: %s", errs)
				golden(t, "plan_"+tt.name+"."+format+".golden", out)
			})
		}
	}
}

// TestPlanJSON checks the JSON contract and the answer's consistency: the
// best point meets the objectives, its replicas carry the target, the
// front is sorted and no front point dominates another.
func TestPlanJSON(t *testing.T) {
	code, out, errs := runCLI(t, "plan", "--format", "json", "--gpus", "rtx-pro-6000-server,h200-sxm",
		"--min-tokens-per-s-per-user", "20", "--target-request-rate", "2")
	require.Equal(t, ExitOK, code, errs)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, []string{"best", "calibration", "deployments", "evaluator", "front", "gpus", "input_tokens", "max_gpus",
		"nearest", "output_tokens", "rejected", "scenario", "slo", "warnings"}, keys(doc))
	var pj view.PlanJSON
	require.NoError(t, json.Unmarshal([]byte(out), &pj))
	require.NotNil(t, pj.Best)
	assert.GreaterOrEqual(t, pj.Best.TokensPerSPerUser, 20.0)
	want := 2 * float64(pj.OutputTokens)
	assert.InDelta(t, want, pj.Best.TargetOutputTokensPerS, 1e-9)
	assert.GreaterOrEqual(t, float64(pj.Best.Replicas)*pj.Best.OutputTokensPerS, want, "replicas carry the target")
	assert.Less(t, float64(pj.Best.Replicas-1)*pj.Best.OutputTokensPerS, want, "no replica too many")
	assert.Equal(t, pj.Best.Replicas*pj.Best.GPUs, pj.Best.TotalGPUs)
	require.NotEmpty(t, pj.Front)
	for i, f := range pj.Front {
		assert.Equal(t, "front", f.Verdict)
		assert.GreaterOrEqual(t, f.TokensPerSPerUser, 20.0)
		if i > 0 {
			assert.LessOrEqual(t, f.TokensPerSPerGPU, pj.Front[i-1].TokensPerSPerGPU, "front sorted by tok/s/GPU")
			assert.GreaterOrEqual(t, f.TokensPerSPerUser, pj.Front[i-1].TokensPerSPerUser, "and so by tok/s/user the other way")
		}
	}
	assert.Len(t, pj.Deployments, len(pj.Deployments))
	verdicts := map[string]int{}
	for _, d := range pj.Deployments {
		verdicts[d.Verdict]++
		if d.Verdict == "front" || d.Verdict == "dominated" {
			require.NotNil(t, d.Best, d.Deployment)
		}
		assert.NotEmpty(t, d.Reason, d.Deployment)
	}
	for _, v := range []string{"front", "dominated", "memory"} {
		assert.Positive(t, verdicts[v], "some deployment is %s: %v", v, verdicts)
	}
}

// TestPlanTOMLOptions: the scenario's [plan] table gives the options and
// the flags override them.
func TestPlanTOMLOptions(t *testing.T) {
	src, err := scenarios.EmbeddedSource(scenarios.DefaultName)
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(dir, "p.toml")
	withPlan := string(src) + `
[plan]
gpus = ["h200-sxm"]
max_gpus = 8
tpot_p99 = "40ms"
min_tokens_per_s_per_user = 25
target_output_tokens_per_s = 2000
`
	require.NoError(t, os.WriteFile(file, []byte(withPlan), 0o644))
	code, out, errs := runCLI(t, "plan", file, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var pj view.PlanJSON
	require.NoError(t, json.Unmarshal([]byte(out), &pj))
	assert.Equal(t, []string{"h200-sxm"}, pj.GPUs)
	assert.Equal(t, view.PlanSLOJSON{TPOTP99Ms: 40, MinTokensPerSPerUser: 25, TargetOutputTokensPerS: 2000}, pj.SLO)
	require.NotNil(t, pj.Best)
	assert.Equal(t, "h200-sxm", pj.Best.GPU)
	assert.LessOrEqual(t, pj.Best.TPOTP99Ms, 40.0)

	code, out, errs = runCLI(t, "plan", file, "--format", "json", "--gpus", "rtx-pro-6000-server", "--tpot-p99", "100ms",
		"--target-request-rate", "1")
	require.Equal(t, ExitOK, code, errs)
	pj = view.PlanJSON{}
	require.NoError(t, json.Unmarshal([]byte(out), &pj))
	assert.Equal(t, []string{"rtx-pro-6000-server"}, pj.GPUs)
	assert.Equal(t, view.PlanSLOJSON{TPOTP99Ms: 100, MinTokensPerSPerUser: 25, TargetRequestRate: 1}, pj.SLO,
		"flags override; a request-rate flag replaces the file's output target")
}

// TestPlanNothingMeets: objectives nothing meets are said, with the nearest
// points on stdout, and exit 2 with one line on stderr.
func TestPlanNothingMeets(t *testing.T) {
	code, out, errs := runCLI(t, "plan", "--min-tokens-per-s-per-user", "5000")
	assert.Equal(t, ExitInput, code)
	assert.Equal(t, "moecast: plan: no deployment meets the SLOs (>= 5000 tok/s/user); the nearest points are listed\n", errs)
	assert.Contains(t, out, "best      no deployment meets the objectives; nearest points below")
	assert.Contains(t, out, "nearest points (no point meets the SLOs)")
	assert.Contains(t, out, "warning: no deployment meets the SLOs")
	code, out, _ = runCLI(t, "plan", "--min-tokens-per-s-per-user", "5000", "--format", "json")
	assert.Equal(t, ExitInput, code)
	var pj view.PlanJSON
	require.NoError(t, json.Unmarshal([]byte(out), &pj))
	assert.Nil(t, pj.Best)
	assert.Empty(t, pj.Front)
	assert.Len(t, pj.Nearest, 3)
}

func TestPlanBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"max-gpus zero", []string{"--max-gpus", "0"}, "--max-gpus: 0 must be > 0"},
		{"max-gpus negative", []string{"--max-gpus", "-4"}, "--max-gpus: -4 must be > 0"},
		// Session 13: taken silently (30 s of enumeration, 1.8 GB).
		{"max-gpus 2^63-1", []string{"--max-gpus", "9223372036854775807"}, "--max-gpus: 9223372036854775807 exceeds the 65536 (2^16) GPUs a deployment may have"},
		{"unknown gpu", []string{"--gpus", "h200-sxm,a100"}, `--gpus: unknown GPU "a100"`},
		{"empty gpus", []string{"--gpus", ","}, "--gpus: no GPU named"},
		{"bad duration", []string{"--tpot-p99", "fast"}, "--tpot-p99: "},
		{"zero duration", []string{"--ttft-p99", "0s"}, "--ttft-p99: \"0s\" must be a positive duration"},
		{"negative per user", []string{"--min-tokens-per-s-per-user", "-1"}, "--min-tokens-per-s-per-user: -1 must be a positive finite value"},
		{"two targets", []string{"--target-output-tokens-per-s", "10", "--target-request-rate", "1"}, "not both"},
		{"not a number", []string{"--target-request-rate", "lots"}, `plan: --target-request-rate: "lots" is not a number`},
		// Kimi-K2.5 (594 GB of weights) fits on no single GPU.
		{"empty space", []string{"--max-gpus", "1", "--gpus", "h200-sxm,b200-sxm"}, "plan: empty search space: none of the 4 deployments"},
		{"format", []string{"--format", "xml"}, "--format"},
		{"unknown scenario", []string{"no-such-scenario"}, "no-such-scenario"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"plan"}, tt.args...)
			code, out, errs := runCLI(t, args...)
			assert.Equal(t, ExitInput, code, "stdout: %s", out)
			assert.Contains(t, errs, tt.want)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "\n")+1, "one line: %q", errs)
		})
	}
}
