package main

import (
	"fmt"
	"math"
	"strconv"
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
// from $CONC, so a deployment's rows split at C = 16) and --cuda-graph-max-bs
// to graphMax (runtime.cuda_graph_max_bs: 256, 128 or 32 where the script
// sets a number, $CONC on the Qwen3.5 and GLM-5 scripts, whose
// deployments' rows therefore split by concurrency; every value is at or
// above its config's conc-end or the row's concurrency, and the configs
// run powers of two, which SGLang captures, so no row's decode step is
// expected to change: the scenario states the script's flag). Left out:
// --max-prefill-tokens (no scenario key; where a script sets it,
// it equals --chunked-prefill-size; moecast keeps SGLang's default),
// --disable-radix-cache (the rows' random prompts share nothing),
// --max-running-requests $CONC (the GLM-5 and Qwen3.5 fp8 B300
// scripts: it never binds in a closed loop of C), --stream-interval (it
// changes when tokens after the first reach the client, not the first
// token nor the last: SGLang's scheduler (at the rows' versions; 0.4.6
// held the first token) streams a request's output when
// len(output_ids) % interval == 1, so the first token at once
// (scheduler_output_processor_mixin.py @ 004ec01, stream_output_generation;
// output_streamer.py @ 00bc307), vLLM's output processor when it is the
// first token, the request finishes or interval tokens have accrued
// (vllm-project/vllm#27869); the client's TTFT and TPOT
// ((latency - ttft) / (out - 1)) do not move: bench/RESULTS-stream.md).
//
// InferenceX's database dump lists its DeepSeek-R1 configs (model-prefix
// dsr1; its configs run no DeepSeek-V3) under deepseek-ai/DeepSeek-V3 in
// aiconfigurator's silicon_sample (ids dsr1_..._cfgN, the figures of the
// DeepSeek-R1 rows of the same run): a db-dump row of DeepSeek-V3 takes
// DeepSeek-R1's command line.
type launch struct {
	name       string  // short, stable: it splits a deployment's rows by command line
	kvCache    string  // --kv-cache-dtype; "" = auto (the checkpoint's, else the model dtype)
	gmu        float64 // --gpu-memory-utilization (SGLang: --mem-fraction-static)
	maxSeqs    int     // --max-num-seqs (SGLang: --max-running-requests); 0 = the engine's default
	maxBatched int     // SGLang --chunked-prefill-size; 0 = the engine's default
	// recv is SGLang's --scheduler-recv-interval below C = 16 and from
	// it ([0] and [1]); 0 = not set (SGLang's default, 1).
	recv [2]int
	// cudagraphMode is vLLM's --compilation-config cudagraph_mode
	// (runtime.cudagraph_mode), or the default of the image's vLLM where
	// it differs from moecast's (PIECEWISE before v0.11.0); "" = not set.
	cudagraphMode string
	// maxCapture is vLLM's --max-cudagraph-capture-size
	// (runtime.max_cudagraph_capture_size); 0 = not set.
	maxCapture int
	// graphMax is SGLang's --cuda-graph-max-bs (runtime.cuda_graph_max_bs,
	// requests); 0 = not set (SGLang's default), graphAtConc = the script
	// passes $CONC.
	graphMax int
	// spec is the speculative decoding the command line runs
	// (speculative.method; "" = none) with draftTokens drafts per step
	// (speculative.draft_tokens) and acceptance, the per-position
	// acceptance moecast documents for that draft (speculative.acceptance;
	// 0 = none documented: the scenario leaves it out and says so when it
	// loads).
	spec        string
	draftTokens int
	acceptance  float64
	// mxfp4Act is runtime.mxfp4_activation: "mxfp8" where the script
	// exports VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 (vLLM's MXFP4 experts
	// on FlashInfer's TRT-LLM MXFP4 x MXFP8 MoE); "" = not set.
	mxfp4Act string
	// mxfp4Backend is runtime.mxfp4_moe_backend: "marlin" where the
	// script exports VLLM_MXFP4_USE_MARLIN=1 (vLLM's MXFP4 experts on its
	// Marlin MoE); "" = not set.
	mxfp4Backend string
	// async is vLLM's async scheduling turned on by the command line
	// (config.yaml `async-scheduling: true` in the v0.10.2 scripts:
	// runtime.async_scheduling = true); vLLM before v0.14.0 defaults it
	// off (serve.AsyncDefault), so a scenario that states such an
	// engine_version must carry it. false = not set (the version's
	// default).
	async bool
	// nsaPrefill is SGLang's --nsa-prefill-backend
	// (runtime.nsa_prefill_backend); "" = not set (SGLang's default).
	nsaPrefill string
	// ep is the expert parallelism the command line runs where the
	// script proves it differs from the rows' recorded moe_ep_size
	// (epAsRecorded: the record stands); epWhy names the flag and what
	// the engine does with it (the scenario's comment, next to the
	// recorded layout).
	ep    epMode
	epWhy string
	// dpAttnConfigs are the InferenceX database dump's config ids
	// (silicon_data_source "config_id=N") whose rows are the config's
	// dp-attn: true search-space entry, for a script that runs
	// DP_ATTENTION=true as --tensor-parallel-size=1
	// --data-parallel-size=$TP --enable-expert-parallel: vLLM DP $TP x TP 1,
	// the experts over the $TP GPUs. The rows record that run with the
	// same columns as the TP-EP run (tp_size = attention_dp_size = $TP,
	// moe_ep_size $TP x $TP); dpAttnWhy says how the config id is known.
	dpAttnConfigs []string
	dpAttnWhy     string
	// clientConc is the benchmark client's --max-concurrency where the
	// script fixes it rather than passing $CONC (0 = $CONC). InferenceX's
	// utils/process_result.py records the client's max_concurrency as
	// the row's concurrency, so a row recorded at clientConc ran some
	// $CONC of its config that the row does not record: the server's
	// --max-num-seqs $CONC and the 10 x $CONC prompts are unknown, and
	// the deployment cannot be stated (clientWhy says why; gen skips it).
	clientConc int
	clientWhy  string
	source     string // where the command line is, file @ commit
}

// dpAttnRun reports whether a row (by its silicon_data_source) is a run
// of the script's DP_ATTENTION=true command line.
func (l launch) dpAttnRun(source string) bool {
	for _, f := range strings.Split(source, ";") {
		for _, id := range l.dpAttnConfigs {
			if strings.TrimSpace(f) == "config_id="+id {
				return true
			}
		}
	}
	return false
}

// epMode is a command line's expert parallelism, as the engine runs it.
type epMode int

const (
	// epAsRecorded: the rows' moe_ep_size is the command line's.
	epAsRecorded epMode = iota
	// epOff: the command line passes no expert-parallel flag: vLLM runs
	// its MoE layers tensor-parallel (ParallelConfig.enable_expert_parallel
	// defaults to False, "Use expert parallelism instead of tensor
	// parallelism for MoE layers"; FusedMoEParallelConfig.make uses EP
	// only with it, vllm-project/vllm vllm/model_executor/layers/fused_moe/config.py
	// @ 002d607): [parallel] ep = 1.
	epOff
	// epTP: the command line runs the experts over the TP group whatever
	// the config's ep: [parallel] ep = tp (every entry with it runs dp 1).
	epTP
)

// epAt is the [parallel] ep the command line runs for a scenario of tp
// ranks whose record says ep; the record when the entry proves nothing.
func (l launch) epAt(tp, ep int) int {
	switch l.ep {
	case epOff:
		return 1
	case epTP:
		return tp
	}
	return ep
}

// recvAt is the --scheduler-recv-interval the script sets at concurrency
// c (`if [[ $CONC -ge 16 ]]`); 0 = not set.
func (l launch) recvAt(c int) int {
	if c >= 16 {
		return l.recv[1]
	}
	return l.recv[0]
}

// graphAtConc is launch.graphMax for a script that passes the benchmark's
// concurrency (`CUDA_GRAPH_MAX_BATCH_SIZE=$CONC`, `--cuda-graph-max-bs $CONC`).
const graphAtConc = -1

// graphMaxAt is the --cuda-graph-max-bs the script sets at concurrency c;
// 0 = not set.
func (l launch) graphMaxAt(c int) int {
	if l.graphMax == graphAtConc {
		return c
	}
	return l.graphMax
}

// clientCapped reports whether a row recorded at concurrency c is a run
// of a script whose client's --max-concurrency is fixed at c
// (launch.clientConc): its real $CONC is not recorded.
func (l launch) clientCapped(c int) bool {
	return l.clientConc > 0 && c == l.clientConc
}

// variant names the script's command line at concurrency c among those it
// runs by concurrency ("" when it runs one): "clientN" for the rows that
// record the client's fixed --max-concurrency N (clientCapped; their
// deployment keeps the layout's name, gen skips it), "cN" where a flag
// takes $CONC itself, else "recvN" where --scheduler-recv-interval splits
// at C = 16. A deployment's rows split by it.
func (l launch) variant(c int) string {
	switch {
	case l.clientCapped(c):
		return fmt.Sprintf("client%d", c)
	case l.graphMax == graphAtConc:
		return fmt.Sprintf("c%d", c)
	case l.recv[0] != l.recv[1]:
		return fmt.Sprintf("recv%d", l.recvAt(c))
	}
	return ""
}

// inferenceXLaunch matches a row by its model_path, precision, system,
// tp_size (0 = any), concurrency (at most maxConc, the config's conc-end
// in nvidia-master.yaml; 0 = any: rows beyond it were not run by that
// config, so its command line is not known for them) and the image its
// silicon_data_source names; or, for rows whose source names no image
// (image ""), by their backend and the date their source says they were
// measured (measured=DATE...), the image being the one InferenceX's
// workflow ran on that date. An entry with both an image and a measured
// date (a prefix: "2026-03-" is every day of March) takes only the rows
// of that image measured then: the script changed while the image did not.
//
// An entry with specRun is the command line of a speculative-decoding
// config that ran with the same image as a plain one: it takes only the
// rows that are not a run of a config InferenceX's database dump lists
// (dumpRun, see dumpRuns), and comes before the plain entry.
type inferenceXLaunch struct {
	model, precision, system, image string
	tp, maxConc                     int
	backend, measured               string
	specRun                         bool
	launch
}

var inferenceXLaunches = []inferenceXLaunch{
	// SGLang with MTP. InferenceX ran two DeepSeek-R1 fp8 B200 configs
	// with image v0.5.9-cu130 from 12ba0ae (2026-03-25), the day of the
	// rows: dsr1-fp8-b200-sglang (TP 8: 1k/1k and 1k/8k at conc 4-64, 8k/1k
	// at conc 4 only; TP 4 8k/1k conc 4-32) and dsr1-fp8-b200-sglang-mtp
	// (TP 8, every length, conc 4-512, spec-decoding: mtp). The database
	// dump's config_id=87 holds exactly the first's TP 8 points (eleven,
	// each with its figures), so a TP 8 row whose figures are not a dump
	// row's is the MTP config's run: the second figures at the eleven
	// shared points, and every TP 8 point beyond conc 64 or at 8k/1k above
	// conc 4, which only the MTP config ran (specRunOf).
	{"deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "lmsysorg/sglang:v0.5.9-cu130", 8, 512, "", "", true, launch{
		name: "inferencex-v0.5.9-mtp", kvCache: "fp8", gmu: 0.82, maxSeqs: 512, maxBatched: 16384, recv: [2]int{10, 30}, graphMax: 512,
		spec: "mtp", draftTokens: 2, acceptance: mtpAcceptanceDeepSeekV3,
		source: "SemiAnalysisAI/InferenceX @ 12ba0ae benchmarks/single_node/dsr1_fp8_b200_mtp.sh, TP 8 " +
			"(config dsr1-fp8-b200-sglang-mtp, conc 4-512; --speculative-algorithm EAGLE --speculative-num-steps 2 --speculative-eagle-topk 1 " +
			"--speculative-num-draft-tokens 3 with no draft model path, so SGLang drafts with the checkpoint's own NextN (MTP) layer: K = 2; " +
			"SGLANG_ENABLE_SPEC_V2=1 as a shell variable that is never exported, so the server runs SGLang v0.5.9's default V1 EAGLE worker without overlap scheduling " +
			"(serve.SpecSyncDefault); --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.82 --chunked-prefill-size 16384 --max-prefill-tokens 16384 " +
			"--max-running-requests 512 --cuda-graph-max-bs 512 --scheduler-recv-interval 10, 30 from C = 16; the commit that set image v0.5.9-cu130, " +
			"script unchanged from 64c20b6 until 626932a)"}},
	// Qwen3.5 fp8 B200 with image v0.5.9-cu130 (no -amd64): only
	// qwen3.5-fp8-b200-sglang-mtp ran it (added at 35d4bb3, 2026-03-20
	// 22:08 UTC, the rows' measured time; the plain config ran
	// v0.5.9-cu129-amd64, then v0.5.9-cu130-amd64). The MTP acceptance of
	// Qwen3.5's MTP layer is not documented: left out.
	{"Qwen/Qwen3.5-397B-A17B", "fp8", "b200_sxm", "lmsysorg/sglang:v0.5.9-cu130", 4, 256, "", "", true, launch{
		name: "inferencex-v0.5.9-mtp", kvCache: "fp8", gmu: 0.8, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc,
		spec: "mtp", draftTokens: 3,
		source: "SemiAnalysisAI/InferenceX @ 35d4bb3 benchmarks/single_node/qwen3.5_fp8_b200_mtp.sh, TP 4 " +
			"(config qwen3.5-fp8-b200-sglang-mtp, conc 4-256; --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 " +
			"--speculative-num-draft-tokens 4 with no draft model path (the checkpoint's MTP layer): K = 3; --kv-cache-dtype fp8_e4m3 " +
			"--mem-fraction-static 0.8 --chunked-prefill-size 32768 --max-prefill-tokens 32768 --max-running-requests $CONC --cuda-graph-max-bs $CONC " +
			"--scheduler-recv-interval 10, 30 from C = 16; the commit that added the config with this image; next change 626932a)"}},
	// TensorRT-LLM with MTP. Image release:1.2.0rc6.post3 (written
	// nvcr.io#nvidia/... in nvidia-master.yaml, nvcr.io/nvidia/... in some
	// rows: one image) was run on B200 only by the MTP configs:
	// dsr1-fp8-b200-trt-mtp from 5d517074c (2026-02-05, the fp8 rows'
	// measured date) and dsr1-fp4-b200-trt-mtp from 0aae52d4c (2026-02-06,
	// the fp4 rows' date), while dsr1-fp8-b200-trt and dsr1-fp4-b200-trt
	// ran release:1.2.0rc6.post2 (nvidia-master.yaml at both commits and
	// every first-parent commit to 2026-03-05). The scripts set MTP = 3
	// (num_nextn_predict_layers), 1 with attention DP, which these rows
	// record as tp_size 1 (the DP ranks in attention_dp_size).
	{"deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3", 1, 256, "", "", false, launchTRTMTP("fp8", 1)},
	{"deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3", 0, 256, "", "", false, launchTRTMTP("fp8", 3)},
	{"deepseek-ai/DeepSeek-R1", "fp4", "b200_sxm", "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3", 1, 256, "", "", false, launchTRTMTP("fp4", 1)},
	{"deepseek-ai/DeepSeek-R1", "fp4", "b200_sxm", "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3", 0, 256, "", "", false, launchTRTMTP("fp4", 3)},
	// SGLang. Each script is the one in force on the rows' measured date
	// with the image they name (nvidia-master.yaml at the commit cited).
	{"Qwen/Qwen3.5-397B-A17B", "fp4", "b200_sxm", "lmsysorg/sglang:nightly-dev-20260402-d7256eb6", 0, 128, "", "", false, launch{
		name: "inferencex-nightly-20260402", kvCache: "fp8", gmu: 0.85, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ 48d35c4 benchmarks/single_node/qwen3.5_fp4_b200.sh " +
			"(--kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.85 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs $CONC --scheduler-recv-interval 10, 30 from C = 16; the commit that set the image; next change 9189c18)"}},
	{"Qwen/Qwen3.5-397B-A17B", "fp4", "b300_sxm", "lmsysorg/sglang:v0.5.10.post1-cu130", 0, 128, "", "", false, launch{
		name: "inferencex-v0.5.10.post1", kvCache: "fp8", gmu: 0.8, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ 8acbd08 benchmarks/single_node/qwen3.5_fp4_b300.sh " +
			"(--kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.8 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs $CONC --scheduler-recv-interval 10, 30 from C = 16; the commit that added it with this image; next change 4f63034)"}},
	{"deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "lmsysorg/sglang:v0.5.9-cu130", 8, 64, "", "", false, launch{
		name: "inferencex-v0.5.9", kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: 128,
		source: "SemiAnalysisAI/InferenceX @ 64c20b6 benchmarks/single_node/dsr1_fp8_b200.sh, TP 8 " +
			"(config conc 4-64; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.82 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs 128 --scheduler-recv-interval 10, 30 from C = 16; image v0.5.9-cu130 from 12ba0ae, script unchanged until 626932a)"}},
	{"deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "lmsysorg/sglang:v0.5.9-cu130", 4, 32, "", "", false, launch{
		name: "inferencex-v0.5.9", kvCache: "fp8", gmu: 0.95, maxSeqs: 32, maxBatched: 8192, recv: [2]int{10, 10}, graphMax: 32,
		source: "SemiAnalysisAI/InferenceX @ 64c20b6 benchmarks/single_node/dsr1_fp8_b200.sh, TP 4 " +
			"(config 8k/1k conc 4-32; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.95 --chunked-prefill-size 8192 --max-running-requests 32 " +
			"--cuda-graph-max-bs 32 --scheduler-recv-interval 10; image v0.5.9-cu130 from 12ba0ae, script unchanged until 626932a)"}},
	{"deepseek-ai/DeepSeek-R1", "fp4", "b200_sxm", "lmsysorg/sglang:v0.5.9-cu130", 0, 128, "", "", false, launch{
		name: "inferencex-v0.5.9", kvCache: "fp8", gmu: 0.85, maxSeqs: 256, maxBatched: 16384, recv: [2]int{10, 30}, graphMax: 256,
		source: "SemiAnalysisAI/InferenceX @ 12ba0ae benchmarks/single_node/dsr1_fp4_b200.sh, TP 4 EP 4 and TP 8 EP 8 " +
			"(config conc 4-128; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.85 --chunked-prefill-size 16384 --max-running-requests 256 " +
			"--cuda-graph-max-bs 256 --scheduler-recv-interval 10, 30 from C = 16; the commit that set image v0.5.9-cu130, whose run the rows are; next change 626932a)"}},
	{"Qwen/Qwen3.5-397B-A17B", "bf16", "b200_sxm", "lmsysorg/sglang:nightly-dev-20260216-d3bae71e", 8, 64, "", "", false, launch{
		name: "inferencex-nightly-20260216", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ 9dc87a6 benchmarks/single_node/qwen3.5_bf16_b200.sh, TP 8 " +
			"(config conc 4-64; --mem-fraction-static 0.82 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs $CONC --scheduler-recv-interval 10, 30 from C = 16; the rows measured 2026-02-20T05:32:44 are this commit's run; same flags until 626932a)"}},
	{"Qwen/Qwen3.5-397B-A17B", "fp8", "b200_sxm", "lmsysorg/sglang:v0.5.9-cu129-amd64", 0, 64, "", "", false, launch{
		name: "inferencex-v0.5.9-cu129", kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ efd49e5 benchmarks/single_node/qwen3.5_fp8_b200.sh " +
			"(config TP 4 EP 4 and TP 8, conc 4-64; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.82 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs $CONC --scheduler-recv-interval 10, 30 from C = 16; the commit that added the config with this image; next change 6a5dad4)"}},
	{"Qwen/Qwen3.5-397B-A17B", "fp8", "b200_sxm", "lmsysorg/sglang:v0.5.9-cu130-amd64", 0, 128, "", "", false, launch{
		name: "inferencex-v0.5.9", kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ 6a5dad4 benchmarks/single_node/qwen3.5_fp8_b200.sh " +
			"(config TP 8 conc 4-16, TP 4 EP 4 conc 16-128; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.82 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs $CONC --scheduler-recv-interval 10, 30 from C = 16; the rows measured 2026-03-24T00:52:21 are this commit's run; next change 626932a)"}},
	{"zhipuai/GLM-5", "fp8", "b200_sxm", "lmsysorg/sglang:nightly-dev-cu13-20260317-1eea7448", 8, 128, "", "", false, launch{
		name: "inferencex-nightly-20260317", kvCache: "fp8", gmu: 0.85, maxBatched: 32768, graphMax: graphAtConc, nsaPrefill: "trtllm",
		source: "SemiAnalysisAI/InferenceX @ 13930ca benchmarks/single_node/glm5_fp8_b200.sh, TP 8 " +
			"(config conc 4-128; --kv-cache-dtype fp8_e4m3 --nsa-prefill-backend trtllm --mem-fraction-static 0.85 --chunked-prefill-size 32768 --max-prefill-tokens 32768 " +
			"--max-running-requests $CONC --cuda-graph-max-bs $CONC, no --scheduler-recv-interval; the rows measured 2026-03-20T17:45:25 are this commit's run)"}},
	{"zhipuai/GLM-5", "fp4", "b200_sxm", "lmsysorg/sglang:nightly-dev-cu13-20260328-a27651d5", 8, 64, "", "", false, launch{
		name: "inferencex-nightly-20260328", gmu: 0.80, maxBatched: 131072, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ d43805f benchmarks/single_node/glm5_nvfp4_b200.sh, TP 8 " +
			"(config conc 4-64; --mem-fraction-static 0.80 --chunked-prefill-size 131072 --max-running-requests $CONC --cuda-graph-max-bs $CONC, " +
			"no --kv-cache-dtype, no --nsa-prefill-backend, no --scheduler-recv-interval; the commit that added the config with this image, 2026-03-28, rows measured 2026-03-29; renamed glm5_fp4_b200.sh at 800f57a)"}},
	{"deepseek-ai/DeepSeek-R1", "fp8", "b300_sxm", "lmsysorg/sglang:v0.5.10.post1-cu130", 8, 64, "", "", false, launch{
		name: "inferencex-v0.5.10.post1", kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: 128,
		source: "SemiAnalysisAI/InferenceX @ 5b302f1 benchmarks/single_node/dsr1_fp8_b300.sh, TP 8 " +
			"(config conc 4-64; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.82 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs 128 --scheduler-recv-interval 10, 30 from C = 16; the commit that added the config with this image)"}},
	{"deepseek-ai/DeepSeek-R1", "fp8", "b300_sxm", "lmsysorg/sglang:v0.5.10.post1-cu130", 4, 32, "", "", false, launch{
		name: "inferencex-v0.5.10.post1", kvCache: "fp8", gmu: 0.95, maxSeqs: 32, maxBatched: 8192, recv: [2]int{10, 10}, graphMax: 32,
		source: "SemiAnalysisAI/InferenceX @ 5b302f1 benchmarks/single_node/dsr1_fp8_b300.sh, TP 4 " +
			"(config 8k/1k conc 4-32; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.95 --chunked-prefill-size 8192 --max-running-requests 32 " +
			"--cuda-graph-max-bs 32 --scheduler-recv-interval 10; the commit that added the config with this image)"}},
	{"deepseek-ai/DeepSeek-R1", "fp4", "b300_sxm", "lmsysorg/sglang:v0.5.10.post1-cu130", 0, 128, "", "", false, launch{
		name: "inferencex-v0.5.10.post1", kvCache: "fp8", gmu: 0.85, maxSeqs: 256, maxBatched: 16384, recv: [2]int{10, 30}, graphMax: 256,
		source: "SemiAnalysisAI/InferenceX @ 9ebeafb benchmarks/single_node/dsr1_fp4_b300.sh, TP 4 EP 4 and TP 8 EP 8 " +
			"(config conc 4-128; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.85 --chunked-prefill-size 16384 --max-running-requests 256 " +
			"--cuda-graph-max-bs 256 --scheduler-recv-interval 10, 30 from C = 16; the commit that added the config with this image)"}},
	{"Qwen/Qwen3.5-397B-A17B", "bf16", "b300_sxm", "lmsysorg/sglang:v0.5.10.post1-cu130", 0, 64, "", "", false, launch{
		name: "inferencex-v0.5.10.post1", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ 32274d6 benchmarks/single_node/qwen3.5_bf16_b300.sh, TP 4 and TP 8 " +
			"(config conc 4-64; --mem-fraction-static 0.82 --chunked-prefill-size 32768 --max-running-requests 128 " +
			"--cuda-graph-max-bs $CONC --scheduler-recv-interval 10, 30 from C = 16; the commit that added the config with this image, as 77c8b96 before it)"}},
	{"Qwen/Qwen3.5-397B-A17B", "fp8", "b300_sxm", "lmsysorg/sglang:v0.5.10.post1-cu130", 4, 256, "", "", false, launch{
		name: "inferencex-v0.5.10.post1", kvCache: "fp8", gmu: 0.8, maxBatched: 16384, recv: [2]int{10, 10}, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ c0f62a2 benchmarks/single_node/qwen3.5_fp8_b300.sh, TP 4 " +
			"(config conc 4-256; --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.8 --chunked-prefill-size 16384 --max-prefill-tokens 16384 " +
			"--max-running-requests $CONC --cuda-graph-max-bs $CONC --scheduler-recv-interval 10; the commit that added the config with this image)"}},
	// DeepSeek-R1 on B200 before the single_node scripts: the rows whose
	// source names no image (measured 2025-11) ran the _docker.sh scripts
	// (B200's docker runners, launch_b200-nvd.sh and launch_b200-tg.sh,
	// run benchmarks/${EXP}_${PRECISION}_b200_docker.sh; the slurm runners
	// call a _slurm.sh that no DeepSeek-R1 SGLang B200 script was until
	// ea181ae, 2025-12-31). fp4: the command line is the same from
	// 9596d23 (2025-10-29) through d8fe8f7 (2025-11-10, image v0.5.5, which
	// changed only the EP and MoE-runner flags' spelling) until d22bf9c
	// (2025-11-21); dsr1-tmpl.yml @ 9596d23 ran TP 4 and 8 at conc 4-128.
	{"deepseek-ai/DeepSeek-R1", "fp4", "b200_sxm", "", 0, 128, "sglang", "2025-11-02", false, launchDSR1FP4B200Docker},
	{"deepseek-ai/DeepSeek-R1", "fp4", "b200_sxm", "", 0, 128, "sglang", "2025-11-10", false, launchDSR1FP4B200Docker},
	// fp8, measured 2025-11-18, recorded with moe_ep_size 8: config
	// dsr1-fp8-b200-sglang ran TP 8 EP 8 at conc 4-64 from d8fe8f7 until
	// 189ae51 (2025-11-18 20:03 UTC set EP back to 1), with d8fe8f7's
	// script (unchanged until d22bf9c). tp 0: the rows' tp_size slips (64).
	{"deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "", 0, 64, "sglang", "2025-11-18", false, launch{
		name: "inferencex-v0.5.5", kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: 128,
		source: "SemiAnalysisAI/InferenceX @ d8fe8f7 benchmarks/dsr1_fp8_b200_docker.sh " +
			"(config TP 8 EP 8, conc 4-64, image v0.5.5-cu129-amd64; --cuda-graph-max-bs 128 --max-running-requests 128 --mem-fraction-static 0.82 " +
			"--kv-cache-dtype fp8_e4m3 --chunked-prefill-size 32768 --max-prefill-tokens 32768 --scheduler-recv-interval 10, 30 from C = 16; " +
			"unchanged until d22bf9c, 2025-11-21)"}},
	// fp8, image v0.5.6-cu129-amd64 (measured 2025-12-31T15:18:00Z): d27433d
	// (2025-12-31 15:17:57 UTC) moved dsr1-fp8-b200-sglang to it, TP 8 ep 1
	// at conc 4-64; the B200 runners ran the _docker.sh script, or from
	// ea181ae (06:18 UTC that day) on slurm nodes the _slurm.sh one, whose
	// server lines are the same.
	{"deepseek-ai/DeepSeek-R1", "fp8", "b200_sxm", "lmsysorg/sglang:v0.5.6-cu129-amd64", 8, 64, "", "2025-12-31", false, launch{
		name: "inferencex-v0.5.6", kvCache: "fp8", gmu: 0.82, maxSeqs: 128, maxBatched: 32768, recv: [2]int{10, 30}, graphMax: 128,
		source: "SemiAnalysisAI/InferenceX @ d27433d benchmarks/dsr1_fp8_b200_docker.sh and dsr1_fp8_b200_slurm.sh (ea181ae), TP 8 " +
			"(config ep 1, conc 4-64; --cuda-graph-max-bs 128 --max-running-requests 128 --mem-fraction-static 0.82 --kv-cache-dtype fp8_e4m3 " +
			"--chunked-prefill-size 32768 --max-prefill-tokens 32768 --scheduler-recv-interval 10, 30 from C = 16, --ep-size $EP_SIZE; " +
			"the commit that set image v0.5.6-cu129-amd64, 2025-12-31 15:17:57 UTC, the row measured 15:18:00 its run)"}},
	// vLLM.
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "b200_sxm", "vllm/vllm-openai:v0.17.0-cu130", 0, 0, "", "", false, launch{
		name: "inferencex-v0.17.0", gmu: 0.95, ep: epTP,
		epWhy: "minimaxm2.5_fp8_b200.sh from f342df18e (2026-03-11 18:39:27 UTC, the rows measured 18:39:31 its run) until bddbf40 tests " +
			"`if [ \"$EP_SIZE\" -ge 1 ]` before adding --enable-expert-parallel (bddbf40 made it -gt 1), and the sweep's EP_SIZE is the config's ep, " +
			"1 where the config names none (utils/matrix_logic/generate_sweep_configs.py @ 626932a, \"Fields.EP.value: 1,  # Default\"; " +
			"benchmark-tmpl.yml EP_SIZE: inputs.ep), so every run passed --enable-expert-parallel: vLLM runs the experts over the TP group " +
			"(FusedMoEParallelConfig.make @ 002d607: EP size = TP x DP with the flag)",
		source: "SemiAnalysisAI/InferenceX @ 626932a benchmarks/single_node/minimaxm2.5_fp8_b200.sh " +
			"(--gpu-memory-utilization 0.95 --block-size=32 --no-enable-prefix-caching; image v0.17.0-cu130 until bddbf40)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "b200_sxm", "vllm/vllm-openai:v0.19.0-cu130", 0, 0, "", "", false, launch{
		name: "inferencex-v0.19.0", kvCache: "fp8", gmu: 0.90, maxCapture: 2048,
		source: "SemiAnalysisAI/InferenceX @ bddbf40 benchmarks/single_node/minimaxm2.5_fp8_b200.sh " +
			"(--gpu-memory-utilization 0.90 --block-size=32 --kv-cache-dtype fp8 --max-cudagraph-capture-size 2048 --max-num-batched-tokens 2xISL; the commit that moved the image to v0.19.0-cu130)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "b300_sxm", "vllm/vllm-openai:v0.19.0-cu130", 0, 0, "", "", false, launch{
		name: "inferencex-v0.19.0", kvCache: "fp8", gmu: 0.90, maxCapture: 2048,
		source: "SemiAnalysisAI/InferenceX @ 0c2467c benchmarks/single_node/minimaxm2.5_fp8_b300.sh " +
			"(--gpu-memory-utilization 0.90 --block-size=32 --kv-cache-dtype fp8 --max-cudagraph-capture-size 2048 --max-num-batched-tokens 2xISL)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp8", "h100_sxm", "vllm/vllm-openai:v0.18.0", 0, 0, "", "", false, launch{
		name: "inferencex-v0.18.0", gmu: 0.90, maxSeqs: 256, cudagraphMode: "PIECEWISE",
		source: "SemiAnalysisAI/InferenceX @ 1d5cae1 benchmarks/single_node/minimaxm2.5_fp8_h100.sh " +
			"(--gpu-memory-utilization 0.90 --max-num-seqs 256 --compilation-config '{\"cudagraph_mode\":\"PIECEWISE\"}'; the commit that moved the image to v0.18.0)"}},
	// MiniMax-M2.5 NVFP4: every version of the scripts with image
	// v0.19.0-cu130 (B200 from 79bd988, B300 from 22d0f12, until the
	// v0.21.0 images of 2026-05-18) has this command line; 13962fc (B200)
	// and 633fd23 (B300) only export VLLM_FLOAT32_MATMUL_PRECISION=high
	// (no key). Before that, PR #996 (refs/pull/996/head in the mirror)
	// ran image nightly-5b8c30d from 08bcde8 (2026-04-02 20:18 UTC) until
	// 1ac9636 (2026-04-03 20:29 UTC) set v0.19.0-cu130 (image only): the
	// B200 rows of that image, measured 2026-04-03, are 08bcde8's
	// command line (TP 2 and 4, conc-end 512).
	{"MiniMaxAI/MiniMax-M2.5", "fp4", "b200_sxm", "vllm/vllm-openai:nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306", 0, 512, "", "2026-04-03", false, launch{
		name: "inferencex-nightly-5b8c30d", kvCache: "fp8", gmu: 0.95,
		source: "SemiAnalysisAI/InferenceX @ 08bcde8 (PR #996 head) benchmarks/single_node/minimaxm2.5_fp4_b200.sh " +
			"(--gpu-memory-utilization 0.95 --block-size=32 --kv-cache-dtype fp8 --stream-interval 20 --no-enable-prefix-caching, " +
			"no capture size; the PR's only commit with image nightly-5b8c30d, from 2026-04-02 20:18 UTC until 1ac9636 on 2026-04-03 20:29 UTC)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp4", "b200_sxm", "vllm/vllm-openai:v0.19.0-cu130", 0, 0, "", "", false, launch{
		name: "inferencex-v0.19.0", kvCache: "fp8", gmu: 0.90, maxCapture: 2048,
		dpAttnConfigs: []string{"707"},
		dpAttnWhy: "config_id 707's rows (1k/1k at C 256, 512, 1024, measured 2026-04-22, workflow run 802) are the points of the " +
			"dp-attn: true entry of minimaxm2.5-fp4-b200-vllm in nvidia-master.yaml @ 13962fc ({ tp: 2, ep: 2, dp-attn: true, conc 256-1024 }; " +
			"the TP-EP entries ran 1k/1k C 128 and 8k/1k C 128-512, config_id 706's points that day, and 1k/1k C 128-256 on 2026-04-08 under 79bd988's, " +
			"whose only dp-attn point was C 512); benchmark-tmpl.yml passes DP_ATTENTION: inputs.dp-attn, and minimaxm2.5_fp4_b200.sh @ 79bd988 " +
			"(13962fc likewise) runs DP_ATTENTION=true as --tensor-parallel-size=1 --data-parallel-size=$TP --enable-expert-parallel",
		source: "SemiAnalysisAI/InferenceX @ 79bd988 benchmarks/single_node/minimaxm2.5_fp4_b200.sh " +
			"(--gpu-memory-utilization 0.90 --kv-cache-dtype fp8 --max-cudagraph-capture-size 2048 --max-num-batched-tokens 2xISL " +
			"--stream-interval 20 --no-enable-prefix-caching; the commit that added the config with image v0.19.0-cu130; " +
			"13962fc adds only VLLM_FLOAT32_MATMUL_PRECISION=high)"}},
	{"MiniMaxAI/MiniMax-M2.5", "fp4", "b300_sxm", "vllm/vllm-openai:v0.19.0-cu130", 0, 0, "", "", false, launch{
		name: "inferencex-v0.19.0", kvCache: "fp8", gmu: 0.90, maxCapture: 2048,
		dpAttnConfigs: []string{"727"},
		dpAttnWhy: "config_id 727's rows (1k/1k at C 256-2048 and 8k/1k at C 512, measured 2026-04-21, workflow run 798) are the points of the " +
			"dp-attn: true entries of minimaxm2.5-fp4-b300-vllm in nvidia-master.yaml @ 633fd23 ({ tp: 2, ep: 2, dp-attn: true } 1k/1k conc 256-2048, " +
			"8k/1k conc 512; the TP-EP entry ran 1k/1k C 128 that day, config_id 726's point, and 726's 2026-04-17 points, 1k/1k C 256 and 8k/1k C 128-512, " +
			"are 22d0f12's TP-EP entries); benchmark-tmpl.yml passes DP_ATTENTION: inputs.dp-attn, and minimaxm2.5_fp4_b300.sh @ 22d0f12 " +
			"(633fd23 likewise) runs DP_ATTENTION=true as --tensor-parallel-size=1 --data-parallel-size=$TP --enable-expert-parallel",
		source: "SemiAnalysisAI/InferenceX @ 22d0f12 benchmarks/single_node/minimaxm2.5_fp4_b300.sh " +
			"(--gpu-memory-utilization 0.90 --kv-cache-dtype fp8 --max-cudagraph-capture-size 2048 --max-num-batched-tokens 2xISL " +
			"--stream-interval 20 --no-enable-prefix-caching; the commit that added the config with image v0.19.0-cu130; " +
			"633fd23 adds only VLLM_FLOAT32_MATMUL_PRECISION=high)"}},
	// Kimi-K2.5 NVFP4 B200, image v0.17.0 from a58dedd (2026-03-11
	// 16:59:36 UTC; the rows measured 16:59:40 are its run) until
	// 2026-05: the script changed at 6c3aceb (PR #1047, 2026-04-20
	// 14:22 UTC; its perf-changelog entry is the one that put this
	// config in a sweep that day), so the rows split by measured date.
	// Both scripts pass --max-num-seqs $CONC (not carried: one scenario
	// holds every concurrency) and no --enable-expert-parallel: the
	// configs' ep 4 (nvidia-master.yaml @ a58dedd, { tp: 4, ep: 4 }) is in
	// the rows' moe_ep_size but not on the command line, so the engine
	// ran TP 4 with its experts tensor-parallel (epOff).
	{"moonshotai/Kimi-K2.5", "fp4", "b200_sxm", "vllm/vllm-openai:v0.17.0", 0, 0, "", "2026-03-", false, launch{
		name: "inferencex-v0.17.0", gmu: 0.90, ep: epOff, epWhy: kimiNoEP("a58dedd", "kimik2.5_fp4_b200.sh", "v0.17.0"),
		source: "SemiAnalysisAI/InferenceX @ a58dedd benchmarks/single_node/kimik2.5_fp4_b200.sh " +
			"(--gpu-memory-utilization 0.90 --max-num-seqs $CONC (not carried) --compilation_config.pass_config.fuse_allreduce_rms true (not modelled), " +
			"no --kv-cache-dtype; the commit that added the config with image v0.17.0, the rows measured 2026-03-11T16:59:40 its run; " +
			"79a42e2 (2026-03-27) adds only --no-enable-prefix-caching; same flags until 6c3aceb)"}},
	{"moonshotai/Kimi-K2.5", "fp4", "b200_sxm", "vllm/vllm-openai:v0.17.0", 0, 0, "", "2026-04-20", false, launch{
		name: "inferencex-v0.17.0-pr1047", kvCache: "fp8", gmu: 0.90, maxCapture: 2048, ep: epOff, epWhy: kimiNoEP("6c3aceb", "kimik2.5_fp4_b200.sh", "v0.17.0"),
		source: "SemiAnalysisAI/InferenceX @ 6c3aceb benchmarks/single_node/kimik2.5_fp4_b200.sh " +
			"(--gpu-memory-utilization 0.90 --max-num-seqs $CONC (not carried) --kv-cache-dtype fp8 --max-cudagraph-capture-size 2048 " +
			"--max-num-batched-tokens 2xISL --stream-interval 20 --no-enable-prefix-caching, fuse_allreduce_rms (not modelled); " +
			"PR #1047, merged 2026-04-20, whose perf-changelog entry ran the config's sweep that day, with image v0.17.0)"}},
	// Kimi-K2.5 NVFP4 B300, image v0.19.0-cu130: a35e536 (2026-04-17,
	// reverted 2026-04-20) and f34a83b (2026-04-20) hold the same
	// command line. The rows of image v0.17.0-cu130 (2026-04-03) come
	// before any B300 Kimi config on main: no entry.
	{"moonshotai/Kimi-K2.5", "fp4", "b300_sxm", "vllm/vllm-openai:v0.19.0-cu130", 0, 0, "", "", false, launch{
		name: "inferencex-v0.19.0", gmu: 0.90, ep: epOff, epWhy: kimiNoEP("f34a83b", "kimik2.5_fp4_b300.sh", "v0.19.0"),
		source: "SemiAnalysisAI/InferenceX @ f34a83b benchmarks/single_node/kimik2.5_fp4_b300.sh " +
			"(--gpu-memory-utilization 0.90 --max-num-seqs $CONC (not carried) --no-enable-prefix-caching, fuse_allreduce_rms (not modelled), " +
			"no --kv-cache-dtype; the B200 recipe as-is; a35e536 had the same command line with the same image)"}},
	// Kimi-K2.5 INT4 B200, image v0.15.1: the rows measured
	// 2026-03-24T20:03:09 are the run of 79ea365 (20:03:05 UTC).
	{"moonshotai/Kimi-K2.5", "int4", "b200_sxm", "vllm/vllm-openai:v0.15.1", 8, 64, "", "2026-03-24", false, launch{
		name: "inferencex-v0.15.1", gmu: 0.95, ep: epOff, epWhy: kimiNoEP("79ea365", "kimik2.5_int4_b200.sh", "v0.15.1"),
		source: "SemiAnalysisAI/InferenceX @ 79ea365 benchmarks/single_node/kimik2.5_int4_b200.sh, TP 8 " +
			"(config conc 4-64; --gpu-memory-utilization 0.95 --max-num-seqs $CONC (not carried) --no-enable-prefix-caching, " +
			"fuse_allreduce_rms and VLLM_USE_FLASHINFER_MOE_INT4=1 (not modelled), no --kv-cache-dtype; the rows measured 2026-03-24T20:03:09 are this commit's run)"}},
	// gpt-oss-120b H100, image v0.18.0 (config conc-end 64). The rows
	// of image v0.11.2 (2025-12-08) are recorded at concurrency 512: the
	// docker script's client ran --max-concurrency 512 until 4e135fd
	// (2025-12-08) while the server took --max-num-seqs $CONC, a $CONC
	// the rows do not record: no entry.
	{"openai/gpt-oss-120b", "fp4", "h100_sxm", "vllm/vllm-openai:v0.18.0", 0, 64, "", "", false, launch{
		name: "inferencex-v0.18.0", gmu: 0.9, maxBatched: 8192, maxCapture: 2048, mxfp4Backend: "marlin",
		source: "SemiAnalysisAI/InferenceX @ cec542a benchmarks/single_node/gptoss_fp4_h100.sh " +
			"(config.yaml: no-enable-prefix-caching, max-cudagraph-capture-size 2048, max-num-batched-tokens 8192; VLLM_MXFP4_USE_MARLIN=1 (runtime.mxfp4_moe_backend); " +
			"--gpu-memory-utilization=0.9 --max-num-seqs=$CONC (not carried); the commit that moved the config to image v0.18.0, the rows measured 2026-03-27T08:01:51 its run)"}},
	// gpt-oss-120b H100 of 2025-12-05 (no image named; v0.11.0, gen's
	// version) and 2025-12-08 (image v0.11.2): every row records
	// concurrency 512, above the config's conc-end 64 (nvidia-master.yaml
	// @ 25506e8, gptoss-fp4-h100-vllm: TP 2, 4, 8, conc 4-64). The H100
	// runners were h100-cr (runners/launch_h100-cr.sh: docker, runs
	// benchmarks/gptoss_fp4_h100_docker.sh) and h100-cw (launch_h100-cw.sh:
	// slurm, gptoss_fp4_h100_slurm.sh, whose client passes
	// --max-concurrency=$CONC). The docker script's client passed
	// --max-concurrency 512 from d22bf9c (2025-11-21) until 4e135fd
	// (2025-12-08 22:20 UTC, "fix h100 docker error": $CONC), with
	// --num-prompts 10 x $CONC against vllm serve --max-num-seqs=$CONC;
	// the client writes its --max-concurrency into the result
	// (kimbochen/bench_serving benchmark_serving.py @ 406abc3:
	// result_json["max_concurrency"] = args.max_concurrency) and
	// utils/process_result.py @ 25506e8 takes it as the row's conc. So
	// these rows are docker-runner runs at some $CONC of 4-64, all 10 x
	// $CONC requests sent at once (10 x $CONC <= 512 up to $CONC 32; 512
	// of 640 at $CONC 64) and the server running $CONC at a time: a
	// queue of 10 x $CONC served $CONC at a time makes the mean TTFT
	// about 4 to 4.5 times a request's own decode time whatever $CONC is
	// (the nine rows: 4.2-4.8, bench/RESULTS-launch.md), the TPOT is that
	// of a batch of $CONC, and which $CONC each row is
	// is not recorded (the export holds one row per layout and lengths at
	// concurrency 512, of the five $CONC points each ran, and names none).
	{"openai/gpt-oss-120b", "fp4", "h100_sxm", "", 0, 0, "vllm", "2025-12-05", false, launchGPTOSSH100Docker512(
		"d22bf9c benchmarks/gptoss_fp4_h100_docker.sh (and 25506e8's, the same client line; image v0.11.0 until 25506e8, 2025-12-05 21:49 UTC) " +
			"(config.yaml: compilation-config cudagraph_mode PIECEWISE, async-scheduling true, no-enable-prefix-caching, cuda-graph-sizes 2048, " +
			"max-num-batched-tokens 8192, max-model-len 10240; --gpu-memory-utilization=0.9 --max-num-seqs=$CONC; client --max-concurrency 512)")},
	{"openai/gpt-oss-120b", "fp4", "h100_sxm", "vllm/vllm-openai:v0.11.2", 0, 0, "", "2025-12-08", false, launchGPTOSSH100Docker512(
		"25506e8 benchmarks/gptoss_fp4_h100_docker.sh (image v0.11.2 from that commit, 2025-12-05; the client line until 4e135fd, 2025-12-08 22:20 UTC) " +
			"(config.yaml: async-scheduling true, no-enable-prefix-caching, max-cudagraph-capture-size 2048, max-num-batched-tokens 8192, " +
			"max-model-len 10240, no compilation-config (v0.11.2's default FULL_AND_PIECEWISE); --gpu-memory-utilization=0.9 --max-num-seqs=$CONC; " +
			"client --max-concurrency 512)")},
	// gpt-oss-120b: the rows name image v0.15.1 and were measured
	// 2026-02-25, the day d2c2acb moved the config to it. The script
	// exports VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1. Each TP's conc-end
	// (1k/1k and 1k/8k; 8k/1k TP 8: 4) bounds the rows it ran.
	{"openai/gpt-oss-120b", "fp4", "b200_sxm", "vllm/vllm-openai:v0.15.1", 1, 128, "", "", false, launchGPTOSSB200},
	{"openai/gpt-oss-120b", "fp4", "b200_sxm", "vllm/vllm-openai:v0.15.1", 2, 128, "", "", false, launchGPTOSSB200},
	{"openai/gpt-oss-120b", "fp4", "b200_sxm", "vllm/vllm-openai:v0.15.1", 4, 64, "", "", false, launchGPTOSSB200},
	{"openai/gpt-oss-120b", "fp4", "b200_sxm", "vllm/vllm-openai:v0.15.1", 8, 8, "", "", false, launchGPTOSSB200},
	// gpt-oss-120b B200, measured 2025-11-02, no image named:
	// gptoss-tmpl.yml @ 9596d23 ran vllm/vllm-openai:v0.10.2 on B200 (TP
	// 1, 2, 4, 8) with benchmarks/gptoss_fp4_b200_docker.sh, the only
	// gpt-oss vLLM B200 script (no _slurm.sh), unchanged from ad4f6a4
	// (2025-10-30) until 25506e8 (2025-12-05).
	{"openai/gpt-oss-120b", "fp4", "b200_sxm", "", 0, 0, "vllm", "2025-11-02", false, launch{
		name: "inferencex-v0.10.2", async: true, gmu: 0.9, maxSeqs: 512, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "FULL_AND_PIECEWISE", mxfp4Act: "mxfp8",
		source: "SemiAnalysisAI/InferenceX @ 9596d23 benchmarks/gptoss_fp4_b200_docker.sh " +
			"(VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1; config.yaml: compilation-config cudagraph_mode FULL_AND_PIECEWISE with FlashInfer all-reduce " +
			"and attention fusion (not modelled), async-scheduling true (runtime.async_scheduling), no-enable-prefix-caching, cuda-graph-sizes 2048 (v0.10.2: " +
			"the largest capture size, renamed max-cudagraph-capture-size at 25506e8), max-num-batched-tokens 8192; --gpu-memory-utilization 0.9 " +
			"--max-num-seqs 512, no --kv-cache-dtype; image v0.10.2)"}},
	// gpt-oss-120b H100, measured 2025-11-02, no image named:
	// gptoss-tmpl.yml @ 9596d23 ran v0.10.2 on H100 (TP 2, 4, 8); the
	// docker and slurm scripts (af4ccd0, unchanged until 7103d66,
	// 2025-11-04) hold the same server command line.
	{"openai/gpt-oss-120b", "fp4", "h100_sxm", "", 0, 0, "vllm", "2025-11-02", false, launch{
		name: "inferencex-v0.10.2", async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "PIECEWISE",
		source: "SemiAnalysisAI/InferenceX @ 9596d23 benchmarks/gptoss_fp4_h100_docker.sh and gptoss_fp4_h100_slurm.sh " +
			"(config.yaml: async-scheduling true (runtime.async_scheduling), no-enable-prefix-caching, cuda-graph-sizes 2048 (v0.10.2: the largest capture size), " +
			"max-num-batched-tokens 8192; --gpu-memory-utilization=0.9 --max-num-seqs=$CONC (not carried); no --compilation-config: v0.10.2's " +
			"default cudagraph_mode PIECEWISE, before vllm-project/vllm#25444; image v0.10.2)"}},
	// Llama-3.1-70B (the CSV export's rows measured 2025-10-29 name no
	// image): InferenceX ran vllm/vllm-openai:v0.10.2 for them
	// (.github/workflows/70b-tmpl.yml) until 2582bce (2025-10-29, "remove
	// llama 70b"); its parent holds the scripts. B200's vLLM runners
	// (launch_b200-nvd.sh, launch_b200-tg.sh) run the _docker.sh scripts
	// (b200-nb and b200-nv run _slurm.sh scripts, which no 70b vLLM B200
	// script is).
	{"meta-llama/Llama-3.1-70B", "fp8", "b200_sxm", "", 0, 0, "vllm", "2025-10-29", false, launch{
		name: "inferencex-v0.10.2", async: true, kvCache: "fp8", gmu: 0.9, maxSeqs: 512, cudagraphMode: "FULL_DECODE_ONLY",
		source: "SemiAnalysisAI/InferenceX @ 2582bce^ benchmarks/70b_fp8_b200_docker.sh " +
			"(kv-cache-dtype fp8, --compilation-config cudagraph_mode FULL_DECODE_ONLY with splitting_ops [], FlashInfer all-reduce " +
			"and attention fusion, --gpu-memory-utilization 0.9 --max-num-seqs 512, max-num-batched-tokens 8192, async scheduling; image v0.10.2)"}},
	{"meta-llama/Llama-3.1-70B", "fp4", "b200_sxm", "", 0, 0, "vllm", "2025-10-29", false, launch{
		name: "inferencex-v0.10.2", async: true, kvCache: "fp8", gmu: 0.9, maxSeqs: 512, cudagraphMode: "FULL_DECODE_ONLY",
		source: "SemiAnalysisAI/InferenceX @ 2582bce^ benchmarks/70b_fp4_b200_docker.sh " +
			"(kv-cache-dtype fp8, --compilation-config cudagraph_mode FULL_DECODE_ONLY with splitting_ops [], FlashInfer all-reduce " +
			"and attention fusion, --gpu-memory-utilization 0.9 --max-num-seqs 512, max-num-batched-tokens 8192, async scheduling; image v0.10.2)"}},
	{"meta-llama/Llama-3.1-70B", "fp8", "h100_sxm", "", 0, 0, "vllm", "2025-10-29", false, launch{
		name: "inferencex-v0.10.2", async: true, kvCache: "fp8", gmu: 0.9, cudagraphMode: "PIECEWISE",
		source: "SemiAnalysisAI/InferenceX @ 2582bce^ benchmarks/70b_fp8_h100_docker.sh and 70b_fp8_h100_slurm.sh " +
			"(kv-cache-dtype fp8, --gpu-memory-utilization 0.9, max-num-batched-tokens 8192, async scheduling, --max-num-seqs $CONC " +
			"(not carried: one scenario holds every concurrency); no --compilation-config: v0.10.2's default cudagraph_mode PIECEWISE, " +
			"FULL_AND_PIECEWISE only from vllm-project/vllm#25444, after it; image v0.10.2)"}},
}

