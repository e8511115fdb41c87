package sim

import (
	"fmt"

	"github.com/moecast/moecast/internal/unit"
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
//     35d5cda): rows x vocab x 8 B. The torch peak is the larger of the
//     two.
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
		moe := moeT*k*(max(2*inter, width)+inter)*actBytes + T*float64(m.MoE.Experts)*4
		if m.MoE.SharedInter > 0 {
			moe += T * 3 * float64(ceilDiv(m.MoE.SharedInter, sh.tp)) * actBytes
		}
		if moe > block {
			block, what = moe, "MoE"
		}
	}
	forward := resid + block
	sampler := T*h*actBytes + rows*float64(m.Vocab)*8
	parts := []ReservePart{{
		Name:  "activations",
		Bytes: unit.Bytes(max(forward, sampler)),
		Source: fmt.Sprintf("peak of vLLM's profile_run (gpu_worker.py determine_available_memory @ 35d5cda): forward of %d tokens %s (residual+hidden %s, largest block %s: %s), sampler over %d rows x %d vocab fp32 logits+probs %s",
			p.Tokens, unit.Bytes(forward), unit.Bytes(resid), what, unit.Bytes(block), int(rows), m.Vocab, unit.Bytes(sampler)),
	}}
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
