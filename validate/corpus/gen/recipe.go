package main

import (
	"fmt"
	"strconv"
	"strings"
)

// recipe is the layout of a disaggregated deployment's two pools as its
// launch recipe starts them, for aiconfigurator rows that InferenceX's
// multi-node harness measured (the db-dump rows name the InferenceX
// config_id, workflow run and image). For these deployments the dump's
// layout columns are not the layout that ran: InferenceX's
// nvidia-master.yaml gives each multi-node SGLang config placeholder
// tp/ep/dp-attn fields ("tp, ep, and dp-attn do nothing because they are
// hardcoded in the following file", dsr1-fp8-gb200-dynamo-sglang @
// c4cde03) and the dump derives attention_dp_size and moe_ep_size from
// them (tp 1, ep 1, dp-attn true: "tp1-dp32-ep1" for a 32-GPU pool whose
// recipe runs --tp-size 32 --dp-size 32 --ep-size 32 with DeepEP), and it
// records vLLM's data-parallel pools (--data-parallel-size 16
// --enable-expert-parallel) as tp 16 without attention DP. The recipe's
// layout is used; the entry keeps the dump's layout in its name.
type recipe struct {
	image, system, model string
	config, run          int // the InferenceX config_id and workflow_run_id the rows name
	// isl, where not 0, is the input length of the rows the recipe ran:
	// a config whose rows of each length ran a recipe of their own.
	isl             int
	prefill, decode recipePool
	kvCache         string // --kv-cache-dtype of both pools ("fp8"); "" = not set
	source          string // the recipe, repository @ commit, and the InferenceX config that ran it
	// kvOnly: the recipes agree with the dump's layout columns: their
	// KV-cache dtype and the pools' engine settings (maxSeqs, recv,
	// maxTotal, memFraction) are taken, the pools' layouts stay as
	// recorded. Config 0: every config of the run; a config's own entry
	// is listed before its run's.
	kvOnly bool
}

// recipePool is one pool's layout: tp x dp GPUs per instance, attention
// DP where dp > 1, the experts over ep ranks, its --moe-a2a-backend
// ("deepep"; "" = the engine's default) and its --max-num-seqs (SGLang:
// --max-running-requests; 0 = not set), and its SGLang
// --scheduler-recv-interval, --max-total-tokens, --mem-fraction-static,
// --chunked-prefill-size and --max-prefill-tokens (0 = not set).
type recipePool struct {
	tp, dp, ep  int
	a2a         string
	maxSeqs     int
	recv        int
	maxTotal    int
	memFraction float64
	chunk       int
	maxPrefill  int
}

const (
	srtSlurmQ4 = "NVIDIA/srt-slurm @ ea5311f (2025-12-24) recipies/"
	srtSlurmQ2 = "NVIDIA/srt-slurm @ 19a48cc (branch sa-submission-q2-2026) recipes/vllm/kimi-k2.5/"
	ixSGLang   = "SemiAnalysisAI/InferenceX @ c4cde03 .github/configs/nvidia-master.yaml"
	ixKimi     = "SemiAnalysisAI/InferenceX @ 235b232 .github/configs/nvidia-master.yaml kimik2.5-fp4-gb200-dynamo-vllm"
	// run 329's recipes (recipes/b200-fp8/{1k1k,8k1k}.yaml, one file of
	// variants each) and the prefill pool every 8k1k variant shares.
	srtSlurmB200  = "NVIDIA/srt-slurm @ 603fb03 recipes/b200-fp8/"
	b200Prefill8k = "prefill --tensor-parallel-size 8 --data-parallel-size 8 --enable-dp-attention --max-running-requests 8 --mem-fraction-static 0.6 " +
		"--chunked-prefill-size 65536 --max-prefill-tokens 8192"
	ixB200 = ", named by SemiAnalysisAI/InferenceX @ 593fb43 .github/configs/nvidia-master.yaml dsr1-fp8-b200-dynamo-sglang"
)