// launchTRTMTP is InferenceX's DeepSeek-R1 B200 TensorRT-LLM MTP command
// line for a precision with k drafts (3; 1 under attention DP).
func launchTRTMTP(precision string, k int) launch {
	commit, dp, batch := map[string]string{"fp8": "5d517074c", "fp4": "0aae52d4c"}[precision], "", "$CONC"
	if k == 1 {
		dp, batch = ", the attention-DP points", map[string]string{"fp8": "$CONC/8", "fp4": "$CONC/4"}[precision]
	}
	return launch{name: "inferencex-1.2.0rc6.post3-mtp", kvCache: "fp8", spec: "mtp", draftTokens: k, acceptance: mtpAcceptanceDeepSeekV3,
		source: "SemiAnalysisAI/InferenceX @ " + commit + " benchmarks/dsr1_" + precision + "_b200_trt_mtp.sh" + dp +
			" (config dsr1-" + precision + "-b200-trt-mtp, the only B200 config with image release:1.2.0rc6.post3 on the rows' date; " +
			"speculative_config decoding_type MTP, num_nextn_predict_layers " + strconv.Itoa(k) + " (3, or 1 with enable_attention_dp); " +
			"kv_cache_config dtype fp8; not carried: free_gpu_memory_fraction, max_batch_size " + batch + ", " +
			"max_num_tokens, moe_config backend, piecewise CUDA graphs)"}
}

