package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLaunchOf: a row takes the InferenceX command line of its model,
// precision, system and image (both ways the rows name the image), and
// none where any of them differs.
func TestLaunchOf(t *testing.T) {
	const mm = "MiniMaxAI/MiniMax-M2.5"
	const llama = "meta-llama/Llama-3.1-70B"
	const kimi = "moonshotai/Kimi-K2.5"
	const llamaSrc = "source_file=2026-04-06.csv; model=Llama-3.1-70B; silicon_concurrency=8; measured=2025-10-29T00:00:00.000Z; wip=False"
	tests := []struct {
		name, model, precision, system, source string
		tp                                     int
		want                                   launch
		ok                                     bool
	}{
		{"db dump v0.19.0 B300", mm, "fp8", "b300_sxm",
			"db-dump/2026-04-27; config_id=732; silicon_concurrency=256; measured=2026-04-22T00:00:00.000Z; workflow_run_id=802; vllm/vllm-openai:v0.19.0-cu130", 0,
			launch{kvCache: "fp8", gmu: 0.90, maxCapture: 2048}, true},
		{"CSV export v0.19.0 B200", mm, "fp8", "b200_sxm",
			"source_file=2026-04-06.csv; model=MiniMax-M2.5; silicon_concurrency=32; wip=False; image=vllm/vllm-openai:v0.19.0-cu130", 0,
			launch{kvCache: "fp8", gmu: 0.90, maxCapture: 2048}, true},
		{"v0.17.0 B200: bf16 KV at 0.95", mm, "fp8", "b200_sxm", "source_file=x.csv; image=vllm/vllm-openai:v0.17.0-cu130", 0,
			launch{gmu: 0.95}, true},
		{"v0.18.0 H100: max_num_seqs 256", mm, "fp8", "h100_sxm", "source_file=x.csv; image=vllm/vllm-openai:v0.18.0", 0,
			launch{gmu: 0.90, maxSeqs: 256, cudagraphMode: "PIECEWISE"}, true},
		{"nightly image: not InferenceX's", mm, "fp8", "b300_sxm", "source_file=x.csv; image=vllm/vllm-openai:nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306", 0, launch{}, false},
		{"another precision", mm, "bf16", "b200_sxm", "image=vllm/vllm-openai:v0.19.0-cu130", 0, launch{}, false},
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
		{"Llama-3.1-70B fp8 B200, measured 2025-10-29: v0.10.2, FULL_DECODE_ONLY", llama, "fp8", "b200_sxm", llamaSrc, 8,
			launch{async: true, kvCache: "fp8", gmu: 0.9, maxSeqs: 512, cudagraphMode: "FULL_DECODE_ONLY"}, true},
		{"Llama-3.1-70B nvfp4 B200", llama, "fp4", "b200_sxm", llamaSrc, 1,
			launch{async: true, kvCache: "fp8", gmu: 0.9, maxSeqs: 512, cudagraphMode: "FULL_DECODE_ONLY"}, true},
		{"Llama-3.1-70B fp8 H100: v0.10.2's default PIECEWISE", llama, "fp8", "h100_sxm", llamaSrc, 4,
			launch{async: true, kvCache: "fp8", gmu: 0.9, cudagraphMode: "PIECEWISE"}, true},
		{"Llama-3.1-70B TRT rows: not vLLM's script", llama, "fp8", "b200_sxm", llamaSrc, 8, launch{}, false},
		{"Llama-3.1-70B another date", llama, "fp8", "b200_sxm", "source_file=2026-04-06.csv; measured=2025-10-28T00:00:00.000Z", 8, launch{}, false},
		{"SGLang DeepSeek-R1 older image", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "x; lmsysorg/sglang:v0.5.6-cu129-amd64", 8, launch{}, false},
		{"SGLang DeepSeek-R1 fp4 B200, any TP (tp_size slips too)", "deepseek-ai/DeepSeek-R1", "fp4", "b200_sxm",
			"source_file=2026-03-25.csv; model=DeepSeek-R1; wip=False; image=lmsysorg/sglang:v0.5.9-cu130", 64,
			launch{kvCache: "fp8", gmu: 0.85, maxSeqs: 256, maxBatched: 16384, recv: [2]int{10, 30}, graphMax: 256}, true},
		{"InferenceX db dump lists DeepSeek-R1 as DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "fp8", "b200_sxm",
			"db-dump/2026-04-27; config_id=87; silicon_concurrency=4; measured=2026-03-25T00:00:00.000Z; workflow_run_id=337; lmsysorg/sglang:v0.5.9-cu130", 8,
			launch{kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: 128}, true},
		{"DeepSeek-V3 outside the db dump: no alias", "deepseek-ai/DeepSeek-V3", "fp8", "b200_sxm",
			"source_file=x.csv; image=lmsysorg/sglang:v0.5.9-cu130", 8, launch{}, false},
		{"SGLang Qwen3.5 bf16 B200 nightly", "Qwen/Qwen3.5-397B-A17B", "bf16", "b200_sxm",
			"source_file=2026-03-25.csv; model=Qwen3.5-397B; wip=False; image=lmsysorg/sglang:nightly-dev-20260216-d3bae71e", 8,
			launch{gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc}, true},
		{"SGLang Qwen3.5 fp8 B200 v0.5.9 MTP image: not the non-MTP script", "Qwen/Qwen3.5-397B-A17B", "fp8", "b200_sxm",
			"image=lmsysorg/sglang:v0.5.9-cu130", 4, launch{}, false},
		{"SGLang GLM-5 fp8 B200: no recv interval", "zhipuai/GLM-5", "fp8", "b200_sxm",
			"image=lmsysorg/sglang:nightly-dev-cu13-20260317-1eea7448", 8,
			launch{kvCache: "fp8", gmu: 0.85, maxBatched: 32768, graphMax: graphAtConc}, true},
		{"SGLang GLM-5 fp8 B300 nightly: no script in force", "zhipuai/GLM-5", "fp8", "b300_sxm",
			"image=lmsysorg/sglang:nightly-dev-cu13-20260401-b6fe0cca", 8, launch{}, false},
		{"SGLang Qwen3.5 fp8 B300 v0.5.10.post1: recv 10 at every C", "Qwen/Qwen3.5-397B-A17B", "fp8", "b300_sxm",
			"x; lmsysorg/sglang:v0.5.10.post1-cu130", 4,
			launch{kvCache: "fp8", gmu: 0.8, maxBatched: 16384, recv: [2]int{10, 10}, graphMax: graphAtConc}, true},
		{"SGLang DeepSeek-R1 fp8 B300 TP4", "deepseek-ai/DeepSeek-V3", "fp8", "b300_sxm",
			"db-dump/2026-04-27; config_id=720; workflow_run_id=749; lmsysorg/sglang:v0.5.10.post1-cu130", 4,
			launch{kvCache: "fp8", gmu: 0.95, maxSeqs: 32, maxBatched: 8192, recv: [2]int{10, 10}, graphMax: 32}, true},
		{"gpt-oss-120b B200 v0.15.1: MXFP8 activations", "openai/gpt-oss-120b", "fp4", "b200_sxm",
			"source_file=2026-03-25.csv; model=GPT-OSS-120B; silicon_concurrency=16; measured=2026-02-25T00:00:00.000Z; wip=False; image=vllm/vllm-openai:v0.15.1", 1,
			launch{kvCache: "fp8", gmu: 0.9, maxSeqs: 512, maxBatched: 8192, maxCapture: 2048, mxfp4Act: "mxfp8"}, true},
		{"gpt-oss-120b B200 TP8 above its config's conc-end 8", "openai/gpt-oss-120b", "fp4", "b200_sxm",
			"source_file=2026-03-25.csv; image=vllm/vllm-openai:v0.15.1", 8, launch{}, false},
		{"gpt-oss-120b H100 v0.15.1: no entry (Marlin MXFP4, no table)", "openai/gpt-oss-120b", "fp4", "h100_sxm",
			"source_file=2026-03-25.csv; image=vllm/vllm-openai:v0.15.1", 2, launch{}, false},
		{"MiniMax-M2.5 NVFP4 B300 v0.19.0 (db dump config 730, run 798)", mm, "fp4", "b300_sxm",
			"db-dump/2026-04-27; config_id=730; silicon_concurrency=4; measured=2026-04-21T00:00:00.000Z; workflow_run_id=798; vllm/vllm-openai:v0.19.0-cu130", 8,
			launch{kvCache: "fp8", gmu: 0.90, maxCapture: 2048}, true},
		{"MiniMax-M2.5 NVFP4 B200 v0.19.0", mm, "fp4", "b200_sxm",
			"db-dump/2026-04-27; config_id=1; measured=2026-04-08T00:00:00.000Z; workflow_run_id=1; vllm/vllm-openai:v0.19.0-cu130", 2,
			launch{kvCache: "fp8", gmu: 0.90, maxCapture: 2048}, true},
		{"MiniMax-M2.5 NVFP4 B200 nightly, 2026-04-03: PR #996's 08bcde8", mm, "fp4", "b200_sxm",
			"source_file=2026-03-25.csv; measured=2026-04-03; image=vllm/vllm-openai:nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306", 2,
			launch{kvCache: "fp8", gmu: 0.95}, true},
		{"MiniMax-M2.5 NVFP4 B200 nightly on another day: not claimed", mm, "fp4", "b200_sxm",
			"source_file=2026-03-25.csv; measured=2026-04-05; image=vllm/vllm-openai:nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306", 2, launch{}, false},
		{"Kimi-K2.5 NVFP4 B200 v0.17.0 in March: a58dedd's command line", kimi, "fp4", "b200_sxm",
			"source_file=2026-03-25.csv; model=Kimi-K2.5; measured=2026-03-11T16:59:40Z; wip=False; image=vllm/vllm-openai:v0.17.0", 4,
			launch{gmu: 0.90}, true},
		{"Kimi-K2.5 NVFP4 B200 v0.17.0 on 2026-04-20: 6c3aceb's", kimi, "fp4", "b200_sxm",
			"db-dump/2026-04-27; config_id=1; measured=2026-04-20T00:00:00.000Z; workflow_run_id=1; vllm/vllm-openai:v0.17.0", 4,
			launch{kvCache: "fp8", gmu: 0.90, maxCapture: 2048}, true},
		{"Kimi-K2.5 NVFP4 B200 v0.17.0 another date: not claimed", kimi, "fp4", "b200_sxm",
			"source_file=x.csv; measured=2026-05-02T00:00:00Z; image=vllm/vllm-openai:v0.17.0", 4, launch{}, false},
		{"Kimi-K2.5 NVFP4 B300 v0.19.0", kimi, "fp4", "b300_sxm",
			"db-dump/2026-04-27; config_id=1; measured=2026-04-20T00:00:00.000Z; workflow_run_id=1; vllm/vllm-openai:v0.19.0-cu130", 4,
			launch{gmu: 0.90}, true},
		{"Kimi-K2.5 NVFP4 B300 v0.17.0-cu130: before the config was on main", kimi, "fp4", "b300_sxm",
			"source_file=2026-03-25.csv; measured=2026-04-03; image=vllm/vllm-openai:v0.17.0-cu130", 4, launch{}, false},
		{"Kimi-K2.5 INT4 B200 v0.15.1 TP8", kimi, "int4", "b200_sxm",
			"source_file=2026-03-25.csv; measured=2026-03-24T20:03:09Z; wip=False; image=vllm/vllm-openai:v0.15.1", 8,
			launch{gmu: 0.95}, true},
		{"Kimi-K2.5 INT4 B200 v0.15.1 TP4: no config", kimi, "int4", "b200_sxm",
			"source_file=2026-03-25.csv; measured=2026-03-24T20:03:09Z; image=vllm/vllm-openai:v0.15.1", 4, launch{}, false},
		{"gpt-oss-120b H100 v0.18.0: VLLM_MXFP4_USE_MARLIN=1", "openai/gpt-oss-120b", "fp4", "h100_sxm",
			"source_file=2026-03-25.csv; measured=2026-03-27T08:01:51Z; wip=False; image=vllm/vllm-openai:v0.18.0", 4,
			launch{gmu: 0.9, maxBatched: 8192, maxCapture: 2048, mxfp4Backend: "marlin"}, true},
		{"gpt-oss-120b H100 v0.11.2 of 2025-12-08: the docker script, client capped at 512", "openai/gpt-oss-120b", "fp4", "h100_sxm",
			"source_file=2026-04-06.csv; measured=2025-12-08T00:00:00.000Z; image=vllm/vllm-openai:v0.11.2", 4,
			launch{async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048}, true},
		{"gpt-oss-120b H100 of 2025-12-05, no image: the docker script with PIECEWISE", "openai/gpt-oss-120b", "fp4", "h100_sxm",
			"source_file=2026-04-06.csv; model=GPT-OSS-120B; silicon_concurrency=512; measured=2025-12-05T00:00:00.000Z; wip=False", 2,
			launch{async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "PIECEWISE"}, true},
		{"gpt-oss-120b H100 v0.11.2 on another day: not that script's", "openai/gpt-oss-120b", "fp4", "h100_sxm",
			"source_file=2026-04-06.csv; measured=2025-12-10T00:00:00.000Z; image=vllm/vllm-openai:v0.11.2", 4, launch{}, false},
		{"SGLang DeepSeek-R1 fp4 B200 measured 2025-11-02, no image: the docker script", "deepseek-ai/DeepSeek-R1", "fp4", "b200_sxm",
			"source_file=2026-04-06.csv; model=DeepSeek-R1; silicon_concurrency=16; measured=2025-11-02T00:00:00.000Z; wip=False", 8,
			launch{kvCache: "fp8", gmu: 0.85, maxSeqs: 256, maxBatched: 16384, recv: [2]int{10, 30}, graphMax: 256}, true},
		{"SGLang DeepSeek-V3 (dsr1) fp4 B200 db dump measured 2025-11-10", "deepseek-ai/DeepSeek-V3", "fp4", "b200_sxm",
			"db-dump/2026-04-27; config_id=1; measured=2025-11-10T00:00:00.000Z; workflow_run_id=1", 4,
			launch{kvCache: "fp8", gmu: 0.85, maxSeqs: 256, maxBatched: 16384, recv: [2]int{10, 30}, graphMax: 256}, true},
		{"SGLang DeepSeek-R1 fp4 B200 another 2025-11 day: not claimed", "deepseek-ai/DeepSeek-R1", "fp4", "b200_sxm",
			"source_file=2026-04-06.csv; measured=2025-11-24T00:00:00.000Z; wip=False", 8, launch{}, false},
		{"SGLang DeepSeek-R1 fp8 B200 measured 2025-11-18 (tp_size slipped to 64)", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm",
			"source_file=2026-04-06.csv; measured=2025-11-18T00:00:00.000Z; wip=False", 64,
			launch{kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: 128}, true},
		{"SGLang DeepSeek-R1 fp8 B200 v0.5.6 (2025-12-31): d27433d", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm",
			"source_file=2026-03-25.csv; measured=2025-12-31T15:18:00Z; image=lmsysorg/sglang:v0.5.6-cu129-amd64", 8,
			launch{kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: 128}, true},
		{"SGLang DeepSeek-R1 fp8 B200 v0.5.6 another day: no script settled", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm",
			"source_file=2026-03-25.csv; measured=2026-01-12T00:00:00Z; image=lmsysorg/sglang:v0.5.6-cu129-amd64", 8, launch{}, false},
		{"SGLang DeepSeek-R1 fp8 B200 v0.5.6 TP 4: no such config", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm",
			"source_file=2026-03-25.csv; measured=2025-12-31T15:18:00Z; image=lmsysorg/sglang:v0.5.6-cu129-amd64", 4, launch{}, false},
		{"gpt-oss-120b B200 measured 2025-11-02, no image: v0.10.2 docker script", "openai/gpt-oss-120b", "fp4", "b200_sxm",
			"source_file=2026-04-06.csv; model=GPT-OSS-120B; measured=2025-11-02T00:00:00.000Z; wip=False", 8,
			launch{async: true, gmu: 0.9, maxSeqs: 512, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "FULL_AND_PIECEWISE", mxfp4Act: "mxfp8"}, true},
		{"gpt-oss-120b H100 measured 2025-11-02, no image: v0.10.2's default PIECEWISE", "openai/gpt-oss-120b", "fp4", "h100_sxm",
			"source_file=2026-04-06.csv; model=GPT-OSS-120B; measured=2025-11-02T00:00:00.000Z; wip=False", 8,
			launch{async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "PIECEWISE"}, true},
		{"gpt-oss-120b B200 2025-11-02 TRT rows: not vLLM's script", "openai/gpt-oss-120b", "fp4", "b200_sxm",
			"source_file=2026-04-06.csv; measured=2025-11-02T00:00:00.000Z; wip=False", 8, launch{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			backend := "vllm"
			if strings.Contains(tt.source, "sglang") || strings.HasPrefix(tt.name, "SGLang") || strings.Contains(tt.name, "TRT") {
				backend = map[bool]string{true: "trtllm", false: "sglang"}[strings.Contains(tt.name, "TRT")]
			}
			got, ok := launchOf(backend, tt.model, tt.precision, tt.system, tt.tp, 16, tt.source)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want.kvCache, got.kvCache)
			assert.Equal(t, tt.want.gmu, got.gmu)
			assert.Equal(t, tt.want.maxSeqs, got.maxSeqs)
			assert.Equal(t, tt.want.maxBatched, got.maxBatched)
			assert.Equal(t, tt.want.recv, got.recv)
			assert.Equal(t, tt.want.graphMax, got.graphMax)
			assert.Equal(t, tt.want.cudagraphMode, got.cudagraphMode)
			assert.Equal(t, tt.want.maxCapture, got.maxCapture)
			assert.Equal(t, tt.want.mxfp4Act, got.mxfp4Act)
			assert.Equal(t, tt.want.mxfp4Backend, got.mxfp4Backend)
			assert.Equal(t, tt.want.async, got.async, "async scheduling on the command line")
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
	_, ok := launchOf("sglang", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", 8, 64, "x; lmsysorg/sglang:v0.5.9-cu130")
	assert.True(t, ok)
	_, ok = launchOf("sglang", "deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", 8, 128, "x; lmsysorg/sglang:v0.5.9-cu130")
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

// TestLaunchOfRunMTP: a DeepSeek-R1 fp8 B200 TP 8 row with image
// v0.5.9-cu130 takes the MTP script when it is not a run of the dump's
// config, the plain script when it is; the MTP script runs TP 8 only and
// up to conc 512. Qwen3.5 fp8 B200's v0.5.9-cu130 image is the MTP
// config's alone.
func TestLaunchOfRunMTP(t *testing.T) {
	const r1, qwen = "deepseek-ai/DeepSeek-R1", "Qwen/Qwen3.5-397B-A17B"
	const src = "source_file=2026-03-25.csv; model=DeepSeek-R1; measured=2026-03-25T16:34:14Z; wip=False; image=lmsysorg/sglang:v0.5.9-cu130"
	mtp, ok := launchOfRun("sglang", r1, "fp8", "b200_sxm", 8, 4, src, false)
	require.True(t, ok)
	assert.Equal(t, "mtp", mtp.spec)
	assert.Equal(t, 2, mtp.draftTokens, "--speculative-num-draft-tokens 3 counts the verified root token")
	assert.Equal(t, 0.85, mtp.acceptance)
	assert.Equal(t, 16384, mtp.maxBatched)
	assert.Equal(t, 512, mtp.maxSeqs)
	assert.Equal(t, 0.82, mtp.gmu)
	assert.Equal(t, [2]int{10, 30}, mtp.recv)
	assert.Contains(t, mtp.source, "@ 12ba0ae benchmarks/single_node/dsr1_fp8_b200_mtp.sh")

	plain, ok := launchOfRun("sglang", r1, "fp8", "b200_sxm", 8, 4, src, true)
	require.True(t, ok)
	assert.Empty(t, plain.spec)
	assert.Equal(t, 32768, plain.maxBatched)
	assert.NotEqual(t, plain.name, mtp.name, "two command lines, two deployments")

	big, ok := launchOfRun("sglang", r1, "fp8", "b200_sxm", 8, 512, src, false)
	require.True(t, ok, "the MTP config ran conc 4-512")
	assert.Equal(t, "mtp", big.spec)
	_, ok = launchOfRun("sglang", r1, "fp8", "b200_sxm", 8, 1024, src, false)
	assert.False(t, ok)
	tp4, ok := launchOfRun("sglang", r1, "fp8", "b200_sxm", 4, 8, src, false)
	require.True(t, ok, "MTP only supports TP=8: a TP 4 row is the plain config's")
	assert.Empty(t, tp4.spec)
	_, ok = launchOfRun("sglang", r1, "fp8", "b200_sxm", 8, 4, "x; image=lmsysorg/sglang:v0.5.6-cu129-amd64", false)
	assert.False(t, ok, "another image")

	q, ok := launchOfRun("sglang", qwen, "fp8", "b200_sxm", 4, 16, "measured=2026-03-20T22:08:23Z; image=lmsysorg/sglang:v0.5.9-cu130", false)
	require.True(t, ok)
	assert.Equal(t, "mtp", q.spec)
	assert.Equal(t, 3, q.draftTokens)
	assert.Zero(t, q.acceptance, "Qwen3.5's MTP acceptance is not documented")
	q, ok = launchOfRun("sglang", qwen, "fp8", "b200_sxm", 4, 16, "measured=2026-03-24T00:52:21Z; image=lmsysorg/sglang:v0.5.9-cu130-amd64", false)
	require.True(t, ok)
	assert.Empty(t, q.spec, "the -amd64 image is the plain config's")
}

// TestDumpRuns: a CSV-export row with a dump row's figures (within 0.01
// ms) at the same setup is that dump config's run; other figures, or
// another setup, are not; DeepSeek-V3 dump rows count as DeepSeek-R1.
func TestDumpRuns(t *testing.T) {
	row := func(kv ...string) func(string) string {
		m := map[string]string{"model_path": "deepseek-ai/DeepSeek-R1", "precision": "fp8", "system": "b200_sxm", "backend": "sglang",
			"mode": "agg", "tp_size": "8", "attention_dp_size": "1", "moe_ep_size": "1", "isl": "1024", "osl": "1024", "batch_size": "4"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(c string) string { return m[c] }
	}
	const export = "source_file=2026-03-25.csv; image=lmsysorg/sglang:v0.5.9-cu130"
	d := dumpRuns{}
	d.add(row("model_path", "deepseek-ai/DeepSeek-V3", "silicon_data_source", "db-dump/2026-04-27; config_id=87; lmsysorg/sglang:v0.5.9-cu130",
		"silicon_tpot_ms", "8.759961", "silicon_ttft_ms", "183.1796"))
	d.add(row("silicon_data_source", export, "silicon_tpot_ms", "6.70", "silicon_ttft_ms", "206.7")) // not the dump's: not indexed
	assert.Len(t, d, 1)
	assert.True(t, d.dumpRun(row("silicon_data_source", export, "silicon_tpot_ms", "8.7599618", "silicon_ttft_ms", "183.1796007")))
	assert.False(t, d.dumpRun(row("silicon_data_source", export, "silicon_tpot_ms", "6.7032488", "silicon_ttft_ms", "206.7152357")))
	assert.False(t, d.dumpRun(row("silicon_data_source", export, "silicon_tpot_ms", "8.7599618", "silicon_ttft_ms", "190")), "both figures")
	assert.False(t, d.dumpRun(row("silicon_data_source", export, "batch_size", "8", "silicon_tpot_ms", "8.7599618", "silicon_ttft_ms", "183.1796007")))
	assert.False(t, d.dumpRun(row("silicon_data_source", "image=lmsysorg/sglang:v0.5.6-cu129-amd64", "silicon_tpot_ms", "8.7599618", "silicon_ttft_ms", "183.1796007")))
	assert.True(t, d.dumpRun(row("silicon_data_source", "db-dump/x; lmsysorg/sglang:v0.5.9-cu130")), "a dump row is its own config's run")
	assert.Equal(t, "lmsysorg/sglang:v0.5.9-cu130", imageOf("db-dump/2026-04-27; config_id=87; measured=2026-03-25T00:00:00.000Z; lmsysorg/sglang:v0.5.9-cu130"))
	assert.Equal(t, "vllm/vllm-openai:v0.19.0-cu130", imageOf("source_file=x.csv; wip=False; image=vllm/vllm-openai:v0.19.0-cu130"))
	assert.Empty(t, imageOf("source_file=qwen3.5-397b-gap-analysis.csv; silicon_concurrency=4"))
}

// TestScenarioTextSpeculative: a speculative command line writes
// [speculative] with its acceptance when one is documented, without it
// (the scenario then says what it lacks) when not.
func TestScenarioTextSpeculative(t *testing.T) {
	st := scenarioText{name: "x", config: "c.json", gpus: 8, tp: 8, dp: 1, ep: 1, engine: "sglang", spec: "mtp", draftTokens: 2, acceptance: []float64{0.85}}
	assert.Contains(t, st.String(), "\n[speculative]\nmethod = \"mtp\"\ndraft_tokens = 2\nacceptance = [0.85]\n")
	st.acceptance = nil
	assert.Contains(t, st.String(), "\n[speculative]\nmethod = \"mtp\"\ndraft_tokens = 2\n")
	assert.NotContains(t, st.String(), "acceptance")
	st.spec = ""
	assert.NotContains(t, st.String(), "[speculative]")
}

// TestGraphMaxAt: SGLang scripts' --cuda-graph-max-bs, a constant or the
// benchmark's concurrency ($CONC), written as runtime.cuda_graph_max_bs
// (vLLM's --max-cudagraph-capture-size is maxCapture, its own key); a
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
	vl := scenarioText{name: "x", config: "c.json", gpus: 1, tp: 1, dp: 1, ep: 1, engine: "vllm", maxCapture: 2048}.String()
	assert.Contains(t, vl, "max_cudagraph_capture_size = 2048\n")
	assert.NotContains(t, vl, "cuda_graph_max_bs")
	assert.NotContains(t, scenarioText{name: "x", engine: "sglang"}.String(), "cuda_graph_max_bs")
}

// TestSpecCopies: a row that no speculative deployment claims but whose
// TTFT and TPOT are both within 0.01 ms of a speculative row's at the same
// GPU, model, engine, precision, layout, lengths and concurrency is that
// row's copy; another figure, concurrency, layout or GPU is not, nor is a
// speculative row itself, nor a copy of a plain row.
func TestSpecCopies(t *testing.T) {
	header := []string{"model_path", "precision", "system", "backend", "mode", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size",
		"moe_ep_size", "isl", "osl", "batch_size", "silicon_data_source", "silicon_ttft_ms", "silicon_tpot_ms"}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	row := func(kv ...string) []string {
		m := map[string]string{"model_path": "Qwen/Qwen3.5-397B-A17B", "precision": "fp8", "system": "b200_sxm", "backend": "sglang", "mode": "agg",
			"tp_size": "4", "pp_size": "1", "attention_dp_size": "1", "moe_tp_size": "4", "moe_ep_size": "1", "isl": "1024", "osl": "1024", "batch_size": "4"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		r := make([]string, len(header))
		for i, h := range header {
			r[i] = m[h]
		}
		return r
	}
	get := func(rec []string) func(string) string { return func(c string) string { return rec[col[c]] } }
	const mtpSrc = "source_file=2026-03-25.csv; image=lmsysorg/sglang:v0.5.9-cu130"
	const gap = "source_file=qwen3.5-397b-gap-analysis.csv; silicon_concurrency=4"
	recs := [][]string{
		row("silicon_data_source", mtpSrc, "silicon_ttft_ms", "338.3364140507183", "silicon_tpot_ms", "6.332719125474412"),            // 0: MTP
		row("silicon_data_source", gap, "silicon_ttft_ms", "338.34", "silicon_tpot_ms", "6.33"),                                       // 1: its copy
		row("silicon_data_source", gap, "silicon_ttft_ms", "338.34", "silicon_tpot_ms", "6.35"),                                       // 2: TPOT 0.017 off
		row("silicon_data_source", gap, "batch_size", "8", "silicon_ttft_ms", "338.34", "silicon_tpot_ms", "6.33"),                    // 3: another concurrency
		row("silicon_data_source", gap, "tp_size", "8", "silicon_ttft_ms", "338.34", "silicon_tpot_ms", "6.33"),                       // 4: another layout
		row("silicon_data_source", gap, "system", "b300_sxm", "silicon_ttft_ms", "338.34", "silicon_tpot_ms", "6.33"),                 // 5: another GPU
		row("silicon_data_source", mtpSrc, "silicon_ttft_ms", "338.34", "silicon_tpot_ms", "6.33"),                                    // 6: MTP itself
		row("silicon_data_source", "image=x", "isl", "8192", "silicon_ttft_ms", "608.9100526005495", "silicon_tpot_ms", "6.57999349"), // 7: plain
		row("silicon_data_source", gap, "isl", "8192", "silicon_ttft_ms", "608.91", "silicon_tpot_ms", "6.58"),                        // 8: copy of a plain row
	}
	spec := []bool{true, false, false, false, false, false, true, false, false}
	assert.Equal(t, map[int]int{1: 0}, specCopies(recs, get, spec))
	spec[0] = false
	assert.Equal(t, map[int]int{0: 6, 1: 6}, specCopies(recs, get, spec), "the first speculative row of the setup within 0.01 ms")
}

// TestShippedSpecCopies: in the committed corpus, the aiconfigurator rows
// of qwen3.5-397b-gap-analysis.csv at B200 fp8 TP 4 (no speculative
// decoding recorded) are InferenceX's qwen3.5-fp8-b200-sglang-mtp rows:
// they sit in the MTP entries, whose scenarios say so, and no plain
// entry holds them.
func TestShippedSpecCopies(t *testing.T) {
	ents, err := os.ReadDir("../aiconfigurator")
	require.NoError(t, err)
	const base = "b200-sxm-sglang-qwen3.5-397b-a17b-fp8-block-tp4-dp1-ep1"
	gapID := regexp.MustCompile(`qwen3_5_397b_gap_analysis_b200_sxm_sglang_fp8_agg_\d+x\d+_c\d+_tp4_ep1_`)
	inMTP, inPlain := 0, 0
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".csv") {
			continue
		}
		b, err := os.ReadFile("../aiconfigurator/" + n)
		require.NoError(t, err)
		k := len(gapID.FindAllString(string(b), -1))
		if strings.HasPrefix(n, base+"-mtp-") {
			inMTP += k
			if k > 0 {
				sc, err := os.ReadFile("../aiconfigurator/" + strings.TrimSuffix(n, ".csv") + ".toml")
				require.NoError(t, err)
				assert.Contains(t, string(sc), fmt.Sprintf("# %d rows of other collections repeat this deployment's figures", k), n)
				assert.Contains(t, string(sc), "\n[speculative]\nmethod = \"mtp\"\n", n)
			}
		} else {
			inPlain += k
		}
	}
	assert.Equal(t, 21, inMTP, "1k/1k, 1k/8k and 8k/1k at C = 4 to 256")
	assert.Zero(t, inPlain, "no plain entry scores a copy of an MTP run")
	_, err = os.Stat("../aiconfigurator/" + base + ".csv")
	assert.True(t, os.IsNotExist(err), "the plain entry held only copies")
}

// TestLaunchOfTRTMTP: TensorRT-LLM release:1.2.0rc6.post3 on B200 is
// InferenceX's DeepSeek-R1 MTP configs' image (either notation), K = 3, 1
// at the attention-DP points (tp_size 1); post2, the plain configs', has
// no command line here.
func TestLaunchOfTRTMTP(t *testing.T) {
	const r1 = "deepseek-ai/DeepSeek-R1"
	for _, src := range []string{"measured=2026-02-05T00:00:00.000Z; image=nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3",
		"measured=2026-02-05T00:00:00.000Z; image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post3"} {
		for _, p := range []string{"fp8", "fp4"} {
			l, ok := launchOf("trtllm", r1, p, "b200_sxm", 8, 64, src)
			require.True(t, ok, src)
			assert.Equal(t, "mtp", l.spec)
			assert.Equal(t, 3, l.draftTokens)
			assert.Equal(t, 0.85, l.acceptance)
			assert.Equal(t, "fp8", l.kvCache)
			dp, ok := launchOf("trtllm", r1, p, "b200_sxm", 1, 256, src)
			require.True(t, ok)
			assert.Equal(t, 1, dp.draftTokens, "MTP=1 with DP_ATTENTION")
		}
	}
	l, _ := launchOf("trtllm", r1, "fp8", "b200_sxm", 8, 64, "image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post3")
	assert.Contains(t, l.source, "@ 5d517074c benchmarks/dsr1_fp8_b200_trt_mtp.sh")
	_, ok := launchOf("trtllm", r1, "fp8", "b200_sxm", 8, 64, "image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post2")
	assert.False(t, ok, "post2 is the plain config's")
	_, ok = launchOf("trtllm", r1, "fp8", "b300_sxm", 8, 64, "image=nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3")
	assert.False(t, ok)
	assert.True(t, sameImage("nvcr.io#nvidia/a:1", "nvcr.io/nvidia/a:1"))
	assert.False(t, sameImage("nvcr.io/nvidia/a:1", "nvcr.io/nvidia/a:2"))
}

// TestLaunchLayout: where the script proves the expert parallelism the
// engine ran differs from the record, the launch says so, and epAt gives
// the command line's ep; elsewhere the record stands.
func TestLaunchLayout(t *testing.T) {
	const kimi, mm, r1 = "moonshotai/Kimi-K2.5", "MiniMaxAI/MiniMax-M2.5", "deepseek-ai/DeepSeek-R1"
	tests := []struct {
		name, backend, model, precision, system, source string
		tp, recordedEP, wantEP                          int
		mode                                            epMode
	}{
		{"Kimi NVFP4 B200 a58dedd: no --enable-expert-parallel, ep 4 recorded", "vllm", kimi, "fp4", "b200_sxm",
			"source_file=2026-03-25.csv; measured=2026-03-11T16:59:40Z; image=vllm/vllm-openai:v0.17.0", 4, 4, 1, epOff},
		{"Kimi NVFP4 B200 a58dedd, the TP-EP slip (ep 16 recorded, 4 after the slip)", "vllm", kimi, "fp4", "b200_sxm",
			"db-dump/x; measured=2026-03-27T00:00:00.000Z; vllm/vllm-openai:v0.17.0", 4, 4, 1, epOff},
		{"Kimi NVFP4 B200 6c3aceb", "vllm", kimi, "fp4", "b200_sxm",
			"db-dump/x; measured=2026-04-20T00:00:00.000Z; vllm/vllm-openai:v0.17.0", 4, 4, 1, epOff},
		{"DeepSeek-R1 NVFP4 B200 SGLang 2025-11-02: --enable-ep-moe, ep 1 recorded", "sglang", r1, "fp4", "b200_sxm",
			"source_file=x.csv; measured=2025-11-02T00:00:00.000Z", 8, 1, 8, epTP},
		{"DeepSeek-R1 NVFP4 B200 SGLang 2025-11-10, TP 4", "sglang", r1, "fp4", "b200_sxm",
			"source_file=x.csv; measured=2025-11-10T00:00:00.000Z", 4, 1, 4, epTP},
		{"MiniMax fp8 B200 v0.17.0-cu130: EP_SIZE -ge 1, ep 1 recorded", "vllm", mm, "fp8", "b200_sxm",
			"source_file=x.csv; measured=2026-03-11T18:39:31Z; image=vllm/vllm-openai:v0.17.0-cu130", 2, 1, 2, epTP},
		{"MiniMax fp8 B200 v0.19.0-cu130: EP_SIZE -gt 1, the record stands", "vllm", mm, "fp8", "b200_sxm",
			"source_file=x.csv; image=vllm/vllm-openai:v0.19.0-cu130", 2, 1, 1, epAsRecorded},
		{"MiniMax fp8 B200 v0.19.0-cu130 ep 2: the record stands", "vllm", mm, "fp8", "b200_sxm",
			"source_file=x.csv; image=vllm/vllm-openai:v0.19.0-cu130", 2, 2, 2, epAsRecorded},
		{"DeepSeek-R1 NVFP4 B200 SGLang v0.5.9: --ep-size $EP_SIZE, the record stands", "sglang", r1, "fp4", "b200_sxm",
			"x; lmsysorg/sglang:v0.5.9-cu130", 4, 4, 4, epAsRecorded},
		{"DeepSeek-R1 fp8 B200 SGLang v0.5.6: --ep-size $EP_SIZE, the record stands", "sglang", r1, "fp8", "b200_sxm",
			"x; measured=2025-12-31T15:18:00Z; image=lmsysorg/sglang:v0.5.6-cu129-amd64", 8, 1, 1, epAsRecorded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := launchOf(tt.backend, tt.model, tt.precision, tt.system, tt.tp, 16, tt.source)
			require.True(t, ok)
			assert.Equal(t, tt.mode, l.ep)
			assert.Equal(t, tt.wantEP, l.epAt(tt.tp, tt.recordedEP))
			if tt.mode != epAsRecorded {
				assert.Contains(t, l.epWhy, " @ ", "the script or engine source, file @ commit")
			} else {
				assert.Empty(t, l.epWhy)
			}
		})
	}
	assert.Equal(t, 3, launch{}.epAt(8, 3), "no launch layout: the record")
}

// TestShippedLaunchLayout holds the layouts on the committed corpus: each
// scenario whose script proves another expert parallelism than its rows
// record runs the script's, and keeps the record in a comment.
func TestShippedLaunchLayout(t *testing.T) {
	for _, tt := range []struct {
		file, parallel, recorded string
	}{
		{"b200-sxm-vllm-kimi-k2.5-nvfp4-tp4-dp1-ep4-0.17.0", "tp = 4\ndp = 1\nep = 1\n", "Recorded layout tp4-dp1-ep4 "},
		{"b200-sxm-vllm-kimi-k2.5-nvfp4-tp4-dp4-ep16", "tp = 4\ndp = 1\nep = 1\n", "Recorded layout tp4-dp4-ep16 "},
		{"b200-sxm-sglang-deepseek-r1-nvfp4-tp4-dp1-ep1-recv30", "tp = 4\ndp = 1\nep = 4\n", "Recorded layout tp4-dp1-ep1 "},
		{"b200-sxm-sglang-deepseek-r1-nvfp4-tp8-dp1-ep1-recv10", "tp = 8\ndp = 1\nep = 8\n", "Recorded layout tp8-dp1-ep1 "},
		{"b200-sxm-sglang-deepseek-v3-nvfp4-tp8-dp1-ep1-recv30", "tp = 8\ndp = 1\nep = 8\n", "Recorded layout tp8-dp1-ep1 "},
		{"b200-sxm-vllm-minimax-m2.5-fp8-tp2-dp1-ep1", "tp = 2\ndp = 1\nep = 2\n", "Recorded layout tp2-dp1-ep1 "},
		{"b200-sxm-vllm-minimax-m2.5-fp8-tp4-dp1-ep1", "tp = 4\ndp = 1\nep = 4\n", "Recorded layout tp4-dp1-ep1 "},
		{"b200-sxm-vllm-minimax-m2.5-nvfp4-tp2-dp2-ep4-dpattn", "tp = 1\ndp = 2\nep = 2\n", "Recorded layout tp2-dp2-ep4 "},
		{"b300-sxm-vllm-minimax-m2.5-nvfp4-tp2-dp2-ep4-dpattn", "tp = 1\ndp = 2\nep = 2\n", "Recorded layout tp2-dp2-ep4 "},
		// The record stands: the scripts pass --ep-size $EP_SIZE or test -gt 1.
		{"b200-sxm-sglang-deepseek-r1-nvfp4-tp4-dp1-ep4-recv30", "tp = 4\ndp = 1\nep = 4\n", ""},
		{"b200-sxm-vllm-minimax-m2.5-fp8-tp2-dp1-ep1-0.19.0", "tp = 2\ndp = 1\nep = 1\n", ""},
		{"b200-sxm-vllm-kimi-k2.5-nvfp4-tp8-dp1-ep1-0.17.0", "tp = 8\ndp = 1\nep = 1\n", ""},
		// The TP-EP entries' rows (the vLLM DP slip: tp2 ep2).
		{"b200-sxm-vllm-minimax-m2.5-nvfp4-tp2-dp2-ep4", "tp = 2\ndp = 1\nep = 2\n", ""},
		{"b300-sxm-vllm-minimax-m2.5-nvfp4-tp2-dp2-ep4", "tp = 2\ndp = 1\nep = 2\n", ""},
	} {
		b, err := os.ReadFile("../aiconfigurator/" + tt.file + ".toml")
		require.NoError(t, err, tt.file)
		sc := string(b)
		assert.Contains(t, sc, "\n[parallel]\n"+tt.parallel, tt.file)
		if tt.recorded != "" {
			assert.Contains(t, sc, "# "+tt.recorded, tt.file)
			assert.Contains(t, sc, "not the record's (gen: launch layout)", tt.file)
		} else {
			assert.NotContains(t, sc, "gen: launch layout", tt.file)
		}
	}
}

// TestDPAttnRun: a MiniMax-M2.5 NVFP4 row is the script's DP_ATTENTION=true
// run when its dump config id is the config's dp-attn entry, matched
// whole; the committed corpus splits those rows into their own
// deployments, and the TP-EP deployments keep none of them.
func TestDPAttnRun(t *testing.T) {
	const mm = "MiniMaxAI/MiniMax-M2.5"
	src := func(id string) string {
		return "db-dump/2026-04-27; config_id=" + id + "; silicon_concurrency=512; measured=2026-04-22T00:00:00.000Z; workflow_run_id=802; vllm/vllm-openai:v0.19.0-cu130"
	}
	l, ok := launchOf("vllm", mm, "fp4", "b200_sxm", 2, 512, src("707"))
	require.True(t, ok)
	assert.True(t, l.dpAttnRun(src("707")))
	assert.False(t, l.dpAttnRun(src("706")), "the TP-EP entry")
	assert.False(t, l.dpAttnRun(src("7070")), "the id matched whole")
	assert.False(t, l.dpAttnRun("source_file=x.csv; image=vllm/vllm-openai:v0.19.0-cu130"), "no config id")
	assert.Contains(t, l.dpAttnWhy, "@ 13962fc")
	b3, ok := launchOf("vllm", mm, "fp4", "b300_sxm", 2, 512, src("727"))
	require.True(t, ok)
	assert.True(t, b3.dpAttnRun(src("727")))
	assert.False(t, b3.dpAttnRun(src("707")), "B200's id is not B300's")
	fp8, ok := launchOf("vllm", mm, "fp8", "b300_sxm", 2, 1024, src("827"))
	require.True(t, ok)
	assert.False(t, fp8.dpAttnRun(src("827")), "minimaxm2.5_fp8_b300.sh reads no DP_ATTENTION: its dp-attn config ran TP-EP")

	read := func(f string) string {
		b, err := os.ReadFile("../aiconfigurator/" + f)
		require.NoError(t, err, f)
		return string(b)
	}
	for gpu, id := range map[string]string{"b200": "707", "b300": "727"} {
		base := gpu + "-sxm-vllm-minimax-m2.5-nvfp4-tp2-dp2-ep4"
		dpa, tpep := read(base+"-dpattn.csv"), read(base+".csv")
		n := strings.Count(dpa, "\n") - 1
		require.Positive(t, n)
		assert.Equal(t, n, strings.Count(dpa, "config_id="+id+";"), "every row the dp-attn config's")
		assert.NotContains(t, tpep, "config_id="+id+";")
	}
}

// TestClientCapped: the gpt-oss-120b H100 docker script's rows recorded at
// the client's fixed --max-concurrency 512 are their own deployment
// ("client512") and name why; a row of the same script that records its
// $CONC is not capped, nor is any row of a script that passes $CONC.
func TestClientCapped(t *testing.T) {
	const src = "source_file=2026-04-06.csv; model=GPT-OSS-120B; silicon_concurrency=512; measured=2025-12-08T00:00:00.000Z; wip=False; image=vllm/vllm-openai:v0.11.2"
	l, ok := launchOf("vllm", "openai/gpt-oss-120b", "fp4", "h100_sxm", 8, 512, src)
	require.True(t, ok)
	assert.True(t, l.clientCapped(512))
	assert.Equal(t, "client512", l.variant(512))
	assert.False(t, l.clientCapped(64))
	assert.Equal(t, "", l.variant(64))
	assert.Contains(t, l.clientWhy, "--max-concurrency 512")
	assert.Contains(t, l.source, "25506e8 benchmarks/gptoss_fp4_h100_docker.sh")
	// v0.18.0's single_node script passes --max-concurrency "$CONC".
	l, ok = launchOf("vllm", "openai/gpt-oss-120b", "fp4", "h100_sxm", 8, 64, "source_file=2026-03-25.csv; measured=2026-03-27T08:01:51Z; image=vllm/vllm-openai:v0.18.0")
	require.True(t, ok)
	assert.False(t, l.clientCapped(64))
	assert.Equal(t, 0, l.clientConc)
}

// TestShippedClientCapped: the committed corpus holds no scenario for a
// capped row (gen skips its deployment), and the manifest names the skip.
func TestShippedClientCapped(t *testing.T) {
	for _, f := range []string{"h100-sxm-vllm-gpt-oss-120b-nvfp4-tp2-dp1-ep1-v0.11.2", "h100-sxm-vllm-gpt-oss-120b-nvfp4-tp8-dp1-ep1-v0.11.0"} {
		_, err := os.Stat("../aiconfigurator/" + f + ".toml")
		assert.True(t, os.IsNotExist(err), f)
		_, err = os.Stat("../aiconfigurator/" + f + ".csv")
		assert.NoError(t, err, f)
	}
	b, err := os.ReadFile("../manifest.toml")
	require.NoError(t, err)
	assert.Equal(t, 6, strings.Count(string(b), "concurrency not recorded: the row's concurrency 512 is the benchmark client's fixed --max-concurrency 512"))
}

// TestLaunchOfH200: each InferenceX H200 entry resolves for a row naming
// its image (or, without one, measured on a date its image was in force)
// and not for the neighbouring image or date.
func TestLaunchOfH200(t *testing.T) {
	const gptoss, dsr1, h200 = "openai/gpt-oss-120b", "deepseek-ai/DeepSeek-R1", "h200_sxm"
	dump := func(image string) string {
		return "db-dump/2026-04-27; config_id=1; silicon_concurrency=8; measured=2026-03-30T00:00:00.000Z; " + image
	}
	csv := func(date string) string {
		return "source_file=2026-04-06.csv; silicon_concurrency=8; measured=" + date + "T00:00:00.000Z; wip=False"
	}
	gptossMarlin := launch{gmu: 0.9, maxBatched: 8192, maxCapture: 2048, mxfp4Backend: "marlin"}
	dsr1L := launch{gmu: 0.82, maxBatched: 32768}
	tests := []struct {
		name, backend, model, precision, source string
		tp, conc                                int
		wantName                                string
		want                                    launch
	}{
		{"gpt-oss v0.10.2 by date", "vllm", gptoss, "fp4", csv("2025-11-02"), 2, 8, "inferencex-v0.10.2",
			launch{async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "PIECEWISE"}},
		{"gpt-oss v0.11.0 by image", "vllm", gptoss, "fp4", "x.csv; image=vllm/vllm-openai:v0.11.0", 4, 8, "inferencex-v0.11.0",
			launch{async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "PIECEWISE"}},
		{"gpt-oss v0.11.0 by date", "vllm", gptoss, "fp4", csv("2025-11-18"), 4, 8, "inferencex-v0.11.0",
			launch{async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "PIECEWISE"}},
		{"gpt-oss v0.11.2 by date: the image's default graphs", "vllm", gptoss, "fp4", csv("2025-12-15"), 8, 8, "inferencex-v0.11.2",
			launch{async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048}},
		{"gpt-oss v0.13.0: Marlin and async", "vllm", gptoss, "fp4", dump("vllm/vllm-openai:v0.13.0"), 1, 4, "inferencex-v0.13.0",
			launch{async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, mxfp4Backend: "marlin"}},
		{"gpt-oss v0.13.0 by date", "vllm", gptoss, "fp4", csv("2026-02-10"), 2, 64, "inferencex-v0.13.0",
			launch{async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, mxfp4Backend: "marlin"}},
		{"gpt-oss v0.15.1: no async flag", "vllm", gptoss, "fp4", dump("vllm/vllm-openai:v0.15.1"), 2, 64, "inferencex-v0.15.1", gptossMarlin},
		{"gpt-oss v0.16.0-cu130", "vllm", gptoss, "fp4", dump("vllm/vllm-openai:v0.16.0-cu130"), 2, 64, "inferencex-v0.16.0", gptossMarlin},
		{"gpt-oss v0.18.0", "vllm", gptoss, "fp4", "x.csv; image=vllm/vllm-openai:v0.18.0", 8, 16, "inferencex-v0.18.0", gptossMarlin},
		{"gpt-oss above conc-end", "vllm", gptoss, "fp4", dump("vllm/vllm-openai:v0.18.0"), 8, 128, "", launch{}},
		{"gpt-oss TRT rows of a vLLM date", "trtllm", gptoss, "fp4", csv("2025-11-02"), 8, 8, "", launch{}},
		{"gpt-oss date between images (2025-11-04)", "vllm", gptoss, "fp4", csv("2025-11-04"), 8, 8, "", launch{}},
		{"gpt-oss date after the dated table", "vllm", gptoss, "fp4", csv("2026-02-25"), 8, 8, "", launch{}},
		{"gpt-oss image not InferenceX's on H200", "vllm", gptoss, "fp4", dump("vllm/vllm-openai:v0.17.0"), 8, 8, "", launch{}},
		{"DeepSeek-R1 v0.5.9-cu130 (db dump's DeepSeek-V3)", "sglang", "deepseek-ai/DeepSeek-V3", "fp8", dump("lmsysorg/sglang:v0.5.9-cu130"), 8, 64,
			"inferencex-v0.5.9", dsr1L},
		{"DeepSeek-R1 v0.5.7", "sglang", dsr1, "fp8", "x.csv; image=lmsysorg/sglang:v0.5.7-cu129-amd64", 8, 4, "inferencex-v0.5.7", dsr1L},
		{"DeepSeek-R1 v0.5.2rc2 by date", "sglang", dsr1, "fp8", csv("2025-11-02"), 8, 32, "inferencex-v0.5.2rc2", dsr1L},
		{"DeepSeek-R1 v0.5.5 by date", "sglang", dsr1, "fp8", csv("2025-11-18"), 8, 32, "inferencex-v0.5.5", dsr1L},
		{"DeepSeek-R1 2025-11-10: two images that day", "sglang", dsr1, "fp8", csv("2025-11-10"), 8, 32, "", launch{}},
		{"DeepSeek-R1 2025-12-31: two images that day", "sglang", dsr1, "fp8", csv("2025-12-31"), 8, 32, "", launch{}},
		{"DeepSeek-R1 above conc-end", "sglang", dsr1, "fp8", dump("lmsysorg/sglang:v0.5.9-cu130"), 8, 128, "", launch{}},
		{"MiniMax v0.16.0 TP 4: no EP flag", "vllm", "MiniMaxAI/MiniMax-M2.5", "fp8", dump("vllm/vllm-openai:v0.16.0"), 4, 64, "inferencex-v0.16.0",
			launch{gmu: 0.95, ep: epOff}},
		{"MiniMax v0.16.0 TP 8: EP over TP", "vllm", "MiniMaxAI/MiniMax-M2.5", "fp8", dump("vllm/vllm-openai:v0.16.0"), 8, 128, "inferencex-v0.16.0-ep",
			launch{gmu: 0.95, ep: epTP}},
		{"MiniMax v0.18.0", "vllm", "MiniMaxAI/MiniMax-M2.5", "fp8", dump("vllm/vllm-openai:v0.18.0"), 8, 16, "inferencex-v0.18.0",
			launch{gmu: 0.95, ep: epTP}},
		{"Kimi-K2.5 INT4 v0.16.0", "vllm", "moonshotai/Kimi-K2.5", "int4", dump("vllm/vllm-openai:v0.16.0"), 8, 16, "inferencex-v0.16.0",
			launch{gmu: 0.95, ep: epOff}},
		{"Qwen3.5 fp8 v0.5.9-cu129", "sglang", "Qwen/Qwen3.5-397B-A17B", "fp8", dump("lmsysorg/sglang:v0.5.9-cu129-amd64"), 8, 16, "inferencex-v0.5.9-cu129",
			launch{kvCache: "fp8", gmu: 0.8, maxSeqs: 128, maxBatched: 16384, graphMax: graphAtConc}},
		{"Qwen3.5 fp8 v0.5.9-cu129 in the MTP config's week", "sglang", "Qwen/Qwen3.5-397B-A17B", "fp8",
			"db-dump/x; measured=2026-04-10T00:00:00.000Z; lmsysorg/sglang:v0.5.9-cu129-amd64", 8, 16, "", launch{}},
		{"GLM-5 glm5-hopper", "sglang", "zhipuai/GLM-5", "fp8", dump("lmsysorg/sglang:glm5-hopper"), 8, 64, "inferencex-glm5-hopper", launch{gmu: 0.85}},
		{"Llama-3.3-70B FP8 2025-10-29", "vllm", "meta-llama/Llama-3.1-70B", "fp8", csv("2025-10-29"), 4, 16, "inferencex-v0.10.2",
			launch{async: true, kvCache: "fp8", gmu: 0.9, maxBatched: 8192, cudagraphMode: "PIECEWISE"}},
		{"Llama-3.3-70B FP8 another date", "vllm", "meta-llama/Llama-3.1-70B", "fp8", csv("2025-10-30"), 4, 16, "", launch{}},
		{"an H200 image on H100: not the H200 entry", "sglang", "zhipuai/GLM-5", "fp8", dump("lmsysorg/sglang:glm5-hopper"), 8, 64, "", launch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			system := h200
			if strings.Contains(tt.name, "on H100") {
				system = "h100_sxm"
			}
			got, ok := launchOf(tt.backend, tt.model, tt.precision, system, tt.tp, tt.conc, tt.source)
			require.Equal(t, tt.wantName != "", ok)
			assert.Equal(t, tt.wantName, got.name)
			if !ok {
				return
			}
			assert.Contains(t, got.source, "SemiAnalysisAI/InferenceX @ ")
			if tt.want.ep != epAsRecorded {
				assert.NotEmpty(t, got.epWhy)
			}
			got.name, got.source, got.epWhy = "", "", ""
			assert.Equal(t, tt.want, got)
		})
	}
}
