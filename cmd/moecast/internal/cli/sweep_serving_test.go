package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var servingSweepArgs = []string{"sweep", "--serving", "--set", "workload.concurrency=1,4", "--set", "runtime.max_num_batched_tokens=2048,8192"}

// TestSweepServingGolden: refresh with `go test ./internal/cli -run
// SweepServingGolden -update` and review the diff.
func TestSweepServingGolden(t *testing.T) {
	for _, format := range []string{formatText, formatJSON, formatCSV} {
		t.Run(format, func(t *testing.T) {
			code, out, errs := runCLI(t, append(servingSweepArgs, "--format", format)...)
			require.Equal(t, ExitOK, code, "stderr: %s", errs)
			golden(t, "sweep_serving."+format+".golden", out)
			assert.NotContains(t, out, "NaN")
			assert.NotContains(t, out, "Inf")
		})
	}
}

// TestSweepServingMatchesSimulate: each point is simulate's point of the
// scenario with those settings (here the default token budget, 8192, and
// the concurrencies as --concurrency gives them).
func TestSweepServingMatchesSimulate(t *testing.T) {
	code, out, errs := runCLI(t, append(servingSweepArgs, "--format", "json")...)
	require.Equal(t, ExitOK, code, errs)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, []string{"axes", "points", "reasons", "scenario", "skipped", "warnings"}, keys(doc))
	var points []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc["points"], &points))
	require.Len(t, points, 4, "4 combinations, one point each")

	code, out, errs = runCLI(t, "simulate", "--concurrency", "1,4", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var sim struct {
		Points []map[string]json.RawMessage `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sim))
	require.Len(t, sim.Points, 2)
	for i, want := range sim.Points {
		got := points[2*i+1] // product order: concurrency slowest, budget 2048 then 8192
		assert.JSONEq(t, `{"workload.concurrency": "`+[]string{"1", "4"}[i]+`", "runtime.max_num_batched_tokens": "8192"}`, string(got["set"]))
		for k, v := range want {
			assert.JSONEq(t, string(v), string(got[k]), "point %d: %s", i, k)
		}
		assert.JSONEq(t, "8192", string(mustField(t, got["engine_config"], "max_num_batched_tokens")))
		assert.JSONEq(t, "2048", string(mustField(t, points[2*i]["engine_config"], "max_num_batched_tokens")))
	}
	// The budget matters where prompts are chunked: at concurrency 4 the
	// 2048-token budget prefills fewer prompts per step than 8192.
	assert.NotEqual(t, string(points[2]["p99_ttft_ms"]), string(points[3]["p99_ttft_ms"]))
}

func mustField(t *testing.T, raw json.RawMessage, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	require.Contains(t, m, key)
	return m[key]
}

// TestSweepServingWorkers: the result does not depend on the worker count.
func TestSweepServingWorkers(t *testing.T) {
	var outs []string
	for _, w := range []int{1, 3} {
		ss, err := sweepServingOf(&sweepOptions{Sets: []string{"workload.concurrency=1,4", "runtime.engine=vllm,sglang"}, Serving: true, Workers: w})
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, writeJSON(&b, ss.JSON()))
		outs = append(outs, b.String())
	}
	assert.Equal(t, outs[0], outs[1])
	assert.Contains(t, outs[0], `"engine": "sglang"`)
}

func TestSweepServingBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"zero concurrency", []string{"--set", "workload.concurrency=0"}, "every one of the 1 combinations was skipped: 1x embedded:kimi-k2.5-rtx-pro-6000-pcie-tp8.toml: workload.concurrency: concurrency 0 (item 1) must be a positive number of requests"},
		{"unknown engine", []string{"--set", "runtime.engine=trt"}, `runtime.engine: unknown engine "trt" (want vllm or sglang)`},
		{"tokens", []string{"--set", "workload.input_tokens=0,-5"}, "every one of the 2 combinations was skipped"},
		{"budget", []string{"--set", "runtime.max_num_batched_tokens=0"}, "runtime.max_num_batched_tokens: 0 must be in [1, 1048576] tokens"},
		{"load twice", []string{"--set", "workload.request_rate=1,2"}, "give workload.concurrency or workload.request_rate, not both"},
		{"wrong type", []string{"--set", "workload.concurrency=four"}, `"four" is not an integer`},
		{"unknown key", []string{"--set", "workload.users=4"}, `unknown scenario key "workload.users"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"sweep", "--serving"}, tt.args...)...)
			assert.Equal(t, ExitInput, code, "stdout: %s", out)
			assert.Contains(t, errs, tt.want)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "\n")+1, "one line: %q", errs)
		})
	}
}