// mtpAcceptanceDeepSeekV3 is the acceptance of DeepSeek-V3's MTP draft
// that moecast documents (scenarios/deepseek-v3-fp8-h200-tp8-mtp.toml: the
// DeepSeek-V3 technical report, arXiv 2412.19437 §5.4.3, 85-90% for the
// second token), used at every draft position. It is measured on natural
// text; the acceptance on InferenceX's random-token prompts (chat template
// on, the model's own continuation) is not published.
const mtpAcceptanceDeepSeekV3 = 0.85

// mtpAcceptanceGLM5 is the acceptance of GLM-5's MTP draft at its first
// position as vLLM's spec-decode counters measured it on zai-org/GLM-5-FP8
// (vllm-project/recipes @ ae68dd6 GLM/GLM5.md, "FP8 Benchmark"): 8x H200,
// `vllm serve zai-org/GLM-5-FP8 --tensor-parallel-size 8
// --speculative-config.method mtp --speculative-config.num_speculative_tokens 3`
// (image vllm/vllm-openai:v0.18.0), `vllm bench serve --dataset-name random
// --random-input 8000 --random-output 1024 --request-rate 10 --num-prompts 32
// --ignore-eos`; per-position acceptance 36.59%, 20.39%, 7.00% (acceptance
// length 1.64 over 19,982 drafts). It is a measurement of the draft, not
// of the serving rows, and is not fitted to them. Position 0 is the one
// draft of InferenceX's K = 1 runs (the first draft is the same MTP pass
// whatever K), on the same kind of traffic: /v1/completions, greedy (vllm
// bench serve's defaults: --endpoint /v1/completions, temperature 0.0 when
// none is given; InferenceX's benchmark_serving_random.py sends
// temperature 0.0), prompts of consecutive token ids from a random offset
// (vLLM's RandomDataset, InferenceX's client :147-156), ignore_eos. It
// differs in the lengths (8000 in / 1024 out against 1k-16k in / 128 out)
// and the vLLM build (v0.18.0 against the nightly of 2026-02-13).
const mtpAcceptanceGLM5 = 0.3659