var recipes = []recipe{
	// SGLang 0.5.5.post2 on GB200 (workflow 227, 2025-12-21): the
	// dynamo-sglang configs, whose flags the srt-slurm recipes of that
	// container carry.
	{image: "lmsysorg/sglang:v0.5.5.post2", system: "gb200", model: "deepseek-ai/DeepSeek-V3", config: 254, run: 227,
		prefill: recipePool{tp: 4, dp: 1, ep: 1, maxSeqs: 30000, memFraction: 0.95, maxTotal: 131072, chunk: 131072, maxPrefill: 524288}, decode: recipePool{tp: 1, dp: 32, ep: 32, a2a: "deepep", maxSeqs: 16384, memFraction: 0.83, maxTotal: 524288, chunk: 24576}, kvCache: "fp8",
		source: srtSlurmQ4 + "gb200-fp4/8k1k/max-tpt.yaml (10 prefill workers --tp-size 4 --dp-size 1 --ep-size 1; decode 8 nodes --tp-size 32 " +
			"--dp-size 32 --ep-size 32 --enable-dp-attention --moe-a2a-backend deepep --deepep-mode low_latency; --kv-cache-dtype fp8_e4m3; " +
			"concurrencies 1024x2048x8192), run by " + ixSGLang + " dsr1-fp4-gb200-dynamo-sglang (PREFILL_NODES=10, DECODE_NODES=8, SCRIPT_MODE=8k1k-max-tpt)"},
	{image: "lmsysorg/sglang:v0.5.5.post2", system: "gb200", model: "deepseek-ai/DeepSeek-V3", config: 259, run: 227,
		prefill: recipePool{tp: 1, dp: 4, ep: 4, maxSeqs: 30000, memFraction: 0.84, maxTotal: 131072, chunk: 65536, maxPrefill: 32768}, decode: recipePool{tp: 1, dp: 32, ep: 32, a2a: "deepep", maxSeqs: 67584, memFraction: 0.83, maxTotal: 3122380, chunk: 786432}, kvCache: "fp8",
		source: srtSlurmQ4 + "gb200-fp4/1k1k/mid-curve.yaml (4 prefill workers --tp-size 4 --dp-size 4 --ep-size 4 --enable-dp-attention; decode 8 nodes " +
			"--tp-size 32 --dp-size 32 --ep-size 32 --enable-dp-attention --moe-a2a-backend deepep --deepep-mode low_latency; --kv-cache-dtype fp8_e4m3), run by " +
			ixSGLang + " dsr1-fp4-gb200-dynamo-sglang (4 prefill workers on PREFILL_NODES=4, DECODE_NODES=8: concurrencies 8192, 12000, 15000)"},
	{image: "lmsysorg/sglang:v0.5.5.post2", system: "gb200", model: "deepseek-ai/DeepSeek-V3", config: 252, run: 227,
		prefill: recipePool{tp: 4, dp: 1, ep: 1, maxSeqs: 512, memFraction: 0.95, maxTotal: 8192, recv: 10, chunk: 8192}, decode: recipePool{tp: 4, dp: 1, ep: 1, memFraction: 0.95, recv: 10, chunk: 8192}, kvCache: "fp8",
		source: srtSlurmQ4 + "gb200-fp4/1k1k/low-latency.yaml (prefill and each of 2 decode workers --tensor-parallel-size 4 --data-parallel-size 1 " +
			"--expert-parallel-size 1, no DP attention; --kv-cache-dtype fp8_e4m3), run by " + ixSGLang + " dsr1-fp4-gb200-dynamo-sglang (SCRIPT_MODE=1k1k-low-latency)"},
	{image: "lmsysorg/sglang:v0.5.5.post2", system: "gb200", model: "deepseek-ai/DeepSeek-V3", config: 255, run: 227,
		prefill: recipePool{tp: 4, dp: 1, ep: 1, maxSeqs: 512, memFraction: 0.95, maxTotal: 32768, recv: 10, chunk: 24576}, decode: recipePool{tp: 4, dp: 1, ep: 1, memFraction: 0.95, recv: 10, chunk: 8192}, kvCache: "fp8",
		source: srtSlurmQ4 + "gb200-fp4/8k1k/low-latency.yaml (prefill and each of 4 decode workers --tensor-parallel-size 4 --expert-parallel-size 1 " +
			"--enable-dp-attention false; --kv-cache-dtype fp8_e4m3), run by " + ixSGLang + " dsr1-fp4-gb200-dynamo-sglang (SCRIPT_MODE=8k1k-low-latency)"},
	{image: "lmsysorg/sglang:v0.5.5.post2", system: "gb200", model: "deepseek-ai/DeepSeek-V3", config: 253, run: 227,
		prefill: recipePool{tp: 1, dp: 8, ep: 8, a2a: "deepep", maxSeqs: 30000, memFraction: 0.80, maxTotal: 524288, chunk: 131072}, decode: recipePool{tp: 1, dp: 32, ep: 32, a2a: "deepep", maxSeqs: 8192, memFraction: 0.82, chunk: 36864}, kvCache: "fp8",
		source: srtSlurmQ4 + "gb200-fp8/8k1k/mid-curve-5p1d.yaml (5 prefill workers on 10 nodes --tp-size 8 --dp-size 8 --ep-size 8 --enable-dp-attention " +
			"--moe-a2a-backend deepep; decode 8 nodes --tp-size 32 --dp-size 32 --ep-size 32 --moe-a2a-backend deepep; --kv-cache-dtype fp8_e4m3; " +
			"concurrencies 512x1024x2048x6144), run by " + ixSGLang + " dsr1-fp8-gb200-dynamo-sglang"},
	{image: "lmsysorg/sglang:v0.5.5.post2", system: "gb200", model: "deepseek-ai/DeepSeek-V3", config: 236, run: 227,
		prefill: recipePool{tp: 1, dp: 8, ep: 8, a2a: "deepep", maxSeqs: 30000, memFraction: 0.75, maxTotal: 524288, chunk: 131072}, decode: recipePool{tp: 1, dp: 32, ep: 32, a2a: "deepep", maxSeqs: 45000, memFraction: 0.82, chunk: 36864}, kvCache: "fp8",
		source: srtSlurmQ4 + "gb200-fp8/1k1k/max-tpt-2p1d.yaml (2 prefill workers on 4 nodes --tp-size 8 --dp-size 8 --ep-size 8 --enable-dp-attention " +
			"--moe-a2a-backend deepep; decode 8 nodes --tp-size 32 --dp-size 32 --ep-size 32 --moe-a2a-backend deepep; --kv-cache-dtype fp8_e4m3), run by " +
			ixSGLang + " dsr1-fp8-gb200-dynamo-sglang (top of curve, concurrency 4096)"},
	{image: "lmsysorg/sglang:v0.5.5.post2", system: "gb200", model: "deepseek-ai/DeepSeek-V3", config: 227, run: 227,
		prefill: recipePool{tp: 4, dp: 1, ep: 1, maxSeqs: 512, memFraction: 0.95, maxTotal: 8192, recv: 10, chunk: 8192}, decode: recipePool{tp: 4, dp: 1, ep: 1, maxSeqs: 512, memFraction: 0.95, recv: 10, chunk: 8192}, kvCache: "fp8",
		source: srtSlurmQ4 + "gb200-fp8/1k1k/low-latency.yaml (prefill and each of 4 decode workers --tensor-parallel-size 4 --data-parallel-size 1 " +
			"--expert-parallel-size 1, no DP attention; --kv-cache-dtype fp8_e4m3), run by " + ixSGLang + " dsr1-fp8-gb200-dynamo-sglang (bottom of curve)"},
	// vLLM 0.18.0 on GB200 (workflow 721): Kimi-K2.5 through Dynamo. Each
	// recipe starts the prefill pool with --max-num-batched-tokens 16384
	// and the decode pool with 10240 (both --no-enable-chunked-prefill).
	{image: "vllm/vllm-openai:v0.18.0-cu130", system: "gb200", model: "moonshotai/Kimi-K2.5", config: 697, run: 721,
		prefill: recipePool{tp: 1, dp: 4, ep: 4, maxSeqs: 4096, chunk: 16384}, decode: recipePool{tp: 1, dp: 16, ep: 16, maxSeqs: 4096, chunk: 10240}, kvCache: "fp8",
		source: srtSlurmQ2 + "1k1k/disagg-gb200-1p1d-dep4-dep16.yaml (prefill --tensor-parallel-size 1 --data-parallel-size 4 --enable-expert-parallel; " +
			"decode --tensor-parallel-size 1 --data-parallel-size 16 --enable-expert-parallel; --kv-cache-dtype fp8), run by " + ixKimi +
			" (decode tp 16, ep 16, dp-attn true)"},
	{image: "vllm/vllm-openai:v0.18.0-cu130", system: "gb200", model: "moonshotai/Kimi-K2.5", config: 698, run: 721, isl: 1024,
		prefill: recipePool{tp: 1, dp: 4, ep: 4, maxSeqs: 1024, chunk: 16384}, decode: recipePool{tp: 4, dp: 1, ep: 4, maxSeqs: 1024, chunk: 10240}, kvCache: "fp8",
		source: srtSlurmQ2 + "1k1k/disagg-gb200-1p4d-dep4-tep4.yaml (prefill --tensor-parallel-size 1 --data-parallel-size 4 --enable-expert-parallel " +
			"--max-num-seqs 1024; each of 4 decode workers --tensor-parallel-size 4 --enable-expert-parallel --max-num-seqs 1024; --kv-cache-dtype fp8), run by " +
			ixKimi + " (prefill dp-attn true, decode dp-attn false)"},
	{image: "vllm/vllm-openai:v0.18.0-cu130", system: "gb200", model: "moonshotai/Kimi-K2.5", config: 698, run: 721, isl: 8192,
		prefill: recipePool{tp: 1, dp: 4, ep: 4, maxSeqs: 64, chunk: 16384}, decode: recipePool{tp: 4, dp: 1, ep: 4, maxSeqs: 16, chunk: 10240}, kvCache: "fp8",
		source: srtSlurmQ2 + "8k1k/disagg-gb200-1p4d-dep4-tep4.yaml (prefill --tensor-parallel-size 1 --data-parallel-size 4 --enable-expert-parallel " +
			"--max-num-seqs 64; each of 4 decode workers --tensor-parallel-size 4 --enable-expert-parallel --max-num-seqs 16 " +
			"--max-cudagraph-capture-size 16; --kv-cache-dtype fp8), run by " + ixKimi + " (prefill dp-attn true, decode dp-attn false)"},
	// SGLang 0.5.8.post1 DeepSeek-R1 fp8 on B200, GB200 and GB300: every
	// recipe these runs' configs name starts both pools with
	// --kv-cache-dtype fp8_e4m3 (the checkpoint declares none, so
	// SGLang's default would be bf16) and the layout the dump records.
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130-amd64", system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", run: 263, kvOnly: true, kvCache: "fp8",
		source: "NVIDIA/srt-slurm @ 5063eb4 (the sa-submission-q1-2026 branch merged) recipes/b200-fp8/{1k1k,8k1k}/stp/*.yaml " +
			"(--kv-cache-dtype fp8_e4m3 in both pools of each), named by SemiAnalysisAI/InferenceX @ 04b564b .github/configs/nvidia-master.yaml dsr1-fp8-b200-dynamo-sglang"},
	// Run 329's configs, each its variant of the recipe (matched by its
	// pools' worker counts and concurrencies): the layouts are the
	// recorded ones; each pool's --max-running-requests and
	// --mem-fraction-static are the variant's.
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130-amd64", system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", config: 641, run: 329, kvOnly: true, kvCache: "fp8",
		prefill: recipePool{maxSeqs: 8, memFraction: 0.6, chunk: 65536, maxPrefill: 8192}, decode: recipePool{maxSeqs: 256, memFraction: 0.75},
		source: srtSlurmB200 + "8k1k.yaml zip_override_stp_maxtpt b200-fp8-stp-max-tpt-dep8-1p-1d (1 prefill, 1 decode worker, concurrencies 160x288; " + b200Prefill8k +
			"; decode --data-parallel-size 8 --enable-dp-attention --max-running-requests 256 --mem-fraction-static 0.75)" + ixB200},
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130-amd64", system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", config: 649, run: 329, kvOnly: true, kvCache: "fp8",
		prefill: recipePool{maxSeqs: 8, memFraction: 0.6, chunk: 65536, maxPrefill: 8192}, decode: recipePool{maxSeqs: 128, memFraction: 0.75},
		source: srtSlurmB200 + "8k1k.yaml zip_override_stp_maxtpt b200-fp8-stp-max-tpt-dep8-1p-2d (1 prefill, 2 decode workers, concurrency 288; " + b200Prefill8k +
			"; decode --data-parallel-size 8 --enable-dp-attention --max-running-requests 128 --mem-fraction-static 0.75)" + ixB200},
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130-amd64", system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", config: 654, run: 329, kvOnly: true, kvCache: "fp8",
		prefill: recipePool{maxSeqs: 8, memFraction: 0.6, chunk: 65536, maxPrefill: 8192}, decode: recipePool{maxSeqs: 512, memFraction: 0.75},
		source: srtSlurmB200 + "8k1k.yaml zip_override_stp_maxtpt b200-fp8-stp-max-tpt-dep8-2p-1d (2 prefill, 1 decode worker, concurrency 512; " + b200Prefill8k +
			"; decode --data-parallel-size 8 --enable-dp-attention --max-running-requests 512 --mem-fraction-static 0.75)" + ixB200},
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130-amd64", system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", config: 655, run: 329, kvOnly: true, kvCache: "fp8",
		prefill: recipePool{maxSeqs: 8, memFraction: 0.6, chunk: 65536, maxPrefill: 8192}, decode: recipePool{maxSeqs: 1024, memFraction: 0.75},
		source: srtSlurmB200 + "8k1k.yaml zip_override_stp_maxtpt b200-fp8-stp-max-tpt-dep8-3p-1d (3 prefill, 1 decode worker, concurrency 1024; " + b200Prefill8k +
			"; decode --data-parallel-size 8 --enable-dp-attention --max-running-requests 1024 --mem-fraction-static 0.75)" + ixB200},
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130-amd64", system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", config: 639, run: 329, kvOnly: true, kvCache: "fp8",
		prefill: recipePool{maxSeqs: 8, memFraction: 0.6, chunk: 65536, maxPrefill: 8192}, decode: recipePool{maxSeqs: 32, memFraction: 0.75},
		source: srtSlurmB200 + "8k1k.yaml zip_override_stp_lowlat b200-fp8-stp-low-latency-tp8-1p-4d (1 prefill, 4 decode workers, concurrency 128; " + b200Prefill8k +
			"; decode --tensor-parallel-size 8 --expert-parallel-size 1 --max-running-requests 32 --mem-fraction-static 0.75)" + ixB200},
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130-amd64", system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", config: 455, run: 329, kvOnly: true, kvCache: "fp8",
		prefill: recipePool{maxSeqs: 512, memFraction: 0.85, chunk: 32768, maxPrefill: 32768}, decode: recipePool{maxSeqs: 512, memFraction: 0.85, chunk: 32768, maxPrefill: 32768},
		source: srtSlurmB200 + "1k1k.yaml zip_override_stp_lowlat b200-fp8-stp-low-latency-tep8-1p-1d (1 prefill, 1 decode worker, concurrency 4; both pools " +
			"--tensor-parallel-size 8 --expert-parallel-size 8 --max-running-requests 512 --mem-fraction-static 0.85 --chunked-prefill-size 32768 --max-prefill-tokens 32768)" + ixB200},
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130-amd64", system: "b200_sxm", model: "deepseek-ai/DeepSeek-V3", run: 329, kvOnly: true, kvCache: "fp8",
		source: "NVIDIA/srt-slurm @ 603fb03 recipes/b200-fp8/{1k1k,8k1k}.yaml (--kv-cache-dtype fp8_e4m3 in both pools), named by " +
			"SemiAnalysisAI/InferenceX @ 593fb43 .github/configs/nvidia-master.yaml dsr1-fp8-b200-dynamo-sglang"},
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130", system: "gb200", model: "deepseek-ai/DeepSeek-V3", run: 270, kvOnly: true, kvCache: "fp8",
		source: "NVIDIA/srt-slurm @ b2c9f1a recipes/gb200-fp8/{1k1k,8k1k}/*.yaml (--kv-cache-dtype fp8_e4m3 in both pools of each), named by " +
			"SemiAnalysisAI/InferenceX @ 37f353b .github/configs/nvidia-master.yaml dsr1-fp8-gb200-dynamo-sglang"},
	{image: "lmsysorg/sglang:v0.5.8.post1-cu130", system: "gb300", model: "deepseek-ai/DeepSeek-V3", run: 270, kvOnly: true, kvCache: "fp8",
		source: "NVIDIA/srt-slurm @ b2c9f1a recipes/gb300-fp8/{1k1k,8k1k}/stp/*.yaml (--kv-cache-dtype fp8_e4m3 in both pools of each), named by " +
			"SemiAnalysisAI/InferenceX @ 37f353b .github/configs/nvidia-master.yaml dsr1-fp8-gb300-dynamo-sglang"},
}

