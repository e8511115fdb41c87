package main

import (
	"fmt"
	"strings"
)

// launch is the part of a server command line that moecast's scenario
// keys express, for aiconfigurator rows whose deployment's command line is
// public: the rows that InferenceX's single-node harness measured
// (silicon_data_source names the InferenceX database dump, or its CSV
// export, and the container image). Each entry is the benchmark script in
// force when the image named by the rows was the one InferenceX's
// .github/configs/nvidia-master.yaml ran for that model and GPU. The
// harness's client side (closed loop, 10 x C prompts, lengths uniform on
// [int(0.8 L), L]) is not the scenario's: validate's aiconfigurator
// reader gives it to each row whose silicon_data_source names InferenceX
// (a deployment's rows mix InferenceX's with the gap-analysis rows, whose
// client is not public).
//
// Left out, with no scenario key: --block-size (32 on the MiniMax
// scripts; moecast allocates 16-token blocks, which for fixed-length
// prompts changes the capacity by under 32 tokens per sequence) and
// --max-num-batched-tokens 2 x ISL (a deployment's rows hold both input
// lengths, so one scenario cannot carry it).
//
// SGLang scripts: --mem-fraction-static goes to gmu,
// --max-running-requests to maxSeqs, --chunked-prefill-size to
// maxBatched, --kv-cache-dtype fp8_e4m3 to kvCache "fp8" and
// --scheduler-recv-interval to recv (by concurrency: the scripts set it
// from $CONC, so a deployment's rows split at C = 16), --cuda-graph-max-bs
// to graphMax (runtime.cuda_graph_max_bs: 128 on DeepSeek-R1 TP8, 32 on
// TP4, $CONC on the Qwen3.5 scripts, whose deployments' rows therefore
// split by concurrency). Left out, with no scenario key:
// --max-prefill-tokens (equal to --chunked-prefill-size in every script
// here; moecast keeps SGLang's default), --disable-radix-cache (the rows'
// random prompts share nothing), --stream-interval.
//
// vLLM scripts: --max-cudagraph-capture-size goes to graphMax
// (runtime.max_cudagraph_capture_size: 2048 on the v0.19.0 MiniMax-M2.5
// scripts). Left out: the H100 script's --compilation-config
// '{"cudagraph_mode":"PIECEWISE"}' (no scenario key selects vLLM's graph
// mode; it sets no capture size).
type launch struct {
	name       string  // short, stable: it splits a deployment's rows by command line
	kvCache    string  // --kv-cache-dtype; "" = auto (the checkpoint's, else the model dtype)
	gmu        float64 // --gpu-memory-utilization (SGLang: --mem-fraction-static)
	maxSeqs    int     // --max-num-seqs (SGLang: --max-running-requests); 0 = the engine's default
	maxBatched int     // SGLang --chunked-prefill-size; 0 = the engine's default
	// recv is SGLang's --scheduler-recv-interval below C = 16 and from
	// it ([0] and [1]); 0 = not set (SGLang's default, 1).
	recv [2]int
	// graphMax is SGLang's --cuda-graph-max-bs (requests) or vLLM's
	// --max-cudagraph-capture-size (tokens); 0 = not set (the engine's
	// default), graphAtConc = the script passes $CONC.
	graphMax int
	source   string // where the command line is, file @ commit
}

// graphAtConc is launch.graphMax for a script that passes the benchmark's
// concurrency (`CUDA_GRAPH_MAX_BATCH_SIZE=$CONC`).
const graphAtConc = -1

// graphMaxAt is the --cuda-graph-max-bs or --max-cudagraph-capture-size
// the script sets at concurrency c; 0 = not set.
func (l launch) graphMaxAt(c int) int {
	if l.graphMax == graphAtConc {
		return c
	}
	return l.graphMax
}

// variant names the script's command line at concurrency c among those it
// runs by concurrency ("" when it runs one): "cN" where a flag takes $CONC
// itself, else "recvN" where --scheduler-recv-interval splits at C = 16.
// A deployment's rows split by it.
func (l launch) variant(c int) string {
	switch {
	case l.graphMax == graphAtConc:
		return fmt.Sprintf("c%d", c)
	case l.recv[0] != l.recv[1]:
		return fmt.Sprintf("recv%d", l.recvAt(c))
	}
	return ""
}

// recvAt is the --scheduler-recv-interval the script sets at concurrency
// c (`if [[ $CONC -ge 16 ]]`); 0 = not set.
func (l launch) recvAt(c int) int {
	if c >= 16 {
		return l.recv[1]
	}
	return l.recv[0]
}

// inferenceXLaunch matches a row by its model_path, precision, system,
// tp_size (0 = any), concurrency (at most maxConc, the config's conc-end
// in nvidia-master.yaml; 0 = any: rows beyond it were not run by that
// config, so its command line is not known for them) and the image its
// silicon_data_source names.
type inferenceXLaunch struct {
	model, precision, system, image string
	tp, maxConc                     int
	launch
}

