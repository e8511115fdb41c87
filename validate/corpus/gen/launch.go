package main

import "strings"

// launch is the part of a server command line that moecast's scenario
// keys express, for aiconfigurator rows whose deployment's command line is
// public: the rows that InferenceX's single-node harness measured
// (silicon_data_source names the InferenceX database dump, or its CSV
// export, and the container image). Each entry is the benchmark script in
// force when the image named by the rows was the one InferenceX's
// .github/configs/nvidia-master.yaml ran for that model and GPU; the
// harness's client side (closed loop, 10 x C prompts) is the one
// serving/README.md already describes.
//
// Left out, with no scenario key: --block-size (32 on the MiniMax
// scripts; moecast allocates 16-token blocks, which for fixed-length
// prompts changes the capacity by under 32 tokens per sequence) and
// --max-num-batched-tokens 2 x ISL (a deployment's rows hold both input
// lengths, so one scenario cannot carry it).
type launch struct {
	name    string  // short, stable: it splits a deployment's rows by command line
	kvCache string  // --kv-cache-dtype; "" = auto (the checkpoint's, else the model dtype)
	gmu     float64 // --gpu-memory-utilization
	maxSeqs int     // --max-num-seqs; 0 = the engine's default
	source  string  // where the command line is, file @ commit
}

// inferenceXLaunch matches a row by its model_path, precision, system and
// the image its silicon_data_source names.
type inferenceXLaunch struct {
	model, precision, system, image string
	launch
}

var inferenceXLaunches = []inferenceXLaunch{
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "b200_sxm", "vllm/vllm-openai:v0.17.0-cu130", launch{
		name: "inferencex-v0.17.0", gmu: 0.95,
		source: "SemiAnalysisAI/InferenceX @ 626932a benchmarks/single_node/minimaxm2.5_fp8_b200.sh " +
			"(--gpu-memory-utilization 0.95 --block-size=32 --no-enable-prefix-caching; image v0.17.0-cu130 until bddbf40)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "b200_sxm", "vllm/vllm-openai:v0.19.0-cu130", launch{
		name: "inferencex-v0.19.0", kvCache: "fp8", gmu: 0.90,
		source: "SemiAnalysisAI/InferenceX @ bddbf40 benchmarks/single_node/minimaxm2.5_fp8_b200.sh " +
			"(--gpu-memory-utilization 0.90 --block-size=32 --kv-cache-dtype fp8 --max-num-batched-tokens 2xISL; the commit that moved the image to v0.19.0-cu130)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "b300_sxm", "vllm/vllm-openai:v0.19.0-cu130", launch{
		name: "inferencex-v0.19.0", kvCache: "fp8", gmu: 0.90,
		source: "SemiAnalysisAI/InferenceX @ 0c2467c benchmarks/single_node/minimaxm2.5_fp8_b300.sh " +
			"(--gpu-memory-utilization 0.90 --block-size=32 --kv-cache-dtype fp8 --max-num-batched-tokens 2xISL)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "h100_sxm", "vllm/vllm-openai:v0.18.0", launch{
		name: "inferencex-v0.18.0", gmu: 0.90, maxSeqs: 256,
		source: "SemiAnalysisAI/InferenceX @ 1d5cae1 benchmarks/single_node/minimaxm2.5_fp8_h100.sh " +
			"(--gpu-memory-utilization 0.90 --max-num-seqs 256; the commit that moved the image to v0.18.0)"}},
}

// launchOf is the InferenceX command line of a row, if the table holds
// it: the row's model_path, precision, system and an image named in its
// silicon_data_source ("...; vllm/vllm-openai:TAG" or "image=...:TAG";
// the tag is matched whole).
func launchOf(model, precision, system, source string) (launch, bool) {
	for _, l := range inferenceXLaunches {
		if l.model != model || l.precision != precision || l.system != system {
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
