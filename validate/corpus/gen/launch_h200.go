package main

import (
	"maps"
	"slices"
)

// InferenceX's single-node H200 configs (system h200_sxm): vLLM
// gptoss-fp4-h200-vllm, minimaxm2.5-fp8-h200-vllm, kimik2.5-int4-h200-vllm
// and the Llama-3.3-70B FP8 workflow; SGLang dsr1-fp8-h200-sglang,
// qwen3.5-fp8-h200-sglang and glm5-fp8-h200-sglang. Each entry is the
// script in force while the image it names was the config's in
// .github/configs/nvidia-master.yaml (first-parent history of
// SemiAnalysisAI/InferenceX; before 17d5e204f, 2025-11-03, the
// .github/workflows/*-tmpl.yml files). H200 was only ever run on slurm
// runners (runners/launch_h200-cw.sh, -nb.sh, -nv.sh, -dgxc-slurm.sh):
// until b0c4ed21b (2026-01-22) they ran benchmarks/*_h200_slurm.sh, then
// the merged benchmarks/[single_node/]*_h200.sh; no H200 _docker.sh
// script ever existed, so the H100 docker client's fixed
// --max-concurrency 512 (launchGPTOSSH100Docker512) has no H200
// counterpart: every H200 client passes --max-concurrency $CONC.
//
// Rows that name no image take the entry of their measured date (backend
// set), the image in force that day. Image entries come first: a row
// that names an image takes its image's entry whatever its date.
//
// Not carried (no scenario key, or one scenario holds every
// concurrency): vLLM --max-num-seqs $CONC, --max-model-len,
// --no-enable-prefix-caching (random prompts share nothing),
// fuse_allreduce_rms; SGLang --disable-radix-cache,
// --attention-backend flashinfer, --stream-interval (see launch),
// --enable-flashinfer-allreduce-fusion.
func inferenceXH200Launches() []inferenceXLaunch {
	const (
		gptoss = "openai/gpt-oss-120b"
		dsr1   = "deepseek-ai/DeepSeek-R1"
		mm     = "MiniMaxAI/MiniMax-M2.5"
		kimi   = "moonshotai/Kimi-K2.5"
		qwen   = "Qwen/Qwen3.5-397B-A17B"
		glm    = "zhipuai/GLM-5"
		llama  = "meta-llama/Llama-3.1-70B"
		h200   = "h200_sxm"
	)
	var out []inferenceXLaunch
	add := func(model, precision, image string, tp, maxConc int, l launch) {
		out = append(out, inferenceXLaunch{model: model, precision: precision, system: h200, image: image, tp: tp, maxConc: maxConc, launch: l})
	}
	// byDates adds one entry per measured-date prefix for the rows that
	// name no image.
	var dated []inferenceXLaunch
	byDates := func(model, precision, backend string, tp, maxConc int, l launch, dates ...string) {
		for _, d := range dates {
			dated = append(dated, inferenceXLaunch{model: model, precision: precision, system: h200, tp: tp, maxConc: maxConc, backend: backend, measured: d, launch: l})
		}
	}

	// gpt-oss-120b, vLLM, config gptoss-fp4-h200-vllm: TP 1, 2, 4, 8, conc-end
	// 64 (TP 1 1k/1k and 1k/8k: 4).
	gptossSrc := func(commit, script, rest string) string {
		return "SemiAnalysisAI/InferenceX @ " + commit + " benchmarks/" + script + " (" + rest + ")"
	}
	v0102 := launch{name: "inferencex-v0.10.2", async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "PIECEWISE",
		source: gptossSrc("9596d23", "gptoss_fp4_h200_slurm.sh",
			"config.yaml: async-scheduling true (runtime.async_scheduling), no-enable-prefix-caching, cuda-graph-sizes 2048 (v0.10.2: the largest capture size), "+
				"max-num-batched-tokens 8192; --gpu-memory-utilization 0.9 --max-num-seqs $CONC (not carried); no --compilation-config: v0.10.2's default "+
				"cudagraph_mode PIECEWISE; image v0.10.2 (gptoss-tmpl.yml from 77f238d12, 2025-09-15, nvidia-master.yaml from 17d5e204f) until 7103d66, 2025-11-04 15:27 UTC")}
	v0110 := launch{name: "inferencex-v0.11.0", async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, cudagraphMode: "PIECEWISE",
		source: gptossSrc("7103d66", "gptoss_fp4_h200_slurm.sh",
			"config.yaml: compilation-config cudagraph_mode PIECEWISE, async-scheduling true, no-enable-prefix-caching, cuda-graph-sizes 2048, "+
				"max-num-batched-tokens 8192; --gpu-memory-utilization 0.9 --max-num-seqs $CONC (not carried); the commit that set image v0.11.0, "+
				"2025-11-04 15:27 UTC, until 25506e8, 2025-12-05 21:49 UTC (d22bf9c changed only the client's wrapper, still --max-concurrency $CONC)")}
	v0112 := launch{name: "inferencex-v0.11.2", async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048,
		source: gptossSrc("25506e8", "gptoss_fp4_h200_slurm.sh",
			"config.yaml: async-scheduling true, no-enable-prefix-caching, max-cudagraph-capture-size 2048, max-num-batched-tokens 8192, "+
				"no compilation-config (v0.11.2's default FULL_AND_PIECEWISE); --gpu-memory-utilization 0.9 --max-num-seqs $CONC (not carried); "+
				"the commit that set image v0.11.2, 2025-12-05 21:49 UTC, until 4e52ed4, 2026-01-02 22:24 UTC")}
	v0130 := launch{name: "inferencex-v0.13.0", async: true, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, mxfp4Backend: "marlin",
		source: gptossSrc("4e52ed4", "gptoss_fp4_h200_slurm.sh",
			"VLLM_MXFP4_USE_MARLIN=1 (runtime.mxfp4_moe_backend); config.yaml: async-scheduling true, no-enable-prefix-caching, "+
				"max-cudagraph-capture-size 2048, max-num-batched-tokens 8192; --gpu-memory-utilization 0.9 --max-num-seqs $CONC (not carried); "+
				"the commit that set image v0.13.0, 2026-01-02 22:24 UTC, until d2c2acb, 2026-02-25 19:02 UTC (b0c4ed21b renamed it gptoss_fp4_h200.sh, same flags)")}
	marlin := func(name, commit, rest string) launch {
		return launch{name: name, gmu: 0.9, maxBatched: 8192, maxCapture: 2048, mxfp4Backend: "marlin",
			source: gptossSrc(commit, "single_node/gptoss_fp4_h200.sh",
				"VLLM_MXFP4_USE_MARLIN=1 (runtime.mxfp4_moe_backend); config.yaml: no-enable-prefix-caching, max-cudagraph-capture-size 2048, "+
					"max-num-batched-tokens 8192, async-scheduling dropped at d2c2acb (the image's default, on from v0.14.0); "+
					"--gpu-memory-utilization 0.9 --max-num-seqs $CONC (not carried); "+rest)}
	}
	add(gptoss, "fp4", "vllm/vllm-openai:v0.11.0", 0, 64, v0110)
	add(gptoss, "fp4", "vllm/vllm-openai:v0.11.2", 0, 64, v0112)
	add(gptoss, "fp4", "vllm/vllm-openai:v0.13.0", 0, 64, v0130)
	add(gptoss, "fp4", "vllm/vllm-openai:v0.15.1", 0, 64, marlin("inferencex-v0.15.1", "d2c2acb",
		"the commit that set image v0.15.1, 2026-02-25 19:02 UTC, until cec542a, 2026-03-27 08:01 UTC"))
	add(gptoss, "fp4", "vllm/vllm-openai:v0.16.0-cu130", 0, 64, marlin("inferencex-v0.16.0", "da55158",
		"image v0.16.0-cu130 from da55158, 2026-03-10 15:49 UTC, until cad1169 set v0.15.1 back at 16:48 UTC; script as d2c2acb's"))
	add(gptoss, "fp4", "vllm/vllm-openai:v0.18.0", 0, 64, marlin("inferencex-v0.18.0", "cec542a",
		"the commit that set image v0.18.0, 2026-03-27 08:01 UTC; same server flags until 29a0b95 (v0.20.2), 2026-05-13"))
	byDates(gptoss, "fp4", "vllm", 0, 64, v0102, h200GptossDays["vllm/vllm-openai:v0.10.2"]...)
	byDates(gptoss, "fp4", "vllm", 0, 64, v0110, h200GptossDays["vllm/vllm-openai:v0.11.0"]...)
	byDates(gptoss, "fp4", "vllm", 0, 64, v0112, h200GptossDays["vllm/vllm-openai:v0.11.2"]...)
	byDates(gptoss, "fp4", "vllm", 0, 64, v0130, h200GptossDays["vllm/vllm-openai:v0.13.0"]...)

	// DeepSeek-R1 fp8, SGLang, config dsr1-fp8-h200-sglang: TP 8 (ep 1),
	// conc 4-64. The server line is the same from e617b3e (2025-09-19)
	// through every image to 2026-05 (9596d23 and later commits change
	// only logging, the model download, the client's wrapper and evals):
	// --mem-fraction-static 0.82 --chunked-prefill-size 32768, no
	// --kv-cache-dtype (the model's), no --scheduler-recv-interval;
	// --max-running-requests and --cuda-graph-max-bs are 512 at 1k/1k and
	// 256 at the other lengths: a deployment's rows hold both lengths, so
	// neither is stated; both are above the config's conc-end 64 (a
	// closed loop of C never holds more than C requests) and not below
	// SGLang's H200 TP 8 default capture size (512, serve.sglangCaptureSize),
	// so the captured decode batches at C <= 64 do not change.
	dsr1L := func(name, image, commit, script, period string) launch {
		return launch{name: name, gmu: 0.82, maxBatched: 32768,
			source: "SemiAnalysisAI/InferenceX @ " + commit + " benchmarks/" + script + " (the server line of dsr1_fp8_h200_slurm.sh from e617b3e, unchanged through its renames), TP 8 " +
				"(config conc 4-64; --mem-fraction-static 0.82 --chunked-prefill-size 32768 --max-prefill-tokens 32768, no --kv-cache-dtype, " +
				"--max-running-requests and --cuda-graph-max-bs 512 (1k/1k) or 256 (not carried), --attention-backend flashinfer --disable-radix-cache --stream-interval 10; " +
				"image " + image + " " + period + ")"}
	}
	v052 := dsr1L("inferencex-v0.5.2rc2", "v0.5.2rc2-cu126", "9596d23", "dsr1_fp8_h200_slurm.sh", "from e617b3e, 2025-09-19, until d8fe8f7, 2025-11-10 20:55 UTC")
	v055 := dsr1L("inferencex-v0.5.5", "v0.5.5-cu129-amd64", "d8fe8f7", "dsr1_fp8_h200_slurm.sh", "from that commit, 2025-11-10 20:55 UTC, until d27433d, 2025-12-31 15:17 UTC")
	add(dsr1, "fp8", "lmsysorg/sglang:v0.5.2rc2-cu126", 0, 64, v052)
	add(dsr1, "fp8", "lmsysorg/sglang:v0.5.5-cu129-amd64", 0, 64, v055)
	add(dsr1, "fp8", "lmsysorg/sglang:v0.5.6-cu129-amd64", 0, 64, dsr1L("inferencex-v0.5.6", "v0.5.6-cu129-amd64", "d27433d", "dsr1_fp8_h200_slurm.sh",
		"from that commit, 2025-12-31 15:17 UTC, until 6e35460, 2026-01-22 19:31 UTC"))
	add(dsr1, "fp8", "lmsysorg/sglang:v0.5.7-cu129-amd64", 0, 64, dsr1L("inferencex-v0.5.7", "v0.5.7-cu129-amd64", "6e35460", "dsr1_fp8_h200.sh",
		"from that commit, 2026-01-22 19:31 UTC, until aedf273, 2026-03-07 23:40 UTC"))
	add(dsr1, "fp8", "lmsysorg/sglang:v0.5.9-cu129-amd64", 0, 64, dsr1L("inferencex-v0.5.9-cu129", "v0.5.9-cu129-amd64", "aedf273", "single_node/dsr1_fp8_h200.sh",
		"from that commit, 2026-03-07 23:40 UTC, until 12ba0ae, 2026-03-25 16:34 UTC"))
	add(dsr1, "fp8", "lmsysorg/sglang:v0.5.9-cu130", 0, 64, dsr1L("inferencex-v0.5.9", "v0.5.9-cu130", "12ba0ae", "single_node/dsr1_fp8_h200.sh",
		"from that commit, 2026-03-25 16:34 UTC, until a15f7c2 (v0.5.11-cu130), 2026-05-13"))
	byDates(dsr1, "fp8", "sglang", 0, 64, v052, h200DSR1Days["lmsysorg/sglang:v0.5.2rc2-cu126"]...)
	byDates(dsr1, "fp8", "sglang", 0, 64, v055, h200DSR1Days["lmsysorg/sglang:v0.5.5-cu129-amd64"]...)

	// MiniMax-M2.5 fp8, vLLM, config minimaxm2.5-fp8-h200-vllm.
	add(mm, "fp8", "vllm/vllm-openai:v0.16.0", 4, 64, launch{name: "inferencex-v0.16.0", gmu: 0.95, ep: epOff,
		epWhy: "minimaxm2.5_fp8_h200.sh @ a363463 passes --tensor-parallel-size=$TP and no --enable-expert-parallel, so vLLM v0.16.0 runs the MoE layers " +
			"tensor-parallel (ParallelConfig.enable_expert_parallel defaults to False; FusedMoEParallelConfig.make @ 002d607); the config then ran TP 4 only (conc 4-64)",
		source: "SemiAnalysisAI/InferenceX @ a363463 benchmarks/single_node/minimaxm2.5_fp8_h200.sh, TP 4 " +
			"(--gpu-memory-utilization 0.95, no --kv-cache-dtype, no --enable-expert-parallel; the commit that added the config with image v0.16.0, 2026-03-01, " +
			"TP 4 conc 4-64 until 5e2c705, 2026-03-13, moved it to TP 8)"})
	mmEPWhy := "minimaxm2.5_fp8_h200.sh from 5e2c705 (2026-03-13) tests `if [ \"$EP_SIZE\" -ge 1 ]` before adding --enable-expert-parallel, and the sweep's " +
		"EP_SIZE is the config's ep, 1 where it names none (utils/matrix_logic/generate_sweep_configs.py, \"Fields.EP.value: 1,  # Default\"), so every run " +
		"passed the flag: vLLM runs the experts over the TP group (FusedMoEParallelConfig.make @ 002d607)"
	add(mm, "fp8", "vllm/vllm-openai:v0.16.0", 8, 128, launch{name: "inferencex-v0.16.0-ep", gmu: 0.95, ep: epTP, epWhy: mmEPWhy,
		source: "SemiAnalysisAI/InferenceX @ 5e2c705 benchmarks/single_node/minimaxm2.5_fp8_h200.sh, TP 8 " +
			"(--gpu-memory-utilization 0.95 --enable-expert-parallel, no --kv-cache-dtype; config TP 8 conc 4-128 from that commit, 2026-03-13, image v0.16.0 until 1d5cae1, 2026-03-27)"})
	add(mm, "fp8", "vllm/vllm-openai:v0.18.0", 0, 128, launch{name: "inferencex-v0.18.0", gmu: 0.95, ep: epTP, epWhy: mmEPWhy,
		source: "SemiAnalysisAI/InferenceX @ 1d5cae1 benchmarks/single_node/minimaxm2.5_fp8_h200.sh, TP 8 " +
			"(--gpu-memory-utilization 0.95 --enable-expert-parallel, no --kv-cache-dtype; 0f78cf4 adds only --no-enable-prefix-caching; " +
			"the commit that set image v0.18.0, 2026-03-27, until a1d1e5c (v0.20.2), 2026-05-12)"})

	// Kimi-K2.5 INT4, vLLM, config kimik2.5-int4-h200-vllm: TP 8, conc 4-64.
	add(kimi, "int4", "vllm/vllm-openai:v0.16.0", 8, 64, launch{name: "inferencex-v0.16.0", gmu: 0.95, ep: epOff,
		epWhy: kimiNoEP("749096c", "kimik2.5_int4_h200.sh", "v0.16.0"),
		source: "SemiAnalysisAI/InferenceX @ 749096c benchmarks/single_node/kimik2.5_int4_h200.sh, TP 8 " +
			"(config conc 4-64; --gpu-memory-utilization 0.95 --max-num-seqs $CONC (not carried), fuse_allreduce_rms (not modelled), no --kv-cache-dtype; " +
			"79a42e2 adds only --no-enable-prefix-caching; image v0.16.0 from that commit, 2026-03-02, until ca23b89 (v0.20.2), 2026-05-13)"})

	// Qwen3.5 fp8, SGLang, config qwen3.5-fp8-h200-sglang: TP 8 EP 8,
	// conc 4-64, image v0.5.9-cu129-amd64 from f65d6b4 (2026-03-04) until
	// 3542221 (2026-05-17). qwen3.5-fp8-h200-sglang-mtp ran the same image
	// from 51e31df (2026-04-06) until 6cb8291 (2026-04-14): rows measured
	// then may be either config's and take no entry (the MTP command line
	// is not carried here).
	qwenL := launch{name: "inferencex-v0.5.9-cu129", kvCache: "fp8", gmu: 0.8, maxSeqs: 128, maxBatched: 16384, graphMax: graphAtConc,
		source: "SemiAnalysisAI/InferenceX @ f65d6b4 benchmarks/single_node/qwen3.5_fp8_h200.sh, TP 8 EP 8 " +
			"(config conc 4-64; --expert-parallel-size $EP_SIZE --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.8 --chunked-prefill-size 16384 " +
			"--max-running-requests 128 --cuda-graph-max-bs $CONC, no --scheduler-recv-interval; --attention-backend flashinfer --mamba-ssm-dtype bfloat16 " +
			"--enable-flashinfer-allreduce-fusion --disable-radix-cache (not carried); the commit that added the config with image v0.5.9-cu129-amd64; same flags until 3542221, 2026-05-17)"}
	for _, d := range []string{"2026-03", "2026-04-01", "2026-04-02", "2026-04-03", "2026-04-04", "2026-04-05",
		"2026-04-15", "2026-04-16", "2026-04-17", "2026-04-18", "2026-04-19", "2026-04-2", "2026-04-3", "2026-05"} {
		out = append(out, inferenceXLaunch{model: qwen, precision: "fp8", system: h200, image: "lmsysorg/sglang:v0.5.9-cu129-amd64", tp: 8, maxConc: 64, measured: d, launch: qwenL})
	}

	// GLM-5 fp8, SGLang, config glm5-fp8-h200-sglang: TP 8, conc 4-64.
	add(glm, "fp8", "lmsysorg/sglang:glm5-hopper", 8, 64, launch{name: "inferencex-glm5-hopper", gmu: 0.85,
		source: "SemiAnalysisAI/InferenceX @ ebb48d4 benchmarks/single_node/glm5_fp8_h200.sh, TP 8 " +
			"(config conc 4-64; --mem-fraction-static 0.85 and nothing else the scenario states: no --kv-cache-dtype, --chunked-prefill-size, " +
			"--max-running-requests, --cuda-graph-max-bs or --scheduler-recv-interval; the commit that added the config with image glm5-hopper, " +
			"2026-03-19, same flags until 171d0c4 (v0.5.12-cu130), 2026-05-17)"})

	// Llama-3.3-70B FP8 (rows of model Llama-3.1-70B, as the B200 and H100
	// entries), vLLM: 70b-tmpl.yml ran nvidia/Llama-3.3-70B-Instruct-FP8
	// on H200 with image v0.10.2 until 2582bce (2025-10-29).
	byDates(llama, "fp8", "vllm", 0, 0, launch{name: "inferencex-v0.10.2", async: true, kvCache: "fp8", gmu: 0.9, maxBatched: 8192, cudagraphMode: "PIECEWISE",
		source: "SemiAnalysisAI/InferenceX @ 2582bce^ benchmarks/70b_fp8_h200_slurm.sh " +
			"(config.yaml: kv-cache-dtype fp8, async-scheduling true, no-enable-prefix-caching, max-num-batched-tokens 8192; --gpu-memory-utilization 0.9 " +
			"--max-num-seqs $CONC (not carried); no --compilation-config: v0.10.2's default cudagraph_mode PIECEWISE; image v0.10.2 (.github/workflows/70b-tmpl.yml))"},
		"2025-10-29")
	return append(out, dated...)
}

