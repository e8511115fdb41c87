package sim

import (
	"fmt"
	"math"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// MemoryProfile is the engine's memory-profile run, which sizes the memory
// it keeps outside the KV cache. vLLM (vllm/v1/worker/gpu_worker.py @
// 35d5cda, Worker.determine_available_memory) runs
// GPUModelRunner.profile_run, a dummy forward of max_num_batched_tokens
// tokens followed by the dummy sampler run over min(max_num_seqs,
// max_num_batched_tokens) rows, and sizes the KV cache as
// requested memory (total x gpu_memory_utilization) - (weights + the peak
// torch memory increase of the run + the non-torch increase: NCCL and
// cuBLAS buffers). CUDA-graph memory is captured after the KV cache is
// allocated and is not subtracted (the same function only suggests a
// --kv-cache-memory that would count it).
//
// SGLang (WeightsAndKV) sizes its KV pool in profile_max_num_token
// (python/sglang/srt/model_executor/model_runner.py): free memory after
// the weights load less total x (1 - mem_fraction_static), that is total
// x mem_fraction_static - weights: its fraction bounds the weights and
// the KV pool, and activations, CUDA graphs and communicator buffers live
// in the rest, so nothing more is subtracted. (total is the free memory
// measured before the weights load; the CUDA context and buffers
// allocated before it, under 1-2 GiB, are not counted.)
//
// The zero MemoryProfile keeps aiconfigurator's fixed figure
// (OtherReserve + ncclReserve).
type MemoryProfile struct {
	// WeightsAndKV: GPUMemoryUtilization bounds the weights and the KV
	// cache alone (SGLang's mem_fraction_static); no reserve is
	// subtracted. Tokens and Seqs are then unused.
	WeightsAndKV bool
	// Tokens is the dummy forward's token count per engine core (vLLM
	// max_num_batched_tokens).
	Tokens int
	// Seqs is the sampler run's rows (vLLM max_num_seqs; capped at Tokens).
	Seqs int
	// SamplerSort: the dummy sampler run takes vLLM's PyTorch-native
	// top-k/top-p path, which sorts the whole vocabulary of every row
	// (profileSampler; serve.SamplerSortDefault gives the versions).
	SamplerSort bool
	// SamplerTriton: the dummy sampler run takes vLLM's Triton top-k/top-p
	// kernel, which masks the fp32 logits in place through a kept buffer
	// of min(SMs, rows) vocabulary rows (profileSampler;
	// serve.SamplerTritonDefault gives the versions). SamplerSort wins
	// when both are set.
	SamplerTriton bool
	// ARFusion: vLLM's all-reduce + RMSNorm fusion pass holds FlashInfer's
	// IPC workspace for the TP group, allocated outside torch when the
	// model compiles (profileARFusion; serve.ARFusionDefault gives the
	// versions; only at TP 2, 4 or 8 on sm_90, sm_100 and sm_103, without
	// DP).
	ARFusion bool
	// IndexerWorkspace: vLLM reserves its sparse-attention indexer's
	// prefill workspace for MaxModelLen during the profile run and keeps
	// it (DSA models: profileWorkspace; serve.IndexerWorkspaceDefault).
	IndexerWorkspace bool
	// MaxModelLen is the engine's max_model_len, which sizes the indexer
	// workspace.
	MaxModelLen int
	// FICutlassMoE: vLLM picks FlashInfer's CUTLASS fused MoE for
	// block-fp8 routed experts on Hopper with expert parallelism
	// (serve.FICutlassMoEDefault gives the versions); its per-call
	// workspace takes the place of the Triton caches in the forward peak
	// (profileReserve; applied only on sm_90, fp8-b128 routed experts, EP
	// > 1).
	FICutlassMoE bool
}

// ReservePart is one term of the memory reserve, with where it comes from.
type ReservePart struct {
	Name   string
	Bytes  unit.Bytes
	Source string
}

// fusedMoEChunk is vLLM's VLLM_FUSED_MOE_CHUNK_SIZE default (vllm/envs.py,
// 16 * 1024): fused_experts works on at most that many tokens at a time,
// so its intermediate caches stop growing there.
const fusedMoEChunk = 16 * 1024

// profileReserve is the reserve vLLM's profile run measures on one GPU of
// the deployment, from the model's dims, as parts:
//
//   - forward peak: the residual and hidden state (2 x T x hidden) plus
//     the largest single block's transients over T tokens: attention
//     (the q/k/v projection output and the attention output, heads split
//     over attention TP), the dense MLP (gate_up 2 x inter/TP and the
//     activation inter/TP), or the MoE block (router logits T x experts
//     fp32; fused_experts' intermediate_cache13 of T x top_k x
//     max(2 x inter/expert-TP, hidden) and intermediate_cache2 of T x
//     top_k x inter/expert-TP, vllm/model_executor/layers/fused_moe/
//     fused_moe.py @ 35d5cda, allocated for all top_k pairs whatever EP
//     holds; the shared expert's gate_up and activation), bf16.
//     T = MemoryProfile.Tokens; the MoE sees T x DP tokens under vLLM's
//     naive DP path (all-gather before the experts).
//   - sampler peak: after the forward only the hidden state stays; the
//     dummy sampler run holds the logits of min(Seqs, Tokens) rows over
//     the whole vocabulary (LogitsProcessor gathers the TP shards) in fp32
//     and the softmax's fp32 probabilities (vllm/v1/sample/sampler.py @
//     35d5cda): rows x vocab x 8 B; with MemoryProfile.SamplerSort the
//     sort of vLLM's native top-k/top-p path, and with speculative
//     decoding the rejection sampler's run after it, peak at 9.5 and 12.5
//     fp32 copies of those logits; with MemoryProfile.SamplerTriton the
//     Triton top-k/top-p kernel's path at 3.5 and 6.5 copies plus the
//     kernel's buffer (profileSampler). The torch peak is the larger of
//     the two.
//   - workspace (MemoryProfile.IndexerWorkspace, DSA models): the shared
//     workspace buffer the sparse indexer sizes in the profile run for
//     40 x max_model_len keys and never frees; the fused-MoE caches are
//     taken from the same buffer, so they leave the forward's MoE term
//     and the buffer is the larger of the two (profileWorkspace).
//   - non-torch: NCCL's communicator buffers, aiconfigurator's nccl_mem by
//     GPU count (ncclReserve).
//
// Not counted: the drafter's own profile forward under speculative
// decoding, linear-attention and recurrent mixers' transients (the
// attention term stands for every mixer), hyper-connection copies of the
// residual, cuBLAS workspaces (tens of MiB) and the allocator's
// fragmentation.
func (c *Config) profileReserve(sh shape) []ReservePart {
	m := c.Model
	p := c.Profile
	T := float64(p.Tokens)
	rows := float64(min(max(p.Seqs, 1), p.Tokens))
	h := float64(m.Hidden)
	resid := 2 * T * h * actBytes

	// Attention transients over T tokens.
	a := m.Attn
	ws := c.profileWorkspace()
	buffer, caches := ws, 0.0
	heads := float64(ceilDiv(max(a.Heads, 1), sh.attnTP))
	var qkv, out float64
	if a.KVLoRARank > 0 { // MLA: q, kv_b output, attention output
		qkv = heads * float64(a.QKNopeDim+a.QKRopeDim+a.QKNopeDim+a.VHeadDim)
		out = heads * float64(a.VHeadDim)
	} else {
		kvh := float64(ceilDiv(max(a.KVHeads, 1), sh.attnTP))
		qkv = (heads + 2*kvh) * float64(a.HeadDim)
		out = heads * float64(a.HeadDim)
	}
	block := T * (qkv + out) * actBytes
	what := "attention"
	if m.DenseInter > 0 && (m.DenseModel || m.DenseLayers > 0 || len(m.DenseOnly) > 0 || m.MoEStep > 1) {
		if mlp := T * 3 * float64(ceilDiv(m.DenseInter, sh.tp)) * actBytes; mlp > block {
			block, what = mlp, "dense MLP"
		}
	}
	if !m.DenseModel && m.MoE.Experts > 0 {
		moeT := T
		if sh.dpExchange && c.MoEA2A == A2ANone {
			moeT *= float64(sh.dp)
		}
		moeT = min(moeT, fusedMoEChunk)
		k := float64(m.MoE.TopK)
		inter := float64(ceilDiv(m.MoE.Inter, sh.moeTP))
		width := h
		if m.MoE.Latent > 0 {
			width = float64(m.MoE.Latent)
		}
		caches = moeT * k * (max(2*inter, width) + inter) * actBytes
		moeName := "MoE"
		if c.ficutlassMoE(sh) {
			moeName = "MoE (FlashInfer CUTLASS workspace)"
			// vLLM's FlashInferExperts: workspace13 of M x K and no
			// workspace2 (flashinfer_cutlass_moe.py workspace_shapes, from
			// the shared workspace manager), and the kernel's own
			// workspace, allocated per call; the modular kernel hands it
			// all M rows in one chunk (modular_kernel.py _allocate_buffers
			// @ ba2f0acc2), so the fused-MoE chunk does not cap them.
			caches = T*h*actBytes + fiCutlassMoEWorkspace(T, k, h, inter, float64(m.MoE.Experts/max(sh.ep, 1)))
		}
		moe := caches + T*float64(m.MoE.Experts)*4
		if m.MoE.SharedInter > 0 {
			moe += T * 3 * float64(ceilDiv(m.MoE.SharedInter, sh.tp)) * actBytes
		}
		if ws > 0 {
			// The fused-MoE caches live in the shared workspace buffer
			// (FusedMoEModularKernel._allocate_buffers takes them from
			// current_workspace_manager()), which the indexer sized first.
			buffer = max(ws, caches)
			moe -= caches
		}
		if moe > block {
			block, what = moe, moeName
		}
	}
	forward := resid + block
	sampler, how := c.profileSampler(T, rows)
	parts := []ReservePart{{
		Name:  "activations",
		Bytes: unit.Bytes(max(forward, sampler)),
		Source: fmt.Sprintf("peak of vLLM's profile_run (gpu_worker.py determine_available_memory @ 35d5cda): forward of %d tokens %s (residual+hidden %s, largest block %s: %s), sampler over %d rows x %d vocab %s %s",
			p.Tokens, unit.Bytes(forward), unit.Bytes(resid), what, unit.Bytes(block), int(rows), m.Vocab, how, unit.Bytes(sampler)),
	}}
	if buffer > 0 {
		parts = append(parts, ReservePart{Name: "workspace", Bytes: unit.Bytes(buffer),
			Source: fmt.Sprintf("vLLM's shared workspace buffer, kept after the profile run: the sparse indexer's prefill gather of 40 x max_model_len %d keys x %d B (get_max_prefill_buffer_size, vllm/v1/attention/backends/mla/indexer.py; reserved by sparse_attn_indexer in the profile run, vllm/model_executor/layers/sparse_attn_indexer.py @ f120bd42d) %s, shared with the fused-MoE caches (%s)",
				p.MaxModelLen, indexerKeyBytes(m.Attn), unit.Bytes(ws), unit.Bytes(caches))})
	}
	if ar, tokens := c.profileARFusion(); ar > 0 {
		parts = append(parts, ReservePart{Name: "allreduce fusion", Bytes: unit.Bytes(ar),
			Source: fmt.Sprintf("non-torch memory: FlashInfer's all-reduce fusion workspace for TP %d, %d tokens x hidden %d in bf16: one buffer, three Lamport buffers and the flags (trtllm_create_ipc_workspace_for_all_reduce_fusion, flashinfer-ai/flashinfer flashinfer/comm/trtllm_ar.py), created by vLLM's AllReduceFusionPass for min(FI_ALLREDUCE_FUSION_MAX_SIZE_MB / (hidden x 2), max_num_batched_tokens) tokens when the model compiles (vllm/compilation/passes/fusion/allreduce_rms_fusion.py @ ba2f0acc2; on by default at -O2 since PR #34299)",
				c.Layout.TP, tokens, c.Model.Hidden)})
	}
	if n := ncclReserve(c.GPUs); n > 0 {
		parts = append(parts, ReservePart{Name: "nccl", Bytes: n,
			Source: fmt.Sprintf("non-torch memory: NCCL buffers, aiconfigurator nccl_mem for %d GPUs (systems/*.yaml @ 095f58a)", c.GPUs)})
	}
	return parts
}

// outsideFraction is the reserve of a WeightsAndKV profile: none inside
// the fraction, one zero part that says why.
func outsideFraction() []ReservePart {
	return []ReservePart{{Name: "outside the fraction", Bytes: 0,
		Source: "SGLang's mem_fraction_static bounds weights + KV pool; activations, CUDA graphs and NCCL buffers live in the rest of the GPU (model_runner.py profile_max_num_token)"}}
}

// FixedReserve is aiconfigurator's fixed reserve on one of gpus GPUs
// (other_mem + nccl_mem), the reserve of the zero MemoryProfile.
func FixedReserve(gpus int) unit.Bytes { return OtherReserve + ncclReserve(gpus) }

// fixedReserve is aiconfigurator's fixed reserve as parts.
func fixedReserve(gpus int) []ReservePart {
	parts := []ReservePart{{Name: "other", Bytes: OtherReserve,
		Source: "aiconfigurator other_mem, 3.5 GiB fixed (systems/*.yaml @ 095f58a)"}}
	if n := ncclReserve(gpus); n > 0 {
		parts = append(parts, ReservePart{Name: "nccl", Bytes: n,
			Source: fmt.Sprintf("aiconfigurator nccl_mem for %d GPUs (systems/*.yaml @ 095f58a)", gpus)})
	}
	return parts
}

// Sampler terms of vLLM's dummy sampler run, in units of L = rows x vocab
// x 4 B (one fp32 copy of the logits):
//
//   - the PyTorch-native top-k/top-p path (apply_top_k_top_p,
//     vllm/v1/sample/ops/topk_topp_sampler.py @ f120bd42d; the dummy run
//     sets top_p 0.9 and top_k vocab - 1, gpu_model_runner.py
//     _dummy_sampler_run): the gathered bf16 logits (L/2) and their fp32
//     copy (L) stay alive while torch.sort writes the sorted values (L)
//     and their int64 indices (2L) through 5L of temporary storage: 9.5L
//     at the sort, above the 7L the rest of the path holds at once (the
//     top-k and top-p boolean masks, L/4 each, the softmax of the sorted
//     values and the scattered result, L each);
//   - with speculative decoding the dummy run then calls the rejection
//     sampler on bf16 random logits over 2 x rows (L) with one draft token
//     a row (rejection_sampler.py @ f120bd42d): the bonus rows' bf16 slice
//     (L/2), their fp32 raw-logits copy (L, returned as logprobs), the
//     target rows' fp32 copy (L) and its clone (L) stay alive while the
//     clone is sorted the same way (3L + 5L): 12.5L;
//   - the Triton top-k/top-p kernel (apply_top_k_top_p_triton,
//     vllm/v1/sample/ops/topk_topp_triton.py @ ba2f0acc2, PR #33538; the
//     default from 8 rows up, forward_native): the bf16 gathered logits
//     (L/2) stay alive, Sampler.forward's fp32 copy (L) is masked in
//     place, the kernel's per-program buffer of min(next_power_of_2(
//     min(SMs, rows)), SMs) vocabulary rows in fp32 (B, kept in
//     _TRITON_BUFFER_CACHE) is allocated, then random_sample's softmax
//     probabilities (L) and its exponential draws q (L): 3.5L + B;
//   - with speculative decoding and the Triton kernel, the rejection
//     sampler (rejection_sampler.py @ ba2f0acc2) holds the bf16 random
//     logits over 2 x rows (L), the bonus rows' bf16 slice (L/2) and
//     their fp32 raw logits returned as logprobs (L), then the target
//     rows' fp32 copy (L) and its clone (L), masked in place, their
//     softmax target_probs (L) and sample_recovered_tokens' q (L): 6.5L
//   - B (above the bonus rows' own sampler run, 5.5L + B);
//   - otherwise (FlashInfer's sampler, or a version that is not read):
//     the fp32 logits and probabilities, 2L.
//
// The 5L of the sort and both totals are measured: torch 2.11 on an H200,
// rows 128-2048, vocab 32,000-154,880, the allocator's peak over the
// same tensor sequence (bench/glm5mem/sampler_peak.py: 9.50-9.57L and
// 12.50-12.57L; bench/RESULTS-glm5mem.md).
const (
	samplerSortL       = 9.5
	samplerSortSpecL   = 12.5
	samplerPlainL      = 2.0
	samplerTritonL     = 3.5
	samplerTritonSpecL = 6.5
	// tritonSamplerMinRows: apply_top_k_top_p takes the Triton kernel
	// from 8 rows (logits.shape[0] >= 8), the PyTorch sort below.
	tritonSamplerMinRows = 8
)

// profileSampler is the dummy sampler run's peak over rows rows, with the
// forward's hidden state (T tokens) still held, and how it was counted.
func (c *Config) profileSampler(T, rows float64) (float64, string) {
	m := c.Model
	l := rows * float64(m.Vocab) * 4
	hidden := T * float64(m.Hidden) * actBytes
	switch {
	case c.Profile.SamplerSort && c.Spec.Active():
		return hidden + samplerSortSpecL*l, "native top-k/top-p sort and the rejection sampler's (12.5 fp32 copies at the peak)"
	case c.Profile.SamplerSort:
		return hidden + samplerSortL*l, "native top-k/top-p sort (9.5 fp32 copies at the peak)"
	case c.Profile.SamplerTriton && rows < tritonSamplerMinRows && c.Spec.Active():
		return hidden + samplerSortSpecL*l, "native top-k/top-p sort below 8 rows and the rejection sampler's (12.5 fp32 copies at the peak)"
	case c.Profile.SamplerTriton && rows < tritonSamplerMinRows:
		return hidden + samplerSortL*l, "native top-k/top-p sort below 8 rows (9.5 fp32 copies at the peak)"
	case c.Profile.SamplerTriton && c.Spec.Active():
		buf := c.tritonSamplerBuffer(rows)
		return hidden + samplerTritonSpecL*l + buf, fmt.Sprintf("Triton top-k/top-p and the rejection sampler's (6.5 fp32 copies + the kernel's %s buffer)", unit.Bytes(buf))
	case c.Profile.SamplerTriton:
		buf := c.tritonSamplerBuffer(rows)
		return hidden + samplerTritonL*l + buf, fmt.Sprintf("Triton top-k/top-p (3.5 fp32 copies + the kernel's %s buffer)", unit.Bytes(buf))
	}
	return hidden + samplerPlainL*l, "fp32 logits+probs"
}

// tritonSamplerBuffer is the Triton top-k/top-p kernel's buffer over
// rows rows: one fp32 vocabulary row per program, min(next_power_of_2(
// NUM_PROGRAMS), SMs) rows with NUM_PROGRAMS = min(SMs, rows)
// (apply_top_k_top_p_triton @ ba2f0acc2). A GPU without an SM count
// takes NUM_PROGRAMS = rows.
func (c *Config) tritonSamplerBuffer(rows float64) float64 {
	n := int(rows)
	sms := c.GPU.SMs
	if sms > 0 {
		n = min(nextPow2(min(sms, n)), sms)
	}
	return float64(n) * float64(c.Model.Vocab) * 4
}

// nextPow2 is the least power of two >= n (1 for n <= 1).
func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// arFusionMaxMiB is vLLM's FI_ALLREDUCE_FUSION_MAX_SIZE_MB, the largest
// all-reduce the fusion pass takes, by architecture and TP size
// (vllm/compilation/passes/fusion/allreduce_rms_fusion.py @ ba2f0acc2).
var arFusionMaxMiB = map[kernels.Arch]map[int]float64{
	kernels.SM90:  {2: 64, 4: 2, 8: 1},
	kernels.SM100: {2: 64, 4: 32, 8: 1},
	kernels.SM103: {2: 64, 4: 64, 8: 2},
}

// arFusionFlagCount is FlashInfer's BarrierFlagCount (int32 flags per
// rank of the workspace's flag buffer), arFusionMaxComm its MAX_COMM_SIZE
// cap on one Lamport buffer (flashinfer/comm/trtllm_ar.py).
const (
	arFusionFlagCount = 256
	arFusionMaxComm   = (1<<31 - 1) &^ (1<<21 - 1)
)

// profileARFusion is the FlashInfer all-reduce fusion workspace on one GPU
// (MemoryProfile.ARFusion) and the tokens it is sized for: vLLM's
// AllReduceFusionPass takes max_token_num = min(max size / (hidden x 2),
// max_num_batched_tokens) and FlashInfer allocates, for the TP group, a
// buffer of TP x tokens x hidden bf16 values, TP x 256 int32 flags and
// three Lamport buffers of TP x tokens x hidden bf16 values each (capped
// at MAX_COMM_SIZE), outside torch's allocator: the profile counts it as
// non-torch memory. Zero without the flag, at a TP FlashInfer does not
// support (not 2, 4 or 8), with DP ranks (the pass is off with
// data_parallel_size > 1, vllm/config/vllm.py enable_allreduce_rms_fusion
// @ ba2f0acc2) and off sm_90/sm_100/sm_103.
func (c *Config) profileARFusion() (float64, int) {
	tp := c.Layout.TP
	if !c.Profile.ARFusion || c.Layout.DP > 1 || c.Profile.Tokens <= 0 {
		return 0, 0
	}
	maxMiB, ok := arFusionMaxMiB[c.GPU.Arch][tp]
	if !ok {
		return 0, 0
	}
	h := c.Model.Hidden
	tokens := min(int(maxMiB*(1<<20))/(h*2), c.Profile.Tokens)
	comm := float64(tp) * float64(tokens) * float64(h) * 2
	lamport := min(comm, arFusionMaxComm)
	return comm + float64(tp*arFusionFlagCount*4) + 3*lamport, tokens
}

// indexerKeyBytes is one token's key in the DSA indexer's cache: fp8
// values and one fp32 scale per 128 (vLLM's DeepseekV32IndexerCache,
// head_dim + head_dim // 128 x 4).
func indexerKeyBytes(a model.Attention) int {
	return a.IndexHeadDim + a.IndexHeadDim/128*4
}

// indexerWorkspaceKeys is get_max_prefill_buffer_size's factor: the
// indexer's prefill gather holds 40 x max_model_len keys (vllm/v1/
// attention/backends/mla/indexer.py @ f120bd42d, "40 is a magic number").
const indexerWorkspaceKeys = 40

// profileWorkspace is the sparse indexer's prefill workspace vLLM keeps
// from its profile run (MemoryProfile.IndexerWorkspace) on a DSA MLA
// model: 40 x max_model_len keys of indexerKeyBytes each; zero elsewhere.
func (c *Config) profileWorkspace() float64 {
	a := c.Model.Attn
	if !c.Profile.IndexerWorkspace || a.Kind != model.MLA || a.IndexHeads == 0 || a.IndexTopK == 0 || a.IndexHeadDim == 0 {
		return 0
	}
	return float64(indexerWorkspaceKeys) * float64(c.Profile.MaxModelLen) * float64(indexerKeyBytes(a))
}

// ficutlassMoE reports whether the profile's MoE block runs FlashInfer's
// CUTLASS fused MoE: vLLM's fp8 MoE oracle moves FLASHINFER_CUTLASS to the
// front "on Hopper for Block Fp8 ... FI CUTLASS for EP" (and Triton for TP
// alone; _get_priority_backends, vllm/model_executor/layers/fused_moe/
// oracle/fp8.py @ ba2f0acc2, PR #34260), and FlashInferExperts supports
// the fp8 block-128 scheme on sm_90 (flashinfer_cutlass_moe.py
// _supports_quant_scheme). Not where data-parallel ranks exchange
// tokens before the experts: there the all-gathered rows (and whether
// FlashInfer's prepare/finalize quantizes them first) are not read, and
// the Triton caches stand.
func (c *Config) ficutlassMoE(sh shape) bool {
	return c.Profile.FICutlassMoE && c.GPU.Arch == kernels.SM90 && sh.ep > 1 && !sh.dpExchange &&
		c.Model.Quant.RoutedExperts.Name == dtype.FP8Block128.Name
}

// fiCutlassMoEWorkspace is the workspace FlashInfer's CUTLASS fused MoE
// allocates for one call over rows tokens on the DeepSeek fp8 block-scale
// path (bf16 activations quantized inside, fp8 weights; SwiGLU), from
// CutlassMoeFCRunner::getWorkspaceDeviceBufferSizes
// (csrc/fused_moe/cutlass_backend/cutlass_fused_moe_kernels.cuh) and
// FusedMoeRunner::getWorkspaceInfo (flashinfer_cutlass_fused_moe_binding.cu)
// at flashinfer v0.6.6, the version vLLM pins (requirements/cuda.txt @
// ba2f0acc2), with n = rows x topK expanded rows:
//
//   - overlapped_gemm1_gemm2_inputs: max(permuted input n x hidden, fc1
//     result n x inter, block-scale fc2 output n x hidden), bf16;
//   - overlapped_gemm1_gemm2_outputs: the gated fc1 output 2 x n x inter,
//     bf16;
//   - deepseek_fc_workspace: the larger block-scale GEMM's quantized A
//     (CutlassFp8BlockScaleGemmRunner::getWorkspaceSizeBase): n x K fp8
//     and n x K/128 fp32 scales, K = hidden (fc1) or inter (fc2);
//   - index maps: permuted_row_to_unpermuted_row,
//     permuted_token_selected_experts, permuted_token_final_scales and the
//     binding's src_to_dest_map (n x 4 B each), blocked_row_to_unpermuted_row
//     (experts on the rank x rows x 4 B).
//
// Left out: the per-expert counts, pointer arrays and the grouped GEMM's
// TMA workspace (KiB), alignment padding.
func fiCutlassMoEWorkspace(rows, topK, hidden, inter, experts float64) float64 {
	n := rows * topK
	in := n * max(hidden, inter) * actBytes
	out := 2 * n * inter * actBytes
	quant := max(n*hidden+n*math.Ceil(hidden/128)*4, n*inter+n*math.Ceil(inter/128)*4)
	maps := 4*n*4 + experts*rows*4
	return in + out + quant + maps
}
