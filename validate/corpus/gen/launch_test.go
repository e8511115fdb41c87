package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLaunchOf: a row takes the InferenceX command line of its model,
// precision, system and image (both ways the rows name the image), and
// none where any of them differs.
func TestLaunchOf(t *testing.T) {
	const mm = "MiniMaxAI/MiniMax-M2.5"
	tests := []struct {
		name, model, precision, system, source string
		want                                   launch
		ok                                     bool
	}{
		{"db dump v0.19.0 B300", mm, "fp8", "b300_sxm",
			"db-dump/2026-04-27; config_id=732; silicon_concurrency=256; measured=2026-04-22T00:00:00.000Z; workflow_run_id=802; vllm/vllm-openai:v0.19.0-cu130",
			launch{kvCache: "fp8", gmu: 0.90}, true},
		{"CSV export v0.19.0 B200", mm, "fp8", "b200_sxm",
			"source_file=2026-04-06.csv; model=MiniMax-M2.5; silicon_concurrency=32; wip=False; image=vllm/vllm-openai:v0.19.0-cu130",
			launch{kvCache: "fp8", gmu: 0.90}, true},
		{"v0.17.0 B200: bf16 KV at 0.95", mm, "fp8", "b200_sxm", "source_file=x.csv; image=vllm/vllm-openai:v0.17.0-cu130",
			launch{gmu: 0.95}, true},
		{"v0.18.0 H100: max_num_seqs 256", mm, "fp8", "h100_sxm", "source_file=x.csv; image=vllm/vllm-openai:v0.18.0",
			launch{gmu: 0.90, maxSeqs: 256}, true},
		{"nightly image: not InferenceX's", mm, "fp8", "b300_sxm", "source_file=x.csv; image=vllm/vllm-openai:nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306", launch{}, false},
		{"another precision", mm, "fp4", "b200_sxm", "image=vllm/vllm-openai:v0.19.0-cu130", launch{}, false},
		{"another system", mm, "fp8", "gb200", "image=vllm/vllm-openai:v0.19.0-cu130", launch{}, false},
		{"another model", "openai/gpt-oss-120b", "fp8", "b200_sxm", "image=vllm/vllm-openai:v0.19.0-cu130", launch{}, false},
		{"tag matched whole", mm, "fp8", "b200_sxm", "image=vllm/vllm-openai:v0.19.0-cu1300", launch{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := launchOf(tt.model, tt.precision, tt.system, tt.source)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want.kvCache, got.kvCache)
			assert.Equal(t, tt.want.gmu, got.gmu)
			assert.Equal(t, tt.want.maxSeqs, got.maxSeqs)
			if ok {
				assert.Contains(t, got.source, "SemiAnalysisAI/InferenceX @ ")
				assert.NotEmpty(t, got.name)
			}
		})
	}
}

// TestScenarioTextLaunch: the command line's KV dtype goes to [model]
// kv_cache and its memory fraction and sequence cap to [runtime]; a
// scenario without them writes neither (the engine's defaults apply).
func TestScenarioTextLaunch(t *testing.T) {
	st := scenarioText{name: "x", config: "c.json", gpu: "b300-sxm", gpus: 2, tp: 2, dp: 1, ep: 1, engine: "vllm",
		kvCache: "fp8", gmu: 0.9, maxSeqs: 256}
	got := st.String()
	assert.Contains(t, got, "[model]\nconfig = \"c.json\"\nkv_cache = \"fp8\"\n\n[hardware]\n")
	assert.Contains(t, got, "[runtime]\nengine = \"vllm\"\ngpu_memory_utilization = 0.9\nmax_num_seqs = 256\n")
	st.kvCache, st.gmu, st.maxSeqs = "", 0, 0
	got = st.String()
	assert.NotContains(t, got, "kv_cache")
	assert.NotContains(t, got, "gpu_memory_utilization")
	assert.NotContains(t, got, "max_num_seqs")
}
