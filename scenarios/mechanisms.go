package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// A mechanism is one serving behaviour moecast models that can be turned
// on or off to measure its effect on accuracy (`moecast validate corpus
// --with NAME` / `--without NAME`): set(s, false) sets the scenario as if
// the mechanism were not modelled, set(s, true) models it.
type mechanism struct {
	doc string
	on  bool // on by default
	set func(s *Scenario, on bool)
}

var mechanisms = map[string]mechanism{
	"speculative": {"the scenario's [speculative] decoding: verify steps of K+1 tokens per sequence, the draft's passes and weights, tokens per step from speculative.acceptance (corpus: InferenceX's MTP configs, validate/corpus/gen launch.go) (off: plain decoding, one token per step and no draft, the rest of the command line kept)", true,
		func(s *Scenario, on bool) {
			if !on {
				if s.Config.Spec.Active() {
					s.specOff = s.Config.Spec
				}
				s.Config.Spec = sim.Spec{Method: sim.SpecNone}
			} else if s.specOff.Active() {
				s.Config.Spec, s.specOff = s.specOff, sim.Spec{}
			}
			s.Config.GPUMemoryUtilization = s.instanceFraction() // SGLang's default depends on the drafter
		}},
	"sglang-spec-v1": {"SGLang's V1 EAGLE/MTP worker, its default up to v0.5.10 unless the server's environment sets SGLANG_ENABLE_SPEC_V2 (runtime.engine_version; serve.SpecSyncDefault): overlap scheduling off, and each step runs draft, target verify and draft extend (target extend and draft extend for a prefill) as separate forwards with host syncs between them, each paying the engine's measured host work per step (serve.SpecSyncForwards) (off: the overlapped V2 worker, the host work hidden behind the GPU)", true,
		func(s *Scenario, on bool) { s.Serving.NoSpecSync = !on }},
	"client-lengths": {"the benchmark client's spread of request lengths: each request's input and output lengths drawn on the range its client draws them from (a result's recorded range ratio; aiconfigurator rows measured by InferenceX's harness: [int(0.8 L), L], serve.RangeBelow) (off: every request at the nominal lengths)", true,
		func(s *Scenario, on bool) { s.Serving.FixedLengths = !on }},
	"client-tokenizer": {"the benchmark client and the server tokenising the prompts apart: InferenceX's client on an SGLang image with transformers 5 (v0.5.10 on) and a DeepSeek-R1/V3 tokenizer decoded its random prompts with transformers 5's rebuilt LlamaTokenizerFast, which the server re-tokenises into 5.03x as many tokens (InferenceX PR #937; validate's aiconfigurator reader marks the rows) (off: the server sees the lengths the client recorded)", true,
		func(s *Scenario, on bool) { s.Serving.ClientTokens = !on }},
	"aic-generator-budget": {"the deployment's vLLM token budget per step where validate knows it from who deployed the row: aiconfigurator's gap-analysis rows ran deployments its config generator wrote, --max-num-batched-tokens = batch_size + isl + 1500 (vllm.rule's agg max_num_tokens, ai-dynamo/aiconfigurator @ 095f58a; validate's aicGeneratorBudget), unless the scenario sets runtime.max_num_batched_tokens (off: the engine's default budget)", true,
		func(s *Scenario, on bool) { s.Serving.NoDeployBudget = !on }},
	"vllm-own-mla-prefill": {"a vLLM MLA prefill outside sm_90/sm_100/sm_103 priced by vLLM's own tables or the FlashAttention proxy, never another engine's MLA prefill table: vLLM runs FlashAttention there, its default MLA prefill backend on all hardware (vllm/v1/attention/backends/mla/prefill/__init__.py); SGLang's RTX PRO 6000 MLA prefill rows reach 6% of the card's bf16 peak (kernels.vllmOwnMLAPrefill) (off: another engine's table answers where none of vLLM's covers the shape)", true,
		func(s *Scenario, on bool) { s.Config.AnyEngineMLAPrefill = !on }},
	"vllm-gemm-compute": {"vLLM's own bf16 GEMMs at their measured fraction of the tensor-core peak when compute-bound, used where the step's engine is vLLM: on sm_90 (H100, H200) 0.77, the median of the perf database's vLLM bf16 GEMM rows at M, N, K >= 4096 (kernels.EffComputeGEMMVLLMSM90; SGLang's rows reach the architecture's 0.70); on sm_120 (RTX PRO 6000) 0.77, the median of vLLM 0.19.0's rows at M 1024-2048, N, K >= 4096 (kernels.EffComputeGEMMVLLMSM120) (off: 0.70, kernels.EffComputeGEMM)", true,
		func(s *Scenario, on bool) {
			e := s.efficiency()
			e.ComputeGEMMVLLM = 0
			if on {
				e.ComputeGEMMVLLM = kernels.EfficiencyFor(s.Config.GPU).ComputeGEMMVLLM
			}
			s.Config.Efficiency = e
		}},
	"front-end": {"the API server: requests tokenised one at a time (serve.TokenizeTime per prompt token, 3.6 us measured on a server core) before the engine sees them; in a disaggregated deployment Dynamo's frontend tokenises each request on its own, in parallel, before routing it to a prefill instance (serve disaggFrontEnd); runtime.tokenize_us_per_token (off: each request reaches the engine, or the prefill pool's router, at its send)", true,
		func(s *Scenario, on bool) {
			t := 0.0
			if on {
				t = float64(serve.TokenizeTime)
			}
			s.Serving.TokenizeTime = &t
		}},
	"sglang-admission": {"SGLang's new-token-ratio admission (runtime.schedule_conservativeness; off: admission by the chunk's KV alone)", true,
		func(s *Scenario, on bool) {
			c := 0.0
			if on {
				c = 1
			}
			s.Serving.ScheduleConservativeness = &c
		}},
	"host-overhead": {"the engine's host work per step measured on profiler traces (serve.EngineHost: vLLM 1.52 ms, SGLang 0.70 ms), added to a step the engine does not overlap (vLLM before v0.14.0, runtime.engine_version; prefill steps under vLLM's async scheduling) and hidden behind the GPU otherwise (off: no host work)", true,
		func(s *Scenario, on bool) { s.Serving.NoHost = !on }},
	"sglang-recv-interval": {"SGLang's --scheduler-recv-interval N (runtime.scheduler_recv_interval, imported from engine arguments and InferenceX's launch scripts): the scheduler polls its input queue only when a counter reaches N, +1 per decode or idle iteration and +1000 after any other batch (SchedulerRecvSkipper), so a request that arrives while others decode waits up to N-1 decode steps (off: received every iteration, SGLang's default)", true,
		func(s *Scenario, on bool) { s.Serving.NoRecvInterval = !on }},
	"prebuilt-decode": {"SGLang's disaggregated decode server admits a transferred request without a forward (its prebuilt batch) and the request joins the decode batch (off: it computes the last prompt token as a prefill step, as vLLM's decode instance does)", true,
		func(s *Scenario, on bool) { s.Serving.DecodeRecompute = !on }},
	"full-isl-admission": {"vLLM's scheduler_reserve_full_isl (default from v0.19.0, runtime.engine_version): a waiting or preempted request is admitted only when the free KV blocks hold its whole sequence so far, else admission stops for the step without preempting (serve.ReserveFullISLDefault; off: admitted when its first chunk fits)", true,
		func(s *Scenario, on bool) { s.Serving.NoFullISL = !on }},
	"preempt-recovery": {"vLLM's prefix cache over a request's own tokens: a preempted request's blocks stay hashed in the free queue (tail first to be evicted) and its re-admission recomputes only those evicted (serve.Config.RecoverPreempted; with prefix caching on; off: the whole sequence is recomputed)", true,
		func(s *Scenario, on bool) { s.Serving.NoRecoverPreempted = !on }},
	"vllm-num-gpu-blocks": {"vLLM's --num-gpu-blocks-override (runtime.num_gpu_blocks): the KV cache holds that many blocks per GPU instead of what the memory profile leaves; the LLMServingSim RTX 4090 replay takes the count its run recorded (meta.json kv_cache.num_gpu_blocks) (off: the profiled KV cache)", true,
		func(s *Scenario, on bool) { s.Serving.NoGPUBlocks = !on }},
	"cuda-memory": {"the memory the engine takes its share of is the total cudaMemGetInfo reports (torch.cuda.mem_get_info; vLLM's requested memory is that total x gpu_memory_utilization, vllm/v1/worker/gpu_worker.py determine_available_memory), below nvidia-smi's memory.total by what the driver keeps: h200-sxm 150,109,880,320 B against 143,771 MiB (150.75 GB), measured on an H200 (bench/RESULTS-cudamem.md); from public deviceQuery, PyTorch out-of-memory ('GPU 0 has a total capacity of X GiB') and engine log figures, two or more sources each: h100-sxm 79.18 GiB (nvidia-smi 81,559 MiB), b200-sxm 178.35 GiB (183,359 MiB), b300-sxm 267.69 GiB (275,040 MiB), gb200 184.31 GiB (189,471 MiB), gb300 276.50 GiB (284,208 MiB) (kernels.GPU.CUDAMemory; bench/RESULTS-gpumem.md); a100-sxm, rtx-pro-6000-server and custom GPUs keep nvidia-smi's figure (off: nvidia-smi's memory.total everywhere)", true,
		func(s *Scenario, on bool) {
			g := &s.Config.GPU
			switch {
			case !on && s.cudaMemory == nil:
				m := g.CUDAMemory
				s.cudaMemory, g.CUDAMemory = &m, 0
			case on && s.cudaMemory != nil:
				g.CUDAMemory, s.cudaMemory = *s.cudaMemory, nil
			}
		}},
	"custom-gpu-gemm": {"a custom GPU's own measured bf16 GEMM fractions ([hardware.custom_gpu] gemm_mem_efficiency above 16 rows, gemm_compute_efficiency when compute-bound; the RTX 4090 replay gives vLLM 0.19.0's, from LLMServingSim's layer profile of that card) (off: the architecture's)", true,
		func(s *Scenario, on bool) {
			g := &s.Config.GPU
			switch {
			case !on && s.customGEMM == nil:
				s.customGEMM = &[2]float64{g.GEMMMem, g.GEMMCompute}
				g.GEMMMem, g.GEMMCompute = 0, 0
			case on && s.customGEMM != nil:
				g.GEMMMem, g.GEMMCompute = s.customGEMM[0], s.customGEMM[1]
				s.customGEMM = nil
			}
			s.setGEMMEfficiency()
		}},
	"fa2-mixed-gqa": {"vLLM's FlashAttention-2 varlen call over a step with a prefill chunk: the decodes beside the chunk read their KV once per query head, the kernel packing a KV head's query heads only when every query is one token (seqlenq_ngroups_swapped, flash_api.cpp mha_varlen_fwd), at the GPU's measured re-read rate (kernels.GQADecodeMixedFA2; kernels.GPU.FA2MixedRead: rtx-pro-6000-server 2.96 TB/s from LLMServingSim's attention tables of vLLM 0.19.0, a custom GPU's fa2_mixed_read_bandwidth) (off: the decodes priced as in a decode-only step)", true,
		func(s *Scenario, on bool) {
			g := &s.Config.GPU
			switch {
			case !on && s.fa2MixedRead == nil:
				r := g.FA2MixedRead
				s.fa2MixedRead, g.FA2MixedRead = &r, 0
			case on && s.fa2MixedRead != nil:
				g.FA2MixedRead, s.fa2MixedRead = *s.fa2MixedRead, nil
			}
		}},
	"gemm-batch-efficiency": {"the architecture's measured weight-streaming efficiency of bf16 GEMMs above 16 rows (kernels.EffMemGEMMBatchSM120 = 0.71 on sm_120, from vLLM 0.19.0's GEMM rows in aiconfigurator's perf database; a custom GPU's own gemm_mem_efficiency; off: EffMem 0.80 at every M)", true,
		func(s *Scenario, on bool) {
			s.noGEMMBatch = !on
			s.setGEMMEfficiency()
		}},
	"mxfp4-mxfp8": {"MXFP4 routed experts (gpt-oss) on sm_100/sm_103 take MXFP8 activations where the engine runs FlashInfer's TRT-LLM-gen MXFP4 x MXFP8 MoE: SGLang by default (flashinfer_mxfp4_moe_precision), vLLM with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 (runtime.mxfp4_activation = \"mxfp8\", from InferenceX's launch scripts), priced from the perf database's w4a8_mxfp4_mxfp8 rows (off: bf16 activations, the w4a16_mxfp4 rows)", true,
		func(s *Scenario, on bool) { s.Serving.NoMXFP8 = !on; s.setMXFP4Activation() }},
	"mxfp4-marlin": {"MXFP4 routed experts (gpt-oss) run by vLLM's Marlin MoE where the server's environment sets VLLM_MXFP4_USE_MARLIN=1 (runtime.mxfp4_moe_backend = \"marlin\", from InferenceX's gpt-oss H100/H200 launch scripts since 4e52ed4; select_mxfp4_moe_backend, vllm/model_executor/layers/fused_moe/oracle/mxfp4.py @ 001eda3): the layer's hidden padded to 256 and expert width to 128 as the Marlin weights are, priced on sm_90 by a fit to the perf database's H100 Marlin MXFP4 MoE rows (kernels/moe_marlin.go: weights at the DRAM peak + FLOPs at a width-dependent fraction of the bf16 peak + 43.8 us fixed) and elsewhere by the W4A16 Marlin roofline, instead of the perf database's OAI Triton MXFP4 rows (off: the engine's default MXFP4 kernel and its tables)", true,
		func(s *Scenario, on bool) { s.Serving.NoMXFP4Marlin = !on; s.setMXFP4Activation() }},
	"qk-norm-allreduce": {"MiniMax-M2's q/k RMSNorm over the layer's whole q and k width (qk_norm_type per_layer): with attention TP > 1 vLLM all-reduces the norm's variances, two fp32 per token, between a variance kernel and the normalisation (MiniMaxText01RMSNormTP.forward_qk, vllm/model_executor/layers/mamba/linear_attn.py @ d29a69a; off: one per-rank norm kernel, no collective)", true,
		func(s *Scenario, on bool) { s.Serving.NoQKNormTP = !on; s.setQKNormTP() }},
	"dp-ranks": {"DP ranks as engine cores of their own (vLLM): each schedules its own requests with its own budget and KV, the front end's balancer picks the rank, the step waits for the slowest rank (off: the ranks pooled under one scheduler)", true,
		func(s *Scenario, on bool) { s.Serving.PooledDP = !on }},
	"sglang-dp-ranks": {"SGLang's DP-attention ranks (--enable-dp-attention) as schedulers of their own (sgl-project/sglang data_parallel_controller.py @ 000a3db, scheduler_dp_attn_mixin.py @ 01ac007): each rank has its own KV pool, waiting queue, running batch, new-token ratio and max_running_requests // dp_size, the DataParallelController deals requests to the ranks round robin (load_balance_method auto/round_robin), and every step the ranks all-gather their batches, idle ranks run an IDLE batch and the step lasts as long as the slowest rank's (serve dpranks.go) (off: the ranks' KV pooled under one scheduler and one waiting queue, each rank with its own prefill budget)", true,
		func(s *Scenario, on bool) { s.Serving.PooledSGLangDP = !on }},
	"memory-profile": {"the reserve outside the KV cache as vLLM's profile run measures it: the activation peak of a forward at max_num_batched_tokens and of the sampler at max_num_seqs rows, from the model's dims, plus NCCL's buffers (sim.MemoryProfile; off: aiconfigurator's fixed 3.5 GiB other_mem + nccl_mem)", true,
		func(s *Scenario, on bool) { s.Serving.FixedReserve = !on; s.setProfile() }},
	"profile-sampler-sort": {"vLLM's dummy sampler run in its profile run through the PyTorch-native top-k/top-p path (top_p 0.9, top_k vocab - 1), between PR #26859 (FlashInfer's sampler off by default, 2025-10-14) and PR #33538 (Triton top-k/top-p kernels, 2026-02-17), read as v0.12 to v0.16 (runtime.engine_version; serve.SamplerSortDefault): the sort peaks at 9.5 fp32 copies of the logits of max_num_seqs rows over the vocabulary, torch.sort's 5 of temporary storage among them, 12.5 with speculative decoding, whose rejection sampler runs after it (apply_top_k_top_p, vllm/v1/sample/ops/topk_topp_sampler.py; rejection_sampler.py; gpu_model_runner.py _dummy_sampler_run @ f120bd42d; peaks measured on an H200 with torch 2.11, bench/glm5mem/sampler_peak.py; sim.MemoryProfile.SamplerSort) (off: fp32 logits and probabilities, 2 copies)", true,
		func(s *Scenario, on bool) { s.Serving.NoSamplerSort = !on; s.setProfile() }},
	"profile-sampler-triton": {"vLLM's dummy sampler run in its profile run through the Triton top-k/top-p kernel (PR #33538, merged 2026-02-17, until PR #40376 turned FlashInfer's sampler back on, 2026-04-29), read as v0.17 to v0.19 (runtime.engine_version; serve.SamplerTritonDefault): the bf16 logits of max_num_seqs rows, their fp32 copy masked in place, the kernel's kept buffer of min(next_power_of_2(min(SMs, rows)), SMs) fp32 vocabulary rows, and random_sample's probabilities and exponential draws: 3.5 fp32 copies + the buffer; 6.5 + the buffer with speculative decoding, whose rejection sampler runs after it (apply_top_k_top_p_triton, vllm/v1/sample/ops/topk_topp_triton.py; sampler.py; rejection_sampler.py; gpu_model_runner.py _dummy_sampler_run @ ba2f0acc2; sim.MemoryProfile.SamplerTriton) (off: fp32 logits and probabilities, 2 copies)", true,
		func(s *Scenario, on bool) { s.Serving.NoSamplerTriton = !on; s.setProfile() }},
	"flashinfer-cutlass-moe-workspace": {"vLLM's fp8 MoE oracle runs block-fp8 routed experts on Hopper with expert parallelism (and no data-parallel token exchange, whose gathered rows are not read) through FlashInfer's CUTLASS fused MoE ('On Hopper for Block Fp8, prefer Triton for TP and FI CUTLASS for EP', vllm/model_executor/layers/fused_moe/oracle/fp8.py, PR #34260, read as v0.17 on; serve.FICutlassMoEDefault), whose per-call workspace replaces the Triton caches in the profile run's forward peak: over n = tokens x top_k rows, max(n x hidden, n x inter) bf16 inputs, 2 x n x inter bf16 fc1 outputs, the block-scale GEMM's fp8 copy of its A with fp32 scales per 128, and index maps (CutlassMoeFCRunner::getWorkspaceDeviceBufferSizes, flashinfer v0.6.6 csrc/fused_moe/cutlass_backend/cutlass_fused_moe_kernels.cuh), plus vLLM's M x K workspace13 (flashinfer_cutlass_moe.py; sim.MemoryProfile.FICutlassMoE) (off: the Triton caches)", true,
		func(s *Scenario, on bool) { s.Serving.NoFICutlassMoE = !on; s.setProfile() }},
	"allreduce-fusion-workspace": {"vLLM's all-reduce + RMSNorm fusion pass (on by default at -O2 from PR #34299, 2026-02-11, read as v0.16 on (the 0.16.0.dev nightlies after it); TP 2, 4 or 8 on sm_90/sm_100/sm_103, no DP, CUDA graphs on, not DeepSeek-V3 NVFP4; serve.ARFusionDefault): FlashInfer's IPC workspace for min(FI_ALLREDUCE_FUSION_MAX_SIZE_MB / (hidden x 2), max_num_batched_tokens) tokens, a buffer and three Lamport buffers of TP x tokens x hidden bf16 values, allocated outside torch when the model compiles in the profile run and so counted as non-torch memory (vllm/compilation/passes/fusion/allreduce_rms_fusion.py, vllm/config/vllm.py @ ba2f0acc2; trtllm_create_ipc_workspace_for_all_reduce_fusion, flashinfer/comm/trtllm_ar.py; sim.MemoryProfile.ARFusion) (off: no workspace)", true,
		func(s *Scenario, on bool) { s.Serving.NoARFusion = !on; s.setProfile() }},
	"indexer-workspace": {"vLLM's shared workspace buffer on DSA models (GLM-5, DeepSeek-V3.2) from v0.14 (PR #27532; serve.IndexerWorkspaceDefault): the sparse indexer reserves its prefill gather of 40 x max_model_len keys of 132 B in the profile run and keeps it, and the fused-MoE caches are taken from the same buffer (get_max_prefill_buffer_size, vllm/v1/attention/backends/mla/indexer.py; sparse_attn_indexer.py; fused_moe/modular_kernel.py @ f120bd42d; sim.MemoryProfile.IndexerWorkspace) (off: no workspace, the MoE caches a transient of the forward)", true,
		func(s *Scenario, on bool) { s.Serving.NoIndexerWorkspace = !on; s.setProfile() }},
	"sglang-kv-pool": {"SGLang's KV pool as profile_max_num_token sizes it: GPU memory x mem_fraction_static - weights, activations, CUDA graphs and NCCL buffers outside the fraction (sim.MemoryProfile.WeightsAndKV; off: aiconfigurator's fixed reserve subtracted from the fraction too)", true,
		func(s *Scenario, on bool) { s.Serving.SGLangReserve = !on; s.setProfile() }},
	"sglang-mem-fraction": {"SGLang's default mem_fraction_static as its server derives it from GPU memory, TP, DP attention, chunked_prefill_size and cuda_graph_max_bs, by version (serve.DefaultMemFraction), where runtime.gpu_memory_utilization is not given (off: vLLM's 0.90)", true,
		func(s *Scenario, on bool) {
			s.Serving.VLLMFraction = !on
			s.Config.GPUMemoryUtilization = s.instanceFraction()
		}},
	"sglang-max-running": {"SGLang's default max_running_requests, derived from its KV pool (min(tokens / 2, clamp(tokens / context_len x 512, 2048, 4096)) per DP rank; serve.DefaultMaxRunning), where runtime.max_num_seqs is not given (off: no limit)", true,
		func(s *Scenario, on bool) { s.Serving.NoMaxRunning = !on }},
	"capture-size": {"the engine's CUDA-graph capture size: decode steps above it priced eagerly (off: every decode step replays a graph)", true,
		func(s *Scenario, on bool) {
			s.Config.CaptureSize = 0
			s.Serving.NoCaptureSize = !on
			if on {
				c := s.Config.CaptureBatches
				s.setCaptureSize()
				s.Config.CaptureBatches = c
			}
		}},
	"schedule-ahead": {"the engine builds each step while the previous one runs (vLLM's async scheduling: step_with_batch_queue schedules batch N+1 before it blocks on batch N, vllm/v1/engine/core.py @ 00080ee; SGLang's overlap loop, event_loop_overlap), so a request that reaches a busy engine joins the step after the next one; an idle engine schedules it at once (serve.Config.ScheduleAhead; only where the scenario's async scheduling or overlap is on; not in disaggregated pools) (off: it joins the next step)", true,
		func(s *Scenario, on bool) { s.Serving.NoScheduleAhead = !on }},
	"engine-launch": {"an eagerly launched kernel costs the engine's own host time per kernel, measured on the C++ side of its profiler trace (kernels.EngineHostLaunch: vLLM 44.3 us on TraceLens's B200 eager trace, SGLang 17.3 us on its extend trace; bench/RESULTS-ttftbw.md) (off: PyTorch's eager tiny-op figure, kernels.HostLaunchLatency 10 us)", true,
		func(s *Scenario, on bool) { s.Config.EngineLaunch = on }},
	"sparse-mla": {"DeepSeek Sparse Attention layers (GLM-5, DeepSeek-V3.2) as vLLM's FLASHMLA_SPARSE backend runs them on a bf16 KV cache (vllm/v1/attention/backends/mla/flashmla_sparse.py): every token, decode and prefill, absorbed (W_UK, W_UV) and attending its index_topk selected latent rows in MQA form (576/512) through FlashMLA's sparse kernel, q heads padded to 64 on Hopper and 128 on Blackwell, one CTA per query and 64-head tile over all index_topk entries (deepseek-ai/FlashMLA csrc/sm90/prefill/sparse/fwd.cu), at 0.619 of the bf16 peak per SM on sm_90, the median of the perf database's H200 kernel rows of flash_mla_sparse_fwd (FlashMLA's README: 640 of 989.4 TFLOPS on H800), 1450 of 2250 on Blackwell (kernels.SparseMLA) (off: decodes through the MLA decode kernel at their own heads, prefill chunks un-absorbed: kv_b_proj up-projection and MHA over the selected keys)", true,
		func(s *Scenario, on bool) { s.Config.SparseMLA = on && s.sparseMLADefault() }},
	"indexer-topk": {"DeepSeek Sparse Attention layers' (GLM-5, DeepSeek-V3.2) decode top-k as a kernel of its own after the indexer's scores: each decode row (decodes x next_n: vLLM's sparse_attn_indexer calls top_k_per_row_decode over them, vllm/model_executor/layers/sparse_attn_indexer.py) selects its index_topk keys from its sequence's context, one thread block a row, costing nothing where the context fits in index_topk and otherwise 11.15 us + 0.271 ns a key per wave of 1.36 rows per SM, fitted on the perf database's H200 kernel rows of the top-k (sglang 0.5.14 glm5_topk_module_perf, fast_topk_transform_fused; kernels.IndexerTopK), which its B200/B300 rows match (median within 5%), so on sm_90, sm_100 and sm_103 (no rows elsewhere) (off: the decode indexer priced by its scores' key bytes alone)", true,
		func(s *Scenario, on bool) { s.Config.IndexerTopK = on }},
	"spec-prep-bubble": {"vLLM's async scheduling with EAGLE/MTP drafting before v0.19.0 (runtime.engine_version; serve.SpecPrepBubbleDefault): the host prepares a decode step only once the previous step's target forward has finished, behind its draft passes alone (vllm-project/vllm PR #24799 \"we're only overlapping with the drafting here\", PR #29957; the zero-bubble change, PR #32951, first in v0.19.0), so each decode step pays its host work less the draft passes' share of its GPU time (serve.Spec.PrepBubble, DraftShare; not in disaggregated runs) (off: the host work hidden behind the whole step, as from v0.19.0)", true,
		func(s *Scenario, on bool) { s.Serving.NoSpecPrepBubble = !on }},
	"sglang-sparse-prefill": {"SGLang's NSA backend for GLM-5 (GlmMoeDsaForCausalLM) on Blackwell: every prefill chunk absorbed (W_UK, W_UV) and attending its index_topk selected latent rows through FlashMLA's sparse kernel, q heads padded to 128 (nsa_backend.py _forward_flashmla_sparse), where the prefill backend is flashmla_sparse or flashmla_auto (SGLang's defaults: flashmla_auto on its fp8_e4m3 DSA cache, server_args.py _set_default_nsa_backends; runtime.nsa_prefill_backend) and the dense MHA_ONE_SHOT path is off (GLM-5 on Blackwell: sgl-project/sglang PR #18521, PR #20062); decodes keep the MLA decode kernel (kernels.SparseMLA; off: prefill chunks un-absorbed, kv_b_proj up-projection and MHA over the selected keys)", true,
		func(s *Scenario, on bool) { s.Serving.NoSparsePrefill = !on; s.setSparsePrefill() }},
	"launch-ahead": {"the host issues an eager step's kernels ahead of the GPU (kernel launches are asynchronous): the step's launch time is the host time of all its eagerly launched kernels beyond the step's GPU time, max(0, host - GPU) (sim.Config.LaunchAhead; off: each op's own excess, max(0, kernels x t_launch - op time), summed over the ops)", true,
		func(s *Scenario, on bool) { s.Config.LaunchAhead = on }},
	"eager-prefill": {"SGLang runs prefill and mixed steps without CUDA graphs, each kernel launched from the host (serve.EagerPrefill; off: vLLM's piecewise graphs)", true,
		func(s *Scenario, on bool) { s.Serving.NoEagerPrefill = !on; s.setGraphMode() }},
	"cudagraph-mode": {"vLLM's runtime.cudagraph_mode as its CUDA-graph dispatcher runs it (vllm docs/design/cuda_graphs.md): FULL_DECODE_ONLY runs every step with a prefill chunk without graphs, each kernel launched from the host; PIECEWISE (the default before v0.11.0) launches decode steps' attention eagerly between graph pieces; NONE captures nothing, as --enforce-eager (off: PIECEWISE and FULL_DECODE_ONLY priced as FULL_AND_PIECEWISE, the default since v0.11.0; NONE stays eager)", true,
		func(s *Scenario, on bool) { s.Serving.NoCUDAGraphMode = !on; s.setGraphMode() }},
	"gdn-table": {"Gated DeltaNet layers' (Qwen3.5, Qwen3-Next) state update priced from the perf database's gdn_perf rows where they cover the shape, the scenario's engine's own first: the chunked scan chunk_gated_delta_rule of a prefill by sequences and tokens per sequence, the fused recurrent decode (gating, l2norm and fp32 state update in one kernel) by sequences, at the layer's key and value heads per GPU (collector/sglang/collect_gdn.py, ai-dynamo/aiconfigurator @ 095f58a; calib/perfdb_gdn.go, kernels.GDNTable) (off: the roofline of the chunked algorithm and of the recurrence, kernels.RecurrentPrefill / RecurrentDecode)", true,
		func(s *Scenario, on bool) { s.Config.GDNRoofline = !on }},
	"mla-collector": {"the perf database's legacy MLA decode module rows (every GPU but b200-sxm's vLLM 0.24.0: aiconfigurator#1423) less their collector's native norm/rotary chain, as measured on b200-sxm with both collectors (kernels.LegacyMLAOverhead; off: the rows as measured)", true,
		func(s *Scenario, on bool) { s.Config.MLACollectorBias = !on }},
	"pool-max-seqs": {"each disaggregated pool's own limit on running requests ([disagg.prefill] / [disagg.decode] max_num_seqs: the pools are separate engine instances, each started with its own --max-num-seqs or --max-running-requests; serve.Pool.MaxNumSeqs), which also sets a vLLM pool's default CUDA-graph capture limit, min(2 x max_num_seqs x (1 + K), 512) tokens (vllm/config/vllm.py @ 09f030e, _set_cudagraph_sizes) (off: both pools under runtime.max_num_seqs)", true,
		func(s *Scenario, on bool) { s.Serving.SharedPoolSeqs = !on }},
	"pool-recv-interval": {"each disaggregated SGLang pool's own --scheduler-recv-interval ([disagg.prefill] / [disagg.decode] scheduler_recv_interval; serve.Pool.SchedulerRecvInterval): the pool's schedulers take new requests only when the SchedulerRecvSkipper's count reaches it, so on a busy decode instance a transferred request waits up to N-1 decode steps; a prefill instance, whose batches are extends (weight 1000), receives every iteration (off: the scenario's runtime.scheduler_recv_interval)", true,
		func(s *Scenario, on bool) { s.Serving.NoPoolRecv = !on }},
	"pool-max-total-tokens": {"each disaggregated SGLang pool's own --max-total-tokens ([disagg.prefill] / [disagg.decode] max_total_tokens): the KV cache of each attention DP rank holds at most that many tokens, min(profiled, max_total_tokens) as SGLang's model runner takes it (model_runner_kv_cache_mixin.py init_memory) (off: the KV cache the pool's memory holds)", true,
		func(s *Scenario, on bool) { s.Serving.NoPoolTokens = !on }},
	"pool-mem-fraction": {"each disaggregated pool's own share of GPU memory ([disagg.prefill] / [disagg.decode] gpu_memory_utilization: the pools are separate engine instances, each started with its own --mem-fraction-static or --gpu-memory-utilization) (off: the scenario's runtime.gpu_memory_utilization or the engine's default for the pool's layout)", true,
		func(s *Scenario, on bool) {
			s.Serving.NoPoolFraction = !on
			s.Config.GPUMemoryUtilization = s.instanceFraction() // the decode instance's
		}},
	"pool-prefill-budget": {"each disaggregated pool's own token budget of a step ([disagg.prefill] / [disagg.decode] max_num_batched_tokens, SGLang's --chunked-prefill-size split over the pool's attention DP ranks, and max_prefill_tokens: a rank's prefill batch takes at most min(max_prefill_tokens, chunked_prefill_size / ranks) tokens) in the pool's scheduler, and vLLM's capture sizes cut at it on the pool (off: the scenario's runtime.max_num_batched_tokens and the engine's max_prefill_tokens)", true,
		func(s *Scenario, on bool) { s.Serving.NoPoolBudget = !on }},
	"kv-pull": {"vLLM's disaggregated KV transfer as its NixlConnector runs it: the decode instance starts reading a request's KV at its next step and admits the request at the step after the read completes (serve.Disagg.Pull; off: the KV pushed when the prefill ends and admitted at the decode instance's next step, as SGLang's sender does)", true,
		func(s *Scenario, on bool) { s.Serving.PushKV = !on }},
	"quant-gemm": {"dense GEMMs on fp8/fp4 activations stream their weights at their architecture's own DRAM efficiency with its fixed cost, fitted on the perf database's decode-size GEMM rows (kernels.QuantGEMMSM90, SM100, SM103: Blackwell fp8 6.1 us + 0.70 of BW, nvfp4 6.4 us + 0.68, block fp8 14.8 us + 0.59; off: the bf16 GEMM's 0.80 with 4.5 us, kernels.DefaultQuantGEMM)", true,
		func(s *Scenario, on bool) {
			e := s.efficiency()
			a, d := kernels.EfficiencyFor(s.Config.GPU).QuantGEMM, kernels.DefaultQuantGEMM()
			if on {
				d = a
			}
			q := &e.QuantGEMM
			q.FP8.Mem, q.FP8.Fixed = d.FP8.Mem, d.FP8.Fixed
			q.FP8Block.Mem, q.FP8Block.Fixed = d.FP8Block.Mem, d.FP8Block.Fixed
			q.FP4.Mem, q.FP4.Fixed = d.FP4.Mem, d.FP4.Fixed
			s.Config.Efficiency = e
		}},
	"quant-gemm-compute": {"dense GEMMs on fp8/fp4 activations reach their architecture's own fraction of the tensor-core peak when compute-bound, the median of the perf database's GEMM rows at M, N, K >= 4096 (kernels.QuantGEMMComputeFor: B200 fp8 0.42, nvfp4 0.45, block fp8 0.53; off: the bf16 GEMM's 0.70, kernels.EffComputeGEMM)", true,
		func(s *Scenario, on bool) {
			e := s.efficiency()
			c, _ := kernels.QuantGEMMComputeFor(s.Config.GPU.Arch)
			if !on {
				c = kernels.QuantGEMMCompute{}
			}
			q := &e.QuantGEMM
			q.FP8.Compute, q.FP8Block.Compute, q.FP4.Compute = c.FP8, c.FP8Block, c.FP4
			s.Config.Efficiency = e
		}},
	"moe-routing": {"routed experts priced under the skewed routing aiconfigurator's SDK assumes for the model's family, from the perf database's power-law rows measured beside the balanced ones (the busiest EP rank's layer at the step's tokens; DeepSeek-V3/R1, Kimi-K2.5, GLM-5: power_law_1.01; gpt-oss, Qwen3/Qwen3.5 MoE, MiniMax-M2: power_law_1.2; kernels.PerfDBRouting, sdk/models @ 095f58a), where the chosen table has them and the tokens are not dispatched by DeepEP (off: uniform random routing, the balanced rows read at the token count touching as many experts)", true,
		func(s *Scenario, on bool) { s.setMoERouting(on) }},
	"graph-padding": {"the engine's CUDA-graph padding: a decode batch below the capture size runs the graph of the next captured batch size (serve.CaptureBatches: SGLang's capture list, vLLM's cudagraph_capture_sizes; off: each decode step priced at its own size)", true,
		func(s *Scenario, on bool) {
			s.Config.CaptureBatches = nil
			s.Serving.NoGraphPadding = !on
			if on {
				s.setCaptureBatches()
			}
		}},
}