// mtpAcceptanceGLM5Note is the scenario comment that names that source.
const mtpAcceptanceGLM5Note = "Speculative acceptance 0.3659 at the one draft position (K = 1): vLLM's measured per-position acceptance of " +
	"GLM-5-FP8's MTP draft at position 0 on 8x H200 with random-token prompts, greedy, /v1/completions (vllm-project/recipes @ ae68dd6 " +
	"GLM/GLM5.md, FP8 Benchmark, vLLM v0.18.0, K = 3: 36.59%, 20.39%, 7.00%); a measurement of the draft, not fitted to these rows."

// launchDSR1FP4B200Docker is InferenceX's DeepSeek-R1 NVFP4 B200 SGLang
// command line of 2025-11 (TP 4 and 8).
var launchDSR1FP4B200Docker = launch{
	name: "inferencex-2025-11", kvCache: "fp8", gmu: 0.85, maxSeqs: 256, maxBatched: 16384, recv: [2]int{10, 30}, graphMax: 256,
	ep: epTP,
	epWhy: "dsr1_fp4_b200_docker.sh @ 9596d23 passes --enable-ep-moe (and no --ep-size), a flag SGLang of those images keeps only as deprecated: " +
		"it sets ep_size to tp_size (sgl-project/sglang python/sglang/srt/server_args.py @ 4cb5a52, the deprecated-flag handling, as SpecForge PR #246 cites it; " +
		"docs/advanced_features/server_arguments.md @ 885cfca: \"--enable-ep-moe is deprecated. Please set --ep-size to the same value as --tp-size instead\"); " +
		"the configs named no ep until d8fe8f7 (2025-11-10 19:55 UTC; dsr1-tmpl.yml @ 9596d23, nvidia-master.yaml @ d8fe8f7^ { tp: 4 } and { tp: 8 }), " +
		"so the rows record ep 1; d8fe8f7 replaced the flag by --ep-size $EP_SIZE with ep 4 and ep 8 = TP, the same layout " +
		"(InferenceX PR #242, 189ae51: before PR #204 \"--enable-ep-moe ... was set\", EP on for fp4)",
	source: "SemiAnalysisAI/InferenceX @ 9596d23 benchmarks/dsr1_fp4_b200_docker.sh " +
		"(--cuda-graph-max-bs 256 --max-running-requests 256 --mem-fraction-static 0.85 --kv-cache-dtype fp8_e4m3 --chunked-prefill-size 16384 " +
		"--scheduler-recv-interval 10, 30 from C = 16, --enable-ep-moe (EP = TP); image v0.5.3rc1-cu129-b200, from d8fe8f7 (2025-11-10) v0.5.5-cu129-amd64 " +
		"with --ep-size $EP_SIZE, the same settings otherwise; config TP 4 and 8, conc 4-128)"}