// h200GptossDays and h200DSR1Days are the measured-date prefixes (UTC
// days) on which each image was the H200 config's all day, for rows that
// name no image; a day on which the image changed is left out (the
// scheduled sweep at 00:00 UTC ran the old one, a run triggered by the
// change the new one, and a row records only the day).
var (
	h200GptossDays = map[string][]string{
		// 77f238d12 (2025-09-15) to 7103d66 (2025-11-04 15:27 UTC)
		"vllm/vllm-openai:v0.10.2": {"2025-10", "2025-11-01", "2025-11-02", "2025-11-03"},
		// 7103d66 to 25506e8 (2025-12-05 21:49 UTC)
		"vllm/vllm-openai:v0.11.0": {"2025-11-05", "2025-11-06", "2025-11-07", "2025-11-08", "2025-11-09", "2025-11-1", "2025-11-2",
			"2025-11-30", "2025-12-01", "2025-12-02", "2025-12-03", "2025-12-04"},
		// 25506e8 to 4e52ed4 (2026-01-02 22:24 UTC)
		"vllm/vllm-openai:v0.11.2": {"2025-12-06", "2025-12-07", "2025-12-08", "2025-12-09", "2025-12-1", "2025-12-2", "2025-12-3", "2026-01-01"},
		// 4e52ed4 to d2c2acb (2026-02-25 19:02 UTC)
		"vllm/vllm-openai:v0.13.0": {"2026-01-03", "2026-01-04", "2026-01-05", "2026-01-06", "2026-01-07", "2026-01-08", "2026-01-09",
			"2026-01-1", "2026-01-2", "2026-01-3", "2026-02-0", "2026-02-1", "2026-02-20", "2026-02-21", "2026-02-22", "2026-02-23", "2026-02-24"},
	}
	h200DSR1Days = map[string][]string{
		// e617b3e (2025-09-19) to d8fe8f7 (2025-11-10 20:55 UTC)
		"lmsysorg/sglang:v0.5.2rc2-cu126": {"2025-10", "2025-11-0"},
		// d8fe8f7 to d27433d (2025-12-31 15:17 UTC)
		"lmsysorg/sglang:v0.5.5-cu129-amd64": {"2025-11-11", "2025-11-12", "2025-11-13", "2025-11-14", "2025-11-15", "2025-11-16", "2025-11-17", "2025-11-18", "2025-11-19", "2025-11-2", "2025-11-30", "2025-12-0", "2025-12-1", "2025-12-2", "2025-12-30"},
	}
)