// Mechanisms lists the names Set takes, sorted, each with whether it is on
// by default and what it models.
func Mechanisms() []string {
	out := make([]string, 0, len(mechanisms))
	for k, m := range mechanisms {
		state := "off"
		if m.on {
			state = "on"
		}
		out = append(out, k+" ("+state+" by default): "+m.doc)
	}
	sort.Strings(out)
	return out
}

// SetMechanism turns the named mechanism on or off in s; call it before
// s.Sim(). An unknown name is an error naming the known ones.
func (s *Scenario) SetMechanism(name string, on bool) error {
	m, ok := mechanisms[name]
	if !ok {
		names := make([]string, 0, len(mechanisms))
		for k := range mechanisms {
			names = append(names, k)
		}
		sort.Strings(names)
		return fmt.Errorf("unknown mechanism %q (want one of %s)", name, strings.Join(names, ", "))
	}
	m.set(s, on)
	return nil
}

// setGEMMEfficiency sets the bf16 GEMM fractions of s's efficiency from
// its GPU (its architecture's, then its own measured ones) under the
// gemm-batch-efficiency and custom-gpu-gemm mechanisms.
func (s *Scenario) setGEMMEfficiency() {
	e, f := s.efficiency(), kernels.EfficiencyFor(s.Config.GPU)
	e.MemGEMMBatch, e.ComputeGEMMBF16 = f.MemGEMMBatch, f.ComputeGEMMBF16
	if s.noGEMMBatch {
		e.MemGEMMBatch = 0
	}
	s.Config.Efficiency = e
}

// efficiency is the efficiency set s's steps are priced with: the one set
// before, else its architecture's.
func (s *Scenario) efficiency() kernels.Efficiency {
	if e := s.Config.Efficiency; e.Mem != 0 {
		return e
	}
	return kernels.EfficiencyFor(s.Config.GPU)
}
