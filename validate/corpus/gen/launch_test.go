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
		tp                                     int
		want                                   launch
		ok                                     bool
	}{
		{"db dump v0.19.0 B300", mm, "fp8", "b300_sxm",
			"db-dump/2026-04-27; config_id=732; silicon_concurrency=256; measured=2026-04-22T00:00:00.000Z; workflow_run_id=802; vllm/vllm-openai:v0.19.0-cu130", 0,
			launch{kvCache: "fp8", gmu: 0.90, graphMax: 2048}, true},
		{"CSV export v0.19.0 B200", mm, "fp8", "b200_sxm",
			"source_file=2026-04-06.csv; model=MiniMax-M2.5; silicon_concurrency=32; wip=False; image=vllm/vllm-openai:v0.19.0-cu130", 0,
			launch{kvCache: "fp8", gmu: 0.90, graphMax: 2048}, true},
		{"v0.17.0 B200: bf16 KV at 0.95", mm, "fp8", "b200_sxm", "source_file=x.csv; image=vllm/vllm-openai:v0.17.0-cu130", 0,
			launch{gmu: 0.95}, true},
		{"v0.18.0 H100: max_num_seqs 256", mm, "fp8", "h100_sxm", "source_file=x.csv; image=vllm/vllm-openai:v0.18.0", 0,
			launch{gmu: 0.90, maxSeqs: 256}, true},
		{"nightly image: not InferenceX's", mm, "fp8", "b300_sxm", "source_file=x.csv; image=vllm/vllm-openai:nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306", 0, launch{}, false},
		{"another precision", mm, "fp4", "b200_sxm", "image=vllm/vllm-openai:v0.19.0-cu130", 0, launch{}, false},
		{"another system", mm, "fp8", "gb200", "image=vllm/vllm-openai:v0.19.0-cu130", 0, launch{}, false},
		{"another model", "openai/gpt-oss-120b", "fp8", "b200_sxm", "image=vllm/vllm-openai:v0.19.0-cu130", 0, launch{}, false},
		{"tag matched whole", mm, "fp8", "b200_sxm", "image=vllm/vllm-openai:v0.19.0-cu1300", 0, launch{}, false},
		{"SGLang DeepSeek-R1 TP8", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm",
			"db-dump/2026-04-27; config_id=1; silicon_concurrency=4; measured=2026-03-25T00:00:00.000Z; lmsysorg/sglang:v0.5.9-cu130", 8,
			launch{kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: 128}, true},
		{"SGLang DeepSeek-R1 TP4", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "image=lmsysorg/sglang:v0.5.9-cu130", 4,
			launch{kvCache: "fp8", gmu: 0.95, maxSeqs: 32, maxBatched: 8192, recv: [2]int{10, 10}, graphMax: 32}, true},
		{"SGLang DeepSeek-R1 TP2: no script", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "image=lmsysorg/sglang:v0.5.9-cu130", 2, launch{}, false},
		{"SGLang Qwen3.5 fp4 B300", "Qwen/Qwen3.5-397B-A17B", "fp4", "b300_sxm", "x; lmsysorg/sglang:v0.5.10.post1-cu130", 4,
			launch{kvCache: "fp8", gmu: 0.8, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc}, true},
		{"SGLang DeepSeek-R1 older image", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "x; lmsysorg/sglang:v0.5.6-cu129-amd64", 8, launch{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := launchOf(tt.model, tt.precision, tt.system, tt.tp, 16, tt.source)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want.kvCache, got.kvCache)
			assert.Equal(t, tt.want.gmu, got.gmu)
			assert.Equal(t, tt.want.maxSeqs, got.maxSeqs)
			assert.Equal(t, tt.want.maxBatched, got.maxBatched)
			assert.Equal(t, tt.want.recv, got.recv)
			assert.Equal(t, tt.want.graphMax, got.graphMax)
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

// TestRecvAt: the InferenceX SGLang scripts' `if [[ $CONC -ge 16 ]]`:
// the first interval below C = 16, the second from it.
func TestRecvAt(t *testing.T) {
	// Beyond the config's conc-end the command line is not known.
	_, ok := launchOf("deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", 8, 64, "x; lmsysorg/sglang:v0.5.9-cu130")
	assert.True(t, ok)
	_, ok = launchOf("deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", 8, 128, "x; lmsysorg/sglang:v0.5.9-cu130")
	assert.False(t, ok)

	l := launch{recv: [2]int{10, 30}}
	assert.Equal(t, 10, l.recvAt(4))
	assert.Equal(t, 10, l.recvAt(15))
	assert.Equal(t, 30, l.recvAt(16))
	assert.Equal(t, 30, l.recvAt(128))
	assert.Equal(t, 0, launch{}.recvAt(64))
	got := scenarioText{name: "x", config: "c.json", gpus: 1, tp: 1, dp: 1, ep: 1, engine: "sglang", recv: 30}.String()
	assert.Contains(t, got, "scheduler_recv_interval = 30\n")
	assert.NotContains(t, scenarioText{name: "x", engine: "sglang"}.String(), "scheduler_recv_interval")
}

// TestGraphMaxAt: the scripts' CUDA-graph limit, a constant or the
// benchmark's concurrency ($CONC), written under the engine's key; a
// script passing $CONC runs one command line per concurrency (variant
// "cN"), one setting --scheduler-recv-interval by concurrency two
// ("recvN"), another one.
func TestGraphMaxAt(t *testing.T) {
	assert.Equal(t, 128, launch{graphMax: 128}.graphMaxAt(4))
	assert.Equal(t, 16, launch{graphMax: graphAtConc}.graphMaxAt(16))
	assert.Equal(t, 0, launch{}.graphMaxAt(16))
	assert.Equal(t, "c8", launch{graphMax: graphAtConc, recv: [2]int{10, 30}}.variant(8))
	assert.Equal(t, "recv30", launch{graphMax: 128, recv: [2]int{10, 30}}.variant(64))
	assert.Equal(t, "", launch{graphMax: 32, recv: [2]int{10, 10}}.variant(8))

	sg := scenarioText{name: "x", config: "c.json", gpus: 1, tp: 1, dp: 1, ep: 1, engine: "sglang", graphMax: 64}.String()
	assert.Contains(t, sg, "cuda_graph_max_bs = 64\n")
	vl := scenarioText{name: "x", config: "c.json", gpus: 1, tp: 1, dp: 1, ep: 1, engine: "vllm", graphMax: 2048}.String()
	assert.Contains(t, vl, "max_cudagraph_capture_size = 2048\n")
	assert.NotContains(t, vl, "cuda_graph_max_bs")
	assert.NotContains(t, scenarioText{name: "x", engine: "sglang"}.String(), "cuda_graph_max_bs")
}