// launchGPTOSSH100Docker512 is InferenceX's gpt-oss-120b H100 docker
// script of 2025-11-21 to 2025-12-08, whose client ran --max-concurrency
// 512 whatever $CONC was (src: the script @ commit and its settings). Its
// server settings are carried for a row that records its $CONC (none
// does: a slurm-runner row would be the slurm script's, the same server
// line); a row recorded at 512 is skipped (clientConc).
func launchGPTOSSH100Docker512(src string) launch {
	l := launch{name: "inferencex-docker-client512", async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, clientConc: 512,
		clientWhy: gptossH100Client512, source: "SemiAnalysisAI/InferenceX @ " + src}
	if strings.Contains(src, "cudagraph_mode PIECEWISE") {
		l.cudagraphMode = "PIECEWISE"
	}
	return l
}

// gptossH100Client512 is why the gpt-oss-120b H100 rows recorded at
// concurrency 512 are not scored.
const gptossH100Client512 = "the row's concurrency 512 is the benchmark client's fixed --max-concurrency 512 in InferenceX's " +
	"benchmarks/gptoss_fp4_h100_docker.sh (d22bf9c until 4e135fd, 2025-11-21 to 2025-12-08; the H100 docker runner, launch_h100-cr.sh), " +
	"which utils/process_result.py records as the row's conc; the server ran --max-num-seqs=$CONC with 10 x $CONC prompts sent at once, " +
	"$CONC one of the config's 4-64 (nvidia-master.yaml @ 25506e8), and the row does not record which"

