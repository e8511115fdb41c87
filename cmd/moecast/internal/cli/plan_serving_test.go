package cli

import (
	"testing"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServingEvalVersion: plan's serving simulation follows
// runtime.engine_version as simulate does: vLLM's full-ISL admission from
// v0.19.0, its async scheduling from v0.14.0 (runtime.async_scheduling
// wins).
func TestServingEvalVersion(t *testing.T) {
	off := false
	for _, tc := range []struct {
		engine          serve.Engine
		version         string
		async           *bool
		fullISL, asyncs bool
	}{
		{serve.VLLM, "", nil, true, true},
		{serve.VLLM, "0.19.0", nil, true, true},
		{serve.VLLM, "0.18.1", nil, false, true},
		{serve.VLLM, "0.12.0", nil, false, false},
		{serve.VLLM, "", &off, true, false},
		{serve.SGLang, "", nil, false, true},
	} {
		e := &servingEval{version: tc.version, async: tc.async}
		cfg := serve.Config{AsyncScheduling: true, ReserveFullISL: true}
		e.versionDefaults(&cfg, tc.engine)
		assert.Equal(t, tc.fullISL, cfg.ReserveFullISL, "%v %q full ISL", tc.engine, tc.version)
		assert.Equal(t, tc.asyncs, cfg.AsyncScheduling, "%v %q async", tc.engine, tc.version)
	}
}

// TestPlanServingAsSimulate: plan's serving simulation configures an
// engine as simulate does: SGLang's max_running_requests derived from the
// candidate's KV pool (serve.SetDefaultMaxRunning), and in a
// disaggregation vLLM's decode instance pulling the KV (kv-pull), SGLang's
// prefill pushing it.
func TestPlanServingAsSimulate(t *testing.T) {
	s, err := scenarios.Parse("s.toml", []byte(`name = "s"
[model]
preset = "qwen3-30b-a3b"
[hardware]
gpu = "h200-sxm"
gpus = 1
calibration = "none"
[workload]
input_tokens = 1024
output_tokens = 128
`))
	require.NoError(t, err)
	sm, err := s.Sim()
	require.NoError(t, err)
	c := &plan.Candidate{Config: s.Config, Sim: sm, Engine: plan.Engine(1<<serve.VLLM | 1<<serve.SGLang)}
	for _, e := range []serve.Engine{serve.VLLM, serve.SGLang} {
		ev := &servingEval{engine: e}
		agg, err := ev.config(c, 8, plan.Workload{Input: 1024, Output: 128})
		require.NoError(t, err)
		dis, err := ev.disaggConfig(c, c, 1, 1, 8, &scenarios.Plan{InputTokens: 1024, OutputTokens: 128})
		require.NoError(t, err)
		require.NotNil(t, dis.Disagg)
		assert.Equal(t, e == serve.VLLM, dis.Disagg.Pull, "%v: the decode instance pulls the KV", e)
		want := serve.DefaultConfig(e, s.Config.GPU.Label, s.Config.GPU.Memory).MaxNumSeqs
		if e == serve.SGLang {
			want = serve.DefaultMaxRunning(&agg, s.Config.Model.MaxPosition)
			assert.Positive(t, want)
		}
		assert.Equal(t, want, agg.MaxNumSeqs, "%v: max_num_seqs", e)
		assert.Equal(t, want, dis.MaxNumSeqs, "%v: disagg max_num_seqs", e)
	}
}
