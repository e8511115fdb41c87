// Package sim composes one engine step of an MoE model on a GPU box: the
// ops of each layer kind on one rank for a parallel layout, their costs
// from kernels and comm, speculative decoding, and the memory picture.
//
// It is a pure, deterministic function of its Config: no files, no clock.
// New validates the Config and precomputes every op list; StepBatch
// evaluates one step over a batch of sequences (decodes, verifies, prefill
// chunks, each with its own context) and Step the uniform decode step
// (batch decodes at one context, plus the memory picture), both without
// allocating.
//
// # A step over a batch of sequences
//
// A step as vLLM V1 runs a mixed batch (chunked prefill):
//
//   - GEMMs, norms, rotary, the KV-cache writes, the router and the MoE
//     layer, and the collectives run once over the combined tokens: K+1
//     (or 1) per decode plus every chunk's query tokens. Weights and the
//     experts those tokens touch (routing model below) are read once;
//     at large token counts the rooflines turn compute-bound
//     (kernels.EffComputeGEMM, EffComputeMoE·MoEWidthFactor,
//     EffComputeMarlin, each from op-level measurements named there).
//   - Attention splits: decode attention over the decodes at their mean
//     context (the KV read is linear in the contexts summed; DSA top-k and
//     sliding windows cap each sequence's context first), and one causal
//     prefill attention over the chunks against their prefixes
//     (kernels.AttentionPrefill, kernels.CausalPairs). MLA chunks run
//     un-absorbed, as vLLM's MLACommonImpl and SGLang's forward_normal do:
//     kv_b_proj up-projects the chunk's and its cached prefix's latent to
//     per-head k_nope and v, then attention with q/k dim nope+rope (192
//     for DeepSeek-V3) and v dim v_head_dim (128); the absorbed W_UK/W_UV
//     bmm's run on the decode tokens only. The DSA indexer scores each
//     chunk token against its causal keys (a GEMM-shaped fp8 estimate).
//     With Config.SparseMLA (vLLM's FLASHMLA_SPARSE backend on a bf16 KV
//     cache) a DSA layer has no un-absorbed path: every token, decode and
//     prefill, is absorbed (W_UK, W_UV) and attends its index_topk
//     selected latent rows through one FlashMLA sparse MQA call
//     (kernels.SparseMLA: q heads padded to the kernel's tile, one CTA per
//     query and tile over all index_topk entries, in waves over the SMs).
//     With Config.SparsePrefill (SGLang's NSA backend with a FlashMLA
//     prefill implementation, no MHA_ONE_SHOT) only the prefill chunks
//     take that path (their own W_UK, W_UV and sparse MQA call); the
//     decodes keep the MLA decode kernel. With Config.IndexerTopK each
//     decode row (decodes x verified positions) selects its index_topk
//     keys in a top-k op of its own after the decode scores
//     (kernels.IndexerTopK).
//   - A calibrated MLA module table (a decode measurement) prices the
//     module for the step's decodes; each module op adds its own
//     estimate's increase from those decodes to the whole step.
//   - Logits: every verified position of a decode, the last position of
//     each chunk (vLLM samples every scheduled request).
//   - Speculative decoding: the first draft pass runs over every new
//     token (the drafter fills its KV for prefill tokens too), the later
//     K-1 over one token per sequence.
//   - CUDA graphs (vLLM V1 FULL_AND_PIECEWISE): a decode step of at most
//     Config.CaptureSize tokens per rank replays one graph (any decode step
//     when it is 0), a larger one runs eagerly; a mixed or prefill step of
//     at most CaptureSize (CaptureTokens when 0) tokens per rank runs
//     piecewise graphs with attention launched eagerly, a larger one runs
//     eagerly; eager kernels pay kernels.Costs.LaunchCost per op, or with
//     Config.LaunchAhead the step pays max(0, host - GPU) over all its
//     eager kernels (the host issues them ahead of the GPU), each at the
//     engine's measured host time per kernel under Config.EngineLaunch
//     (kernels.EngineHostLaunch). With
//     Config.EagerPrefill (SGLang) every step with a prefill chunk is
//     eager. Decode batches below the capture size are priced at their
//     size, unless Config.CaptureBatches lists the captured sizes
//     (SGLang): then at the next one, the padding rows at context 1.
//   - With G attention groups (DP attention) the sequences spread evenly
//     and the step costs the busiest group: ceil(n/G) decodes and
//     ceil(chunks/G) chunks with that share of the chunks' tokens.
//
// Not modelled: host work per step that async scheduling does not hide
// (prefill input preparation) and the extra merge kernel of MLA prefill over
// a cached prefix. Unmeasured:
// MXFP4 experts (gpt-oss) at prefill sizes are priced on the W4A16 Marlin
// path, as weight-only formats are (vLLM on Hopper may run them through
// Triton's matmul_ogs instead); FlashInfer CUTLASS fp8 MoE is priced as
// the Triton kernel, which perfdb shows 2.5-5x faster at EP8
// (kernels TestFP8MoEAtPrefillSizes).
//
// # What one decode step is
//
// A decode step as vLLM runs it, per layer kind (dense layers, MoE layers,
// MTP or EAGLE-3 draft passes), with the ops taken from model's Linear lists
// (AttentionLinears, DenseMLPLinears, SharedExpertLinears, ExpertLinears,
// RouterLinear, EmbeddingLinear, LMHeadLinear, MTPLinears) split per rank:
//
//   - embedding lookup (vocab-parallel) and its AllReduce;
//   - per layer: fused_add_rms_norm, the attention projections (MLA in its
//     absorbed decode form: fused_qkv_a (q_a and kv_a in one replicated
//     GEMM, vLLM deepseek_v2.py), q_a_layernorm, kv_a_layernorm, q_b,
//     the per-head W_UK and W_UV bmm's from kv_b, rotary, the latent
//     KV-cache write, the decode attention kernel; GQA: qkv, optional q/k
//     norm, rotary, KV-cache write, attention, o_proj), the TP AllReduce
//     after o_proj, fused_add_rms_norm, then the dense MLP (gate_up,
//     silu_and_mul, down) or the MoE block (router GEMM, top-k, fused MoE
//     over the experts the busiest rank touches, shared expert, the add),
//     and the TP AllReduce after the MLP/MoE sum;
//   - final norm, vocab-parallel lm_head, the logits all-gather over TP
//     and the sampler.
//
// # Layouts
//
// vLLM's, with SGLang's DP attention as the one extension:
//
//   - Attention is split over attnTP = TP ranks (heads), or not at all with
//     dp_attention; the GPUs form G = GPUs/attnTP attention groups, each
//     running ceil(batch/G) sequences (an idle DP rank runs a padded dummy
//     batch, as vLLM pads DP ranks to the largest, so every rank costs the
//     largest group).
//   - Dense MLP, shared expert, embedding and lm_head are split over TP
//     (model.Weights). With attnTP = TP > 1 a TP AllReduce of
//     tokens x hidden x 2 B follows o_proj and the MLP/MoE sum (2 per layer,
//     plus 1 after the embedding); with DP attention and TP > 1 an all-gather
//     over TP follows attention and a reduce-scatter follows the MLP instead.
//   - Routed experts form one copy over all GPUs: EP slots of E/EP experts,
//     each expert split over expert-TP = TP*DP/EP (model.Layout.ExpertTP).
//     With DP = 1 every rank already holds all tokens: each computes its
//     experts' pairs and the AllReduce combines (TP8 EP8 without DP
//     attention has no all-to-all). With DP > 1 and EP > 1 each MoE layer
//     adds an all-to-all dispatch and combine (each rank sends its share of
//     the tokens once to every rank holding one of their experts, bf16;
//     DeepEP-style); with DP > 1 and EP = 1 an all-gather of the DP groups'
//     tokens before the experts and a reduce-scatter after (vLLM's naive
//     path).
//
// # Routing
//
// Uniform routing: each token picks a uniformly random set of top-k of the
// E experts. The expected distinct experts an EP slot of m experts touches
// at T tokens is m(1-(1-k/E)^T) (exact), and the step waits for the busiest
// slot: its pairs, distinct experts and tokens are taken as
// mean + sigma·sqrt(EP/(EP-1))·e(EP), e(n) the expected maximum of n
// standard normals, from exact per-slot means and variances (exact at T = 1);
// within 5% of a seeded Monte-Carlo for the shipped models' shapes
// (routing_test.go).
//
// # Memory
//
// Per GPU: weights from model.Weights (MTP layers only when MTP drafts;
// the EAGLE-3 head added), KV = ceil(batch/G) x context x KV bytes per token
// per GPU (MLA latent replicated over attention-TP ranks; the draft layers'
// own cache added), and a reserve outside the KV cache. With
// Config.Profile set (vLLM scenarios: max_num_batched_tokens and
// max_num_seqs) the reserve is what vLLM's memory-profile run measures
// (profile.go): the activation peak of a forward at the token budget
// (residual stream plus the largest block's transients, the fused MoE's
// top_k caches included) or of the sampler's fp32 logits at max_num_seqs
// rows, whichever is larger, plus NCCL's buffers (aiconfigurator's
// nccl_mem, 342-392 MiB by GPU count). With Config.Profile.WeightsAndKV
// (SGLang, whose activations, CUDA graphs and NCCL buffers live outside
// mem_fraction_static, read as gpu_memory_utilization) there is no
// reserve. With the zero profile (`--without memory-profile`,
// `--without sglang-kv-pool`) the reserve is aiconfigurator's fixed
// other_mem (3.5 GiB) plus nccl_mem from its systems/*.yaml. Memory.ReserveParts lists the
// terms with their sources (`predict --explain`). Usable = memory x
// gpu_memory_utilization - weights - reserve; the largest batch that fits
// is floor(usable / (context x KV per token)) x G.
//
// # Time, categories, intervals
//
// Step time = the sum of all op times: nothing overlaps (no compute/comm
// overlap, no dual-batch overlap, no host/device overlap beyond what
// kernels.LaunchCost models). The breakdown assigns each op one
// cost.Category; its sum equals the step time. Without CUDA graphs each
// op's host launch cost beyond its GPU time goes into `launch`
// (kernels.Costs.LaunchCost). The host's own per-step work (scheduling,
// input preparation) is not modelled (`other` stays 0).
//
// Intervals: deviations (Time-Lo, Hi-Time) add linearly within a category
// (ops of one kind share the same efficiency error: correlated) and in
// quadrature across categories (independent):
//
//	Step.Lo = Step.Time - sqrt(Σ_c (Time_c - Lo_c)²),  Step.Hi = Step.Time + sqrt(Σ_c (Hi_c - Time_c)²).
//
// # Speculative decoding
//
// The verify step runs K+1 tokens per sequence through the target; tokens
// per step follow Spec.TokensPerStep; TPOT = step / tokens per step. Draft
// cost: MTP = K sequential passes of the MTP module (embedding, enorm,
// hnorm, eh_proj, one MoE decoder layer, shared lm_head, greedy argmax),
// the first over all K+1 verified positions of each sequence and the other
// K-1 over one token per sequence, as vLLM's EagleProposer runs them;
// EAGLE-3 = the same K passes of a one-layer draft head plus its fc layer
// (3·hidden -> hidden) once; the head is assumed to be one Llama-style
// layer at the target hidden size, qkv from 2·hidden with the target's
// query heads and 8 kv heads of 128, a SwiGLU MLP of the target's dense
// width (3·hidden without dense layers) and its own lm_head over a
// 32,000-token draft vocabulary, all bf16, split over TP like the target; ngram = no GPU cost (prompt lookup runs on the host
// and its time is not modelled). Multiple query tokens per sequence are
// folded into the attention heads (FlashMLA's s_q x h_q): KV is read once
// per sequence.
package sim