// launchGPTOSSB200 is InferenceX's gpt-oss-120b B200 vLLM command line
// at image v0.15.1.
var launchGPTOSSB200 = launch{
	name: "inferencex-v0.15.1", kvCache: "fp8", gmu: 0.9, maxSeqs: 512, maxBatched: 8192, maxCapture: 2048, mxfp4Act: "mxfp8",
	source: "SemiAnalysisAI/InferenceX @ d2c2acb benchmarks/single_node/gptoss_fp4_b200.sh " +
		"(VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1, kv-cache-dtype fp8, max-cudagraph-capture-size 2048, max-num-batched-tokens 8192, " +
		"--gpu-memory-utilization 0.9 --max-num-seqs 512, no prefix caching, fuse_allreduce_rms (not modelled); " +
		"the commit that moved the config to image v0.15.1, 2026-02-25, the rows' measured date)"}

// launchOf is the InferenceX command line of a row, if the table holds
// it: the row's model_path, precision, system, tp_size, concurrency and an image named
// in its silicon_data_source ("...; vllm/vllm-openai:TAG" or
// "image=...:TAG"; the tag is matched whole), or, for an entry without an
// image, the row's backend and measured date ("measured=DATE..."). It
// takes the row as a run of a config the database dump lists (no
// speculative-decoding entry): launchOfRun says which.
func launchOf(backend, model, precision, system string, tp, conc int, source string) (launch, bool) {
	return launchOfRun(backend, model, precision, system, tp, conc, source, true)
}

