package cli

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
)

// prefillCases are corpus scenarios of each pricing path: vLLM (piecewise
// or eager by the capture size), SGLang (eager prefill), SGLang and vLLM
// with DP replicas, a shipped scenario with 8 DP-attention ranks stepped
// in lockstep, and disaggregated prefill pools (one with DP-attention ranks).
var prefillCases = []string{
	"aiconfigurator/b300-sxm-vllm-minimax-m2.5-nvfp4-tp8-dp1-ep1.toml",
	"aiconfigurator/b200-sxm-sglang-deepseek-r1-fp8-block-tp4-dp1-ep1.toml",
	"aiconfigurator/b200-sxm-vllm-minimax-m2.5-fp8-tp4-dp4-ep16.toml",
	"../../scenarios/deepseek-v3-fp8-h200-dp8-ep8.toml", // DP attention, 8 ranks in lockstep
	"aiconfigurator/h100-sxm-sglang-qwen3-32b-fp8-block-disagg-p5x-tp1-dp1-ep1-d11x-tp1-dp1-ep1.toml",
	// a disaggregated prefill pool of 8 DP-attention ranks, each a scheduler of its own
	"aiconfigurator/b200-sxm-sglang-deepseek-v3-fp8-block-disagg-p1x-tp1-dp8-ep8-d1x-tp1-dp8-ep8.toml",
}

func corpusPath(rel string) string {
	return filepath.Join("..", "..", "..", "..", "validate", "corpus", rel)
}

// TestPrefillMatchesServe: the step `predict --prefill` prints is the
// time simulate's run takes for the same lone prefill: one request of
// T prompt tokens and one output token, alone, front end off, whose TTFT
// is that one step (serve.Run, the simulator's own loop; disaggregated:
// the prefill pool's busy time).
func TestPrefillMatchesServe(t *testing.T) {
	for _, rel := range prefillCases {
		t.Run(rel, func(t *testing.T) {
			sc, err := scenarios.Open(corpusPath(rel))
			require.NoError(t, err)
			for _, tok := range []int{512, 2048} {
				pr, err := predictPrefill(sc, []int{tok}, 0, false)
				require.NoError(t, err)
				require.Len(t, pr.Points, 1)
				got := pr.Points[0].Step.Wall

				cfg, sm, _, err := prefillPricer(sc)
				require.NoError(t, err)
				cfg.FrontEnd = serve.FrontEnd{}
				cfg.NoPrefixCache = true
				w := &cfg.Workload
				w.RequestRate, w.Requests, w.MaxConcurrency, w.InputTokens, w.OutputTokens = math.Inf(1), 1, 1, tok, 1
				w.RangeRatio, w.Prefix, w.Trace, w.Lengths, w.Turns = 0, nil, nil, nil, 0
				if cfg.MaxNumBatchedTokens > 0 && cfg.MaxNumBatchedTokens < tok {
					t.Skipf("chunk %d above the budget %d", tok, cfg.MaxNumBatchedTokens)
				}
				res, err := serve.Run(cfg, serve.NewSimCoster(sm))
				require.NoError(t, err)
				if d := res.Disagg; d != nil {
					// disaggregated: the TTFT adds the KV transfer and the
					// decode instance's step; the prefill pool was busy
					// for the one prefill step alone
					busy := d.PrefillUtilisation * float64(res.Duration) * float64(cfg.Disagg.Prefill.Workers)
					assert.InDelta(t, busy, float64(got), 1e-9*float64(got),
						"tokens %d: predict --prefill %.6f ms, serve.Run prefill pool busy %.6f ms", tok, got.Ms(), 1e3*busy)
					assert.Greater(t, float64(res.TTFT.Mean), float64(got))
					// SGLang's DP-attention ranks: every rank of the pool priced, as Run does
					assert.Equal(t, cfg.Disagg.Prefill.Memory.Groups, pr.Points[0].Step.Ranks, "ranks priced")
					continue
				}
				assert.InDelta(t, float64(res.TTFT.Mean), float64(got), 1e-12*float64(got),
					"tokens %d: predict --prefill %.6f ms, serve.Run TTFT %.6f ms", tok, got.Ms(), res.TTFT.Mean.Ms())
			}
		})
	}
}

// TestPrefillExplain: --explain lists every op with its source (a table
// with rows, or a formula with its efficiency) and the ops sum to the
// step's GPU time; JSON carries mode "prefill" and the ops.
func TestPrefillExplain(t *testing.T) {
	f := corpusPath(prefillCases[0])
	code, out, errs := runCLI(t, "predict", f, "--prefill", "1024,4096", "--explain")
	require.Equal(t, ExitOK, code, "stderr: %s", errs)
	assert.Contains(t, out, "explain   prefill 1024 tokens after 0 cached")
	assert.Contains(t, out, "explain   prefill 4096 tokens after 0 cached")
	assert.Contains(t, out, "included: the engine's host work per step")
	assert.Contains(t, out, "gqa prefill attention")
	assert.Regexp(t, `table embedded:\S+ rows`, out)
	assert.Contains(t, out, "roofline")

	code, out, errs = runCLI(t, "predict", f, "--prefill", "2048", "--prefix", "8192", "--explain", "--format", "json")
	require.Equal(t, ExitOK, code, "stderr: %s", errs)
	var doc view.PrefillJSON
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, "prefill", doc.Mode)
	require.Len(t, doc.Points, 1)
	p := doc.Points[0]
	assert.Equal(t, 2048, p.Tokens)
	assert.Equal(t, 8192, p.Prefix)
	require.NotEmpty(t, p.Ops)
	sum := 0.0
	for _, o := range p.Ops {
		assert.NotEmpty(t, o.Source, o.Name)
		sum += o.Count * (o.TimeUs + o.LaunchUs)
	}
	assert.InDelta(t, p.GPUMs, sum/1e3, 1e-4*p.GPUMs)
	assert.InDelta(t, p.StepMs*1e-3*p.TokensPerS, 2048, 1e-3)

	code, out, errs = runCLI(t, "predict", f, "--prefill", "512,2048", "--format", "csv")
	require.Equal(t, ExitOK, code, "stderr: %s", errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	assert.True(t, strings.HasPrefix(lines[0], "tokens,prefix,step_ms,gpu_ms,host_ms"), lines[0])
}

// TestPrefillBadInput: each bad value is one line on stderr and exit 2.
func TestPrefillBadInput(t *testing.T) {
	f := corpusPath(prefillCases[0])
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--prefill", "0"}, "must be a positive number of tokens"},
		{[]string{"--prefill", "-5"}, "must be a positive number of tokens"},
		{[]string{"--prefill", "1024,abc"}, `"abc" is not an integer`},
		{[]string{"--prefill", "1.5"}, `"1.5" is not an integer`},
		{[]string{"--prefill", "2000000"}, "exceeds the limit"},
		{[]string{"--prefill", "1024", "--prefix", "-1"}, "--prefix: -1 must be"},
		{[]string{"--prefill", "1024", "--prefix", "16777216"}, "exceeds the limit"},
		{[]string{"--prefill", "1024", "--prefix", "9223372036854775807"}, "--prefix: 9223372036854775807 cached tokens"},
		{[]string{"--prefill", "1024", "--prefix", "1000000"}, "exceeds the model's context"},
		{[]string{"--prefix", "100"}, "--prefix applies to --prefill"},
		{[]string{"--prefill", "1024", "--batch", "8"}, "--batch does not apply"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"predict", f}, tc.args...)...)
			assert.Equal(t, ExitInput, code)
			assert.Empty(t, out)
			assert.Contains(t, errs, tc.want)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "\n")+1, errs)
		})
	}
}
