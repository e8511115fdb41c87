package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// PrefillShape is causal attention of the prefill chunks of one step on one
// rank, as one variable-length kernel (FlashAttention varlen) runs it: each
// chunk's queries attend its prefix (the tokens already in the KV cache)
// and, causally, the chunk's own earlier tokens.
//
// For MLA the engines run prefill un-absorbed (vLLM MLACommonImpl
// _forward_prefill, SGLang forward_normal): k and v are up-projected per
// head from the latent (kv_b_proj, costed as a GEMM by the caller) and the
// kernel is ordinary multi-head attention with q/k dim QKNope+QKRope (192 for
// DeepSeek-V3) and v dim VHeadDim (128): set KVHeads = Heads and the dims
// accordingly. For GQA, QKDim = VDim = head_dim.
type PrefillShape struct {
	Chunks int     // prefill chunks (sequences) in the step
	Tokens int     // query tokens summed over the chunks
	Keys   int     // key positions read, summed over the chunks: prefix + chunk (window-capped)
	Pairs  float64 // (query, key) pairs attended, summed over the chunks (see CausalPairs)
	// MeanChunk is the mean chunk length in tokens: the kernel's efficiency
	// depends on it (prefillEfficiency).
	MeanChunk      int
	Heads, KVHeads int // per rank
	QKDim, VDim    int
	// KVBytes is the size of one K/V element read: the cache precision for
	// GQA (the prefix comes from the paged cache), 2 (bf16) for MLA, whose
	// k/v are up-projected activations.
	KVBytes float64
	// KV names the KV-cache dtype ("bf16", "fp8") for GQA, which a GQA
	// prefill table matches; "" for MLA.
	KV string
	// Window is the sliding window of the layer's keys (0: none; Keys and
	// Pairs are then window-capped) and MeanKV the mean uncapped keys of a
	// chunk (prefix + chunk): the keys of a calibration table's rows.
	Window, MeanKV int
	// Engine is the serving engine the step runs on ("vllm", "sglang"; ""
	// unknown): its own measured tables answer before another engine's
	// (Tables.Prefill). Costs.AttentionPrefill sets it from Costs.Engine.
	Engine string
	// OwnEngineOnly: another engine's table does not answer for Engine
	// (Costs.AttentionPrefill sets it where the engines are known to run
	// different kernels: vllmOwnMLAPrefill); the proxy does where none of
	// Engine's own tables covers the shape.
	OwnEngineOnly bool
	// TopK > 0 is DeepSeek Sparse Attention's selection: each query attends
	// at most TopK keys its indexer picks (Keys and Pairs are capped so).
	// The calibration tables measure dense causal attention and do not
	// answer such a shape.
	TopK int
}

// CausalPairs is the number of (query, key) pairs a chunk of q queries
// with c tokens before it attends causally, each query seeing at most
// window keys (window <= 0: unlimited):
//
//	sum_{i=1..q} min(c+i, window)
//
// (with window = 0: q·c + q(q+1)/2). Computed in closed form.
func CausalPairs(q, c, window int) float64 {
	if q <= 0 {
		return 0
	}
	Q, C := float64(q), float64(c)
	full := Q*C + Q*(Q+1)/2
	if window <= 0 || c+q <= window {
		return full
	}
	W := float64(window)
	if c >= window {
		return Q * W
	}
	// Queries i = 1..window-c see c+i keys, the rest window.
	n := W - C
	return n*C + n*(n+1)/2 + (Q-n)*W
}

// prefillFLOPs is 2·Pairs·Heads·(QKDim+VDim): QK^T and PV over the pairs
// attended (causal FLOPs, as FlashAttention-3's benchmarks count them).
func prefillFLOPs(s PrefillShape) unit.FLOPs {
	return unit.FLOPs(2 * s.Pairs * float64(s.Heads) * float64(s.QKDim+s.VDim))
}

// prefillBytes is the DRAM traffic when K/V tiles are read once per chunk
// (query tiles of a head share them through L2/shared memory):
// bf16 queries and outputs, Tokens·Heads·(QKDim+VDim)·2, plus
// Keys·KVHeads·(QKDim+VDim)·KVBytes.
func prefillBytes(s PrefillShape) unit.Bytes {
	q := float64(s.Tokens) * float64(s.Heads) * float64(s.QKDim+s.VDim) * 2
	kv := float64(s.Keys) * float64(s.KVHeads) * float64(s.QKDim+s.VDim) * s.KVBytes
	return unit.Bytes(q + kv)
}

// PrefillKernels: one varlen attention kernel per layer for all chunks
// (vLLM's MLA path over a cached prefix adds a second attention and a
// merge of softmax states: not counted, a few microseconds per layer).
const PrefillKernels = 1

