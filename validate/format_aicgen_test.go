package validate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAICGeneratorBudget: an aggregated vLLM row of aiconfigurator's
// gap-analysis collection carries its generator's token budget, batch_size
// + isl + 1500; rows of other engines, of disaggregated deployments and of
// other collections carry none.
func TestAICGeneratorBudget(t *testing.T) {
	head := "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
	gap := "source_file=/Users/x/projects/aic-auto-gap-analysis/data/h100_sxm/vllm/0.12.0/Qwen_Qwen3-32B.csv; silicon_concurrency=8"
	gtl := "source_file=/Users/x/projects/aic-auto-gap-analysis/data/h100_sxm/vllm/0.12.0/qwen3_32b.csv; gtl_job_id=1; gtl_task_id=2; measured=2026-01-23; image=nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0; dynamo_version=0.8.0"
	ix := "db-dump/2026-04-27; config_id=719; silicon_concurrency=8; measured=2026-04-17T00:00:00.000Z; workflow_run_id=749; vllm/vllm-openai:v0.19.0"
	for _, tc := range []struct {
		name, src, backend, mode, isl, batch string
		want                                 int
	}{
		{"gap-analysis sweep, vLLM, 1k", gap, "vllm", "agg", "1024", "8", 8 + 1024 + 1500},
		{"gap-analysis sweep, vLLM, 4k at C=128", gap, "vllm", "agg", "4096", "128", 128 + 4096 + 1500},
		{"gap-analysis on Dynamo's image", gtl, "vllm", "agg", "4000", "24", 24 + 4000 + 1500},
		{"SGLang: another rule", gap, "sglang", "agg", "1024", "8", 0},
		{"disaggregated: the pools' own rules", gtl, "vllm", "disagg", "4000", "24", 0},
		{"InferenceX's deployments", ix, "vllm", "agg", "1024", "8", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := strings.Join([]string{"r1", tc.src, tc.backend, "0.12.0", "Qwen/Qwen3-32B", "h100_sxm", "", tc.mode, tc.isl, "128", tc.batch, "2", "1", "1", "1", "1", "154.2", "18.0"}, ",")
			rs, err := ReadBench("rows.csv", strings.NewReader(head+row+"\n"))
			require.NoError(t, err)
			require.Len(t, rs, 1)
			r := rs[0]
			assert.Equal(t, tc.want, r.MaxNumBatchedTokens)
			found := false
			for _, w := range r.Warnings {
				found = found || strings.Contains(w, "--max-num-batched-tokens")
			}
			assert.Equal(t, tc.want > 0, found, "a warning says so: %q", r.Warnings)
		})
	}
}