// launchOfRun is launchOf for a row that is (dumpRun) or is not a run of
// a config InferenceX's database dump lists: entries with specRun take
// only the latter.
func launchOfRun(backend, model, precision, system string, tp, conc int, source string, dumpRun bool) (launch, bool) {
	if model == "deepseek-ai/DeepSeek-V3" && strings.HasPrefix(source, "db-dump/") {
		model = "deepseek-ai/DeepSeek-R1" // InferenceX's dsr1 configs, listed as DeepSeek-V3
	}
	for _, l := range inferenceXLaunches {
		if l.model != model || l.precision != precision || l.system != system || (l.tp != 0 && l.tp != tp) ||
			(l.maxConc != 0 && conc > l.maxConc) || (l.backend != "" && l.backend != backend) || (l.specRun && dumpRun) {
			continue
		}
		for _, f := range strings.Split(source, ";") {
			f = strings.TrimSpace(f)
			if l.image == "" {
				if l.measured != "" && strings.HasPrefix(f, "measured="+l.measured) {
					return l.launch, true
				}
				continue
			}
			if sameImage(strings.TrimPrefix(f, "image="), l.image) && (l.measured == "" || strings.Contains(source, "measured="+l.measured)) {
				return l.launch, true
			}
		}
	}
	return launch{}, false
}