func init() {
	inferenceXLaunches = append(inferenceXLaunches, inferenceXH200Launches()...)
	// The same days give the rows' engine version (datedImages).
	for _, image := range slices.Sorted(maps.Keys(h200GptossDays)) {
		days := h200GptossDays[image]
		datedImages = append(datedImages, datedImage{"vllm", "openai/gpt-oss-120b", "h200_sxm", "|fp4|", days, image,
			"SemiAnalysisAI/InferenceX .github/workflows/gptoss-tmpl.yml (bmk-h200) and .github/configs/nvidia-master.yaml (gptoss-fp4-h200-vllm): image " +
				image + " all day on those days (first-parent history: 77f238d12, 7103d66, 25506e8, 4e52ed4, d2c2acb)"})
	}
	for _, image := range slices.Sorted(maps.Keys(h200DSR1Days)) {
		days := h200DSR1Days[image]
		datedImages = append(datedImages, datedImage{"sglang", "deepseek-ai/DeepSeek-R1", "h200_sxm", "|fp8|", days, image,
			"SemiAnalysisAI/InferenceX .github/workflows/dsr1-tmpl.yml (bmk-h200-fp8) and .github/configs/nvidia-master.yaml (dsr1-fp8-h200-sglang): image " +
				image + " all day on those days (first-parent history: e617b3e, d8fe8f7, d27433d)"})
	}
	datedImages = append(datedImages, datedImage{"vllm", "meta-llama/Llama-3.1-70B", "h200_sxm", "|fp8|", []string{"2025-10-29"}, "vllm/vllm-openai:v0.10.2",
		"SemiAnalysisAI/InferenceX @ 9596d23 .github/workflows/70b-tmpl.yml (bmk-h200-fp8: image vllm/vllm-openai:v0.10.2)"})
}