var inferenceXLaunches = []inferenceXLaunch{
	// SGLang. Each script is the one in force on the rows' measured date
	// with the image they name (nvidia-master.yaml at the commit cited).
	{"Qwen/Qwen3.5-397B-A17B", "fp4", "b200_sxm", "lmsysorg/sglang:nightly-dev-20260402-d7256eb6", 0, 128, launch{
		name: "inferencex-nightly-20260402", kvCache: "fp8", gmu: 0.85, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ 48d35c4 benchmarks/single_node/qwen3.5_fp4_b200.sh " +
			"(--kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.85 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs $CONC --scheduler-recv-interval 10, 30 from C = 16; the commit that set the image; next change 9189c18)"}},
	{"Qwen/Qwen3.5-397B-A17B", "fp4", "b300_sxm", "lmsysorg/sglang:v0.5.10.post1-cu130", 0, 128, launch{
		name: "inferencex-v0.5.10.post1", kvCache: "fp8", gmu: 0.8, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ 8acbd08 benchmarks/single_node/qwen3.5_fp4_b300.sh " +
			"(--kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.8 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs $CONC --scheduler-recv-interval 10, 30 from C = 16; the commit that added it with this image; next change 4f63034)"}},
	{"deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "lmsysorg/sglang:v0.5.9-cu130", 8, 64, launch{
		name: "inferencex-v0.5.9", kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: 128,
		source: "SemiAnalysisAI/InferenceX @ 64c20b6 benchmarks/single_node/dsr1_fp8_b200.sh, TP 8 " +
			"(config conc 4-64; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.82 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs 128 --scheduler-recv-interval 10, 30 from C = 16; image v0.5.9-cu130 from 12ba0ae, script unchanged until 626932a)"}},
	{"deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "lmsysorg/sglang:v0.5.9-cu130", 4, 32, launch{
		name: "inferencex-v0.5.9", kvCache: "fp8", gmu: 0.95, maxSeqs: 32, maxBatched: 8192, recv: [2]int{10, 10}, graphMax: 32,
		source: "SemiAnalysisAI/InferenceX @ 64c20b6 benchmarks/single_node/dsr1_fp8_b200.sh, TP 4 " +
			"(config 8k/1k conc 4-32; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.95 --chunked-prefill-size 8192 --max-running-requests 32 " +
			"--cuda-graph-max-bs 32 --scheduler-recv-interval 10; image v0.5.9-cu130 from 12ba0ae, script unchanged until 626932a)"}},
	// vLLM.
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "b200_sxm", "vllm/vllm-openai:v0.17.0-cu130", 0, 0, launch{
		name: "inferencex-v0.17.0", gmu: 0.95,
		source: "SemiAnalysisAI/InferenceX @ 626932a benchmarks/single_node/minimaxm2.5_fp8_b200.sh " +
			"(--gpu-memory-utilization 0.95 --block-size=32 --no-enable-prefix-caching; image v0.17.0-cu130 until bddbf40)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "b200_sxm", "vllm/vllm-openai:v0.19.0-cu130", 0, 0, launch{
		name: "inferencex-v0.19.0", kvCache: "fp8", gmu: 0.90, graphMax: 2048,
		source: "SemiAnalysisAI/InferenceX @ bddbf40 benchmarks/single_node/minimaxm2.5_fp8_b200.sh " +
			"(--gpu-memory-utilization 0.90 --block-size=32 --kv-cache-dtype fp8 --max-cudagraph-capture-size 2048 --max-num-batched-tokens 2xISL; the commit that moved the image to v0.19.0-cu130)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "b300_sxm", "vllm/vllm-openai:v0.19.0-cu130", 0, 0, launch{
		name: "inferencex-v0.19.0", kvCache: "fp8", gmu: 0.90, graphMax: 2048,
		source: "SemiAnalysisAI/InferenceX @ 0c2467c benchmarks/single_node/minimaxm2.5_fp8_b300.sh " +
			"(--gpu-memory-utilization 0.90 --block-size=32 --kv-cache-dtype fp8 --max-cudagraph-capture-size 2048 --max-num-batched-tokens 2xISL)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "h100_sxm", "vllm/vllm-openai:v0.18.0", 0, 0, launch{
		name: "inferencex-v0.18.0", gmu: 0.90, maxSeqs: 256,
		source: "SemiAnalysisAI/InferenceX @ 1d5cae1 benchmarks/single_node/minimaxm2.5_fp8_h100.sh " +
			"(--gpu-memory-utilization 0.90 --max-num-seqs 256 --compilation-config '{\"cudagraph_mode\":\"PIECEWISE\"}'; the commit that moved the image to v0.18.0)"}},
}

// launchOf is the InferenceX command line of a row, if the table holds
// it: the row's model_path, precision, system, tp_size, concurrency and an image named
// in its silicon_data_source ("...; vllm/vllm-openai:TAG" or
// "image=...:TAG"; the tag is matched whole).
func launchOf(model, precision, system string, tp, conc int, source string) (launch, bool) {
	for _, l := range inferenceXLaunches {
		if l.model != model || l.precision != precision || l.system != system || (l.tp != 0 && l.tp != tp) ||
			(l.maxConc != 0 && conc > l.maxConc) {
			continue
		}
		for _, f := range strings.Split(source, ";") {
			f = strings.TrimPrefix(strings.TrimSpace(f), "image=")
			if f == l.image {
				return l.launch, true
			}
		}
	}
	return launch{}, false
}