// recipeOf is the recipe of a row: its image, system, model_path, input
// length and the config_id and workflow_run_id its silicon_data_source
// names ("...; config_id=254; ...; workflow_run_id=227;
// lmsysorg/sglang:v0.5.5.post2").
func recipeOf(model, system string, isl int, source string) (recipe, bool) {
	var config, run int
	images := map[string]bool{}
	for _, f := range strings.Split(source, ";") {
		f = strings.TrimSpace(f)
		switch {
		case strings.HasPrefix(f, "config_id="):
			_, _ = fmt.Sscanf(f, "config_id=%d", &config)
		case strings.HasPrefix(f, "workflow_run_id="):
			_, _ = fmt.Sscanf(f, "workflow_run_id=%d", &run)
		default:
			images[strings.TrimPrefix(f, "image=")] = true
		}
	}
	if config == 0 || run == 0 {
		return recipe{}, false
	}
	for _, r := range recipes {
		if r.model == model && r.system == system && (r.config == config || r.kvOnly && r.config == 0) && r.run == run && images[r.image] && (r.isl == 0 || r.isl == isl) {
			return r, true
		}
	}
	return recipe{}, false
}

// pool is p's layout and engine settings as the recipe runs them, with
// the row's worker count.
func (p recipePool) pool(workers int) poolText {
	return p.settings(poolText{workers: workers, tp: p.tp, dp: p.dp, ep: p.ep, a2a: p.a2a})
}

