package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report/view"
)

// sweepArgs sweeps the default over a key that changes the deployment
// (with values it refuses), a speculative key and two workload keys.
var sweepArgs = []string{"sweep", "--set", "parallel.tp=1,3,8", "--set", "parallel.ep=1,8", "--set", "workload.context=2048,8192",
	"--set", "workload.batch=1,64"}

// TestSweepGolden: refresh with `go test ./internal/cli -run SweepGolden
// -update` and review the diff.
func TestSweepGolden(t *testing.T) {
	for _, format := range []string{formatText, formatJSON, formatCSV} {
		t.Run(format, func(t *testing.T) {
			code, out, errs := runCLI(t, append(sweepArgs, "--format", format)...)
			require.Equal(t, ExitOK, code, "stderr: %s", errs)
			golden(t, "sweep_default."+format+".golden", out)
		})
	}
}

// TestSweepMatchesPredict: each sweep point is the predict point of the
// scenario with those settings.
func TestSweepMatchesPredict(t *testing.T) {
	code, out, errs := runCLI(t, "sweep", "--set", "workload.batch=[1, 8]", "--set", "speculative.method=none,eagle3",
		"--set", "speculative.draft_tokens=3", "--set", "speculative.acceptance=[0.8, 0.6, 0.45]", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var sw view.SweepJSON
	require.NoError(t, json.Unmarshal([]byte(out), &sw))
	require.Len(t, sw.Points, 4)
	code, out, errs = runCLI(t, "predict", "kimi-k2.5-rtx-pro-6000-pcie-tp8-eagle3", "--batch", "1,8", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var pr view.PredictJSON
	require.NoError(t, json.Unmarshal([]byte(out), &pr))
	for i, p := range sw.Points[2:] {
		assert.Equal(t, "eagle3", p.Set["speculative.method"])
		assert.Equal(t, pr.Points[i].StepMs, p.StepMs)
		assert.Equal(t, pr.Points[i].TokensPerStep, p.TokensPerStep)
		assert.Equal(t, pr.Points[i].BreakdownMs, p.BreakdownMs)
	}
	assert.Equal(t, 1.0, sw.Points[0].TokensPerStep)
}

// TestSweepJSON checks the contract: points carry their settings, skips
// their settings and reason, each reason is counted once.
func TestSweepJSON(t *testing.T) {
	code, out, errs := runCLI(t, append(sweepArgs, "--format", "json")...)
	require.Equal(t, ExitOK, code, errs)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, []string{"axes", "points", "reasons", "scenario", "skipped", "warnings"}, keys(doc))
	var sw view.SweepJSON
	require.NoError(t, json.Unmarshal([]byte(out), &sw))
	// 3 x 2 x 2 x 2 = 24 combinations; tp = 3 (4 of them x ep) does not
	// divide the 8 GPUs.
	assert.Len(t, sw.Points, 16, "8 combinations run, one point each")
	assert.Len(t, sw.Skipped, 8)
	require.Len(t, sw.Reasons, 1)
	assert.Equal(t, 8, sw.Reasons[0].Count)
	assert.Contains(t, sw.Reasons[0].Reason, "parallel.tp: tp = 3 does not divide hardware.gpus = 8")
	for _, s := range sw.Skipped {
		assert.Equal(t, "3", s.Set["parallel.tp"])
		assert.Len(t, s.Set, 4)
	}
	for _, p := range sw.Points {
		assert.Len(t, p.Set, 4)
		assert.Equal(t, p.Set["workload.context"], itoa(p.Context))
		assert.Equal(t, p.Set["workload.batch"], itoa(p.Batch))
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestSweepWorkers: the result does not depend on the worker count.
func TestSweepWorkers(t *testing.T) {
	var outs []string
	for _, w := range []int{1, 3} {
		var sets []string
		for i := 2; i < len(sweepArgs); i += 2 {
			sets = append(sets, sweepArgs[i])
		}
		sw, err := sweepOf(&sweepOptions{Sets: sets, Format: formatJSON, Workers: w})
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, writeJSON(&b, sw.JSON()))
		outs = append(outs, b.String())
	}
	assert.Equal(t, outs[0], outs[1])
}

func TestSweepBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", []string{"--set", "parallel.pp=2"}, `--set parallel.pp: unknown scenario key "parallel.pp" (have: parallel.tp, parallel.ep, parallel.dp, parallel.dp_attention)`},
		{"unknown table", []string{"--set", "cluster.size=2"}, `unknown scenario key "cluster.size"`},
		{"a table", []string{"--set", "parallel=2"}, `scenario key "parallel" is a table`},
		{"wrong type", []string{"--set", "parallel.tp=8,eight"}, `--set parallel.tp=eight: "eight" is not an integer`},
		{"wrong type float", []string{"--set", "speculative.acceptance=0.5,high"}, `--set speculative.acceptance=high: item 1: "high" is not a number`},
		{"wrong type bool", []string{"--set", "runtime.cuda_graphs=yes"}, `"yes" is not a boolean`},
		{"no equals", []string{"--set", "parallel.tp"}, `want KEY=V1,V2,...`},
		{"empty value", []string{"--set", "parallel.tp=1,,8"}, `value 2 of "1,,8" is empty`},
		{"twice", []string{"--set", "parallel.tp=1", "--set", "parallel.tp=8"}, "given twice"},
		{"unclosed", []string{"--set", "workload.batch=[1,2"}, "unclosed"},
		{"all skipped", []string{"--set", "parallel.tp=3,5"}, "sweep: every one of the 2 combinations was skipped: 1x "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"sweep"}, tt.args...)...)
			assert.NotEqual(t, ExitOK, code, "stdout: %s", out)
			assert.Equal(t, ExitInput, code)
			assert.Contains(t, errs, tt.want)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "\n")+1, "one line: %q", errs)
		})
	}
}

// sweepOf loads opts and sweeps them, as runSweep does without --serving.
func sweepOf(opts *sweepOptions) (*view.Swept, error) {
	in, err := sweepInputOf(opts)
	if err != nil {
		return nil, err
	}
	return computeSweep(in)
}

// sweepServingOf loads opts and sweeps them as `sweep --serving` does.
func sweepServingOf(opts *sweepOptions) (*view.ServingSwept, error) {
	in, err := sweepInputOf(opts)
	if err != nil {
		return nil, err
	}
	return computeServingSweep(in)
}
