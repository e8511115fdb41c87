package validate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientTokenizerMismatch: InferenceX rows of a DeepSeek tokenizer on
// SGLang 0.5.10 or later (transformers 5) carry the server's inflation of
// the client's prompts; other engines, versions, models and clients none.
func TestClientTokenizerMismatch(t *testing.T) {
	head := "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
	ix := "db-dump/2026-04-27; config_id=719; silicon_concurrency=4; measured=2026-04-17T00:00:00.000Z; workflow_run_id=749; lmsysorg/sglang:IMG"
	gap := "source_file=/x/aic-auto-gap-analysis/data/b300_sxm/sglang/0.5.10/DeepSeek.csv; silicon_concurrency=4"
	for _, tc := range []struct {
		name, src, backend, version, model string
		scale                              float64
	}{
		{"SGLang 0.5.10.post1, DeepSeek-V3", ix, "sglang", "0.5.10.post1", "deepseek-ai/DeepSeek-V3", serverTokensPerClientToken},
		{"SGLang 0.6.0, DeepSeek-R1 FP4 checkpoint", ix, "sglang", "0.6.0", "nvidia/DeepSeek-R1-0528-FP4", serverTokensPerClientToken},
		{"SGLang 0.5.9: transformers 4.57", ix, "sglang", "0.5.9", "deepseek-ai/DeepSeek-R1", 0},
		{"SGLang nightly tag: not matched", ix, "sglang", "nightly-dev-20260402", "deepseek-ai/DeepSeek-R1", 0},
		{"vLLM: the client takes vLLM's tokenizer", ix, "vllm", "0.19.0", "deepseek-ai/DeepSeek-R1", 0},
		{"another tokenizer", ix, "sglang", "0.5.10.post1", "Qwen/Qwen3.5-397B-A17B", 0},
		{"not InferenceX's client", gap, "sglang", "0.5.10.post1", "deepseek-ai/DeepSeek-V3", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := strings.Join([]string{"r1", tc.src, tc.backend, tc.version, tc.model, "b300_sxm", "fp8", "agg", "8192", "1024", "4", "8", "1", "1", "8", "1", "2049.7", "13.98"}, ",")
			rs, err := ReadBench("rows.csv", strings.NewReader(head+row+"\n"))
			require.NoError(t, err)
			require.Len(t, rs, 1)
			r := rs[0]
			assert.Equal(t, tc.scale, r.ServerInputScale)
			assert.Equal(t, 8192.0, r.InputTokens, "the row keeps the client's figure")
			found := false
			for _, w := range r.Warnings {
				found = found || strings.Contains(w, "tokenise the prompts apart")
			}
			assert.Equal(t, tc.scale > 0, found, "a warning says so: %v", r.Warnings)
		})
	}
}

func TestSGLangTransformers5(t *testing.T) {
	for v, want := range map[string]bool{
		"0.5.10.post1": true, "v0.5.10": true, "0.5.11rc1": true, "0.6.0": true, "1.0.0": true,
		"0.5.9": false, "0.5.9.post2": false, "0.4.10": false, "0.5": false, "nightly": false, "": false, "0.5.x": false,
	} {
		assert.Equal(t, want, sglangTransformers5(v), v)
	}
}