// imageOf is the container image a silicon_data_source names ("...;
// lmsysorg/sglang:TAG" in the database dump, "image=...:TAG" in the CSV
// exports); "" when it names none.
func imageOf(source string) string {
	for _, f := range strings.Split(source, ";") {
		f = strings.TrimPrefix(strings.TrimSpace(f), "image=")
		if strings.Contains(f, "/") && strings.Contains(f, ":") && !strings.Contains(f, "=") {
			return f
		}
	}
	return ""
}

// dumpRuns indexes the figures of the rows of InferenceX's database dump
// (silicon_data_source "db-dump/...") by setup: model (DeepSeek-V3 read
// as DeepSeek-R1, as launchOf does), precision, system, backend, layout,
// lengths, concurrency and image.
type dumpRuns map[string][][2]float64

// runSetup is the key of a row's setup in dumpRuns.
func runSetup(get func(string) string) string {
	model := get("model_path")
	if model == "deepseek-ai/DeepSeek-V3" && strings.HasPrefix(get("silicon_data_source"), "db-dump/") {
		model = "deepseek-ai/DeepSeek-R1"
	}
	return strings.Join([]string{model, get("precision"), get("system"), get("backend"), get("mode"), get("tp_size"),
		get("attention_dp_size"), get("moe_ep_size"), get("isl"), get("osl"), get("batch_size"), imageOf(get("silicon_data_source"))}, "|")
}

// add records a row if it is the dump's.
func (d dumpRuns) add(get func(string) string) {
	if !strings.HasPrefix(get("silicon_data_source"), "db-dump/") {
		return
	}
	tpot, e1 := strconv.ParseFloat(get("silicon_tpot_ms"), 64)
	ttft, e2 := strconv.ParseFloat(get("silicon_ttft_ms"), 64)
	if e1 != nil || e2 != nil {
		return
	}
	k := runSetup(get)
	d[k] = append(d[k], [2]float64{tpot, ttft})
}

// dumpRun reports whether a row is a run of a config the database dump
// lists: a dump row itself, or a row of the same setup whose TPOT and
// TTFT are both within 0.01 ms of a dump row's (the same measurement in
// a CSV export). InferenceX's dump lists no speculative-decoding run of
// the deployments that have a specRun entry (see inferenceXLaunches), so
// a row that is not a dump run there is the speculative config's.
func (d dumpRuns) dumpRun(get func(string) string) bool {
	if strings.HasPrefix(get("silicon_data_source"), "db-dump/") {
		return true
	}
	tpot, e1 := strconv.ParseFloat(get("silicon_tpot_ms"), 64)
	ttft, e2 := strconv.ParseFloat(get("silicon_ttft_ms"), 64)
	if e1 != nil || e2 != nil {
		return false
	}
	for _, f := range d[runSetup(get)] {
		if math.Abs(f[0]-tpot) <= 0.01 && math.Abs(f[1]-ttft) <= 0.01 {
			return true
		}
	}
	return false
}

// specSetup is the key under which specCopies compares rows: GPU, model
// (DeepSeek-V3 db-dump rows read as DeepSeek-R1, as runSetup does),
// engine, precision, mode, layout, lengths and concurrency; not the
// engine version, the image or the collection, which a copy may not
// carry.
func specSetup(get func(string) string) string {
	model := get("model_path")
	if model == "deepseek-ai/DeepSeek-V3" && strings.HasPrefix(get("silicon_data_source"), "db-dump/") {
		model = "deepseek-ai/DeepSeek-R1"
	}
	return strings.Join([]string{model, get("precision"), get("system"), get("backend"), get("mode"), get("tp_size"), get("pp_size"),
		get("attention_dp_size"), get("moe_tp_size"), get("moe_ep_size"), get("isl"), get("osl"), get("batch_size")}, "|")
}

// specCopies finds the rows that repeat a speculative-decoding run: for
// each row i that the generator does not map to a speculative deployment
// (spec[i] false), the first row j that it does (spec[j] true) of the
// same specSetup whose TTFT and TPOT are both within 0.01 ms of row i's.
// Two runs with and without speculation cannot agree to 0.01 ms on both
// means (the drafts change every decode step), so row i is row j's
// measurement listed again, in a collection that records no speculative
// decoding (aiconfigurator's qwen3.5-397b-gap-analysis.csv repeats, to
// two decimals, InferenceX's qwen3.5-fp8-b200-sglang-mtp rows). It
// reads only the rows' own columns, never a prediction.
func specCopies(recs [][]string, get func([]string) func(string) string, spec []bool) map[int]int {
	figures := func(g func(string) string) (tpot, ttft float64, ok bool) {
		a, e1 := strconv.ParseFloat(g("silicon_tpot_ms"), 64)
		b, e2 := strconv.ParseFloat(g("silicon_ttft_ms"), 64)
		return a, b, e1 == nil && e2 == nil
	}
	bySetup := map[string][]int{}
	for j, rec := range recs {
		if spec[j] {
			k := specSetup(get(rec))
			bySetup[k] = append(bySetup[k], j)
		}
	}
	out := map[int]int{}
	for i, rec := range recs {
		if spec[i] {
			continue
		}
		g := get(rec)
		tpot, ttft, ok := figures(g)
		if !ok {
			continue
		}
		for _, j := range bySetup[specSetup(g)] {
			if t, f, ok := figures(get(recs[j])); ok && math.Abs(t-tpot) <= 0.01 && math.Abs(f-ttft) <= 0.01 {
				out[i] = j
				break
			}
		}
	}
	return out
}

// sameImage reports whether two container image references name one
// image: InferenceX's configs write NGC images as nvcr.io#nvidia/...
// (enroot's notation), some of aiconfigurator's rows as nvcr.io/nvidia/...
func sameImage(a, b string) bool {
	norm := func(s string) string { return strings.Replace(s, "nvcr.io#", "nvcr.io/", 1) }
	return norm(a) == norm(b)
}

// kimiNoEP is the epWhy of a Kimi-K2.5 vLLM script that passes no
// expert-parallel flag.
func kimiNoEP(commit, script, version string) string {
	return "SemiAnalysisAI/InferenceX @ " + commit + " benchmarks/single_node/" + script + " passes --tensor-parallel-size=$TP and no " +
		"--enable-expert-parallel (it does not read $EP_SIZE), so vLLM " + version + " runs the MoE layers tensor-parallel " +
		"(vllm/config/parallel.py ParallelConfig.enable_expert_parallel defaults to False; FusedMoEParallelConfig.make @ 002d607 uses EP only with it); " +
		"the config's ep reaches the record, not the command line"
}