// settings is t with p's engine settings (a recipe whose layout is the
// recorded one: t's).
func (p recipePool) settings(t poolText) poolText {
	t.maxSeqs, t.recv, t.maxTotal, t.memFraction = p.maxSeqs, p.recv, p.maxTotal, p.memFraction
	t.chunk, t.maxPrefill = p.chunk, p.maxPrefill
	return t
}

// flags is p's engine settings as the recipe's flags for engine ("vllm"
// or "sglang"; "" when none).
func (p recipePool) flags(engine string) string {
	seqs, frac, chunk := "--max-running-requests", "--mem-fraction-static", "--chunked-prefill-size"
	if engine == "vllm" {
		seqs, frac, chunk = "--max-num-seqs", "--gpu-memory-utilization", "--max-num-batched-tokens"
	}
	var f []string
	if p.maxSeqs > 0 {
		f = append(f, fmt.Sprintf("%s %d", seqs, p.maxSeqs))
	}
	if p.memFraction > 0 {
		f = append(f, frac+" "+strconv.FormatFloat(p.memFraction, 'f', -1, 64))
	}
	if p.maxTotal > 0 {
		f = append(f, fmt.Sprintf("--max-total-tokens %d", p.maxTotal))
	}
	if p.recv > 0 {
		f = append(f, fmt.Sprintf("--scheduler-recv-interval %d", p.recv))
	}
	if p.chunk > 0 {
		f = append(f, fmt.Sprintf("%s %d", chunk, p.chunk))
	}
	if p.maxPrefill > 0 {
		f = append(f, fmt.Sprintf("--max-prefill-tokens %d", p.maxPrefill))
	}
	return strings.Join(f, " ")
}