// Prefill attention efficiency (fraction of the bf16 dense peak) by chunk
// length, from FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608,
// Fig. "Attention forward speed, head dim 128 (H100 80GB SXM5)", causal,
// bf16, batch·seqlen = 16k, 2048 hidden): 292, 423, 521, 579, 602, 616
// TFLOP/s at 512, 1k, 2k, 4k, 8k, 16k of 989. This is the kernel vLLM
// runs for prefill on sm_90 (FLASH_ATTN backend, FA3; MLA prefill too).
// Other architectures use the same paper's FlashAttention-2 column
// (191, 260, 298, 319, 333, 335): an unmeasured proxy for the
// mma.sync-class kernels that run there (FA2 on SM120; FlashInfer on
// sm_100), stated as such in the estimate's note.
//
// Checked against the engine's own rows (ai-dynamo/aiconfigurator @
// 095f58a, systems/data/<system>/attention/vllm/0.24.0/
// context_attention_perf.parquet, batch 1, no prefix, bf16 KV): H100 FA3,
// 64/4 and 32/4 heads at d128, reaches 98-156, 248-306, 412-416, 517-559,
// 619-643, 623-644 TFLOP/s at 512 .. 16k, the FA3 column within 5% from
// 2k on (below it at 512-1k, where one sequence fills few SMs). On B200
// vLLM's FlashInfer TRT-LLM prefill kernel reaches 535-713, 814-1001,
// 1097-1147, 1257-1302 TFLOP/s at 2k .. 16k (d128), 1.4-1.7x the FA2
// proxy there: sm_100 prefill attention is priced high by that much.
var (
	prefillEffLens = [...]float64{512, 1024, 2048, 4096, 8192, 16384}
	prefillEffFA3  = [...]float64{292 / 989.0, 423 / 989.0, 521 / 989.0, 579 / 989.0, 602 / 989.0, 616 / 989.0}
	prefillEffFA2  = [...]float64{191 / 989.0, 260 / 989.0, 298 / 989.0, 319 / 989.0, 333 / 989.0, 335 / 989.0}
)

const (
	notePrefillFA3 = "efficiency: FlashAttention-3 causal hdim-128 H100 forward (arXiv 2407.08608) at the mean chunk length"
	notePrefillFA2 = "efficiency: FlashAttention-2 causal hdim-128 H100 forward (arXiv 2407.08608) at the mean chunk length; unmeasured proxy on this architecture"
)

// prefillEfficiency is the fraction of the bf16 peak a causal prefill
// attention kernel reaches at a mean chunk length of n tokens on arch:
// piecewise linear in log2(n) through the points above, clamped at both
// ends (below 512 tokens the 512-token value: such chunks are short and
// their time is dominated by the fixed kernel cost and the GEMMs).
func prefillEfficiency(arch Arch, n int) float64 {
	t := &prefillEffFA2
	if arch.Facts().PrefillFA3 {
		t = &prefillEffFA3
	}
	return lerpLog2(prefillEffLens[:], t[:], float64(n))
}

// AttentionPrefill is the cost of the step's prefill attention on one rank,
// from a prefill calibration table where one covers the shape (Lookup
// Prefill), else the roofline:
//
//	t = max(PrefillBytes/(BW*Mem), PrefillFLOPs/(peak_bf16*PrefillEfficiency)) + StreamKernelLatency
//
// Zero when the shape has no tokens.
func (c *Costs) AttentionPrefill(s PrefillShape) cost.Estimate {
	if s.Tokens <= 0 || s.Heads <= 0 {
		return cost.Estimate{}
	}
	eff := prefillEfficiency(c.GPU.Arch, s.MeanChunk)
	e := c.roofline(op{
		bytes:      prefillBytes(s),
		flops:      prefillFLOPs(s),
		effMem:     c.eff().Mem,
		effCompute: eff,
		peak:       c.GPU.PeakFor(dtype.BF16),
		fixed:      PrefillKernels * StreamKernelLatency,
		kernels:    PrefillKernels,
		formula:    formulaRoofline,
	})
	e.Source.Note = notePrefillFA2
	if c.GPU.Arch.Facts().PrefillFA3 {
		e.Source.Note = notePrefillFA3
	}
	// One table kind (op prefill): the first that covers the shape
	// answers, and a calibration stack lists the user's own tables (calib
	// from-trace) before the embedded measured ones (calib.Select).
	if c.Tables != nil {
		if s.Engine == "" {
			s.Engine = c.Engine
		}
		s.OwnEngineOnly = s.OwnEngineOnly || (!c.AnyEngineMLAPrefill && vllmOwnMLAPrefill(c.GPU.Arch, s))
		if t, ok := c.Tables.Prefill(s); ok {
			return c.applyFloor(t, e, c.GPU.PeakFor(dtype.BF16))
		}
	}
	return e
}

// vllmOwnMLAPrefill reports whether an MLA prefill (no KV-cache dtype, KV
// "": MLA's up-projected k/v; q/k wider than v) of a
// vLLM step on arch is left to vLLM's own tables and the proxy: vLLM's MLA
// prefill runs FlashAttention (its default backend "on all hardware";
// FlashInfer, cuDNN and TRT-LLM ragged are its Blackwell data-centre
// alternatives: vllm/v1/attention/backends/mla/prefill/__init__.py), the
// kernel the FA2/FA3 proxy describes, so outside sm_90/sm_100/sm_103 another
// engine's measured MLA prefill is another kernel's time. The perf
// database's SGLang 0.5.14 MLA prefill on the RTX PRO 6000 (sm_120) reaches
// 11.6 TFLOPS at 8192 tokens and 8 heads, 6% of the card's bf16 peak: that
// engine's path on that card, not FlashAttention's. A GQA prefill with a
// narrower v (MiMo-V2: q/k 192, v 128) carries its KV cache's dtype and is
// not MLA. The vllm-own-mla-prefill mechanism (Costs.AnyEngineMLAPrefill)
// turns it off.
func vllmOwnMLAPrefill(arch Arch, s PrefillShape) bool {
	if s.Engine != "vllm" || s.KV != "" || s.QKDim <= s.VDim {
		return false
	}
	return arch != SM90 && arch != SM100 && arch != SM103
}
