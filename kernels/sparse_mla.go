package kernels

import (
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// Token-level sparse MLA attention as vLLM's FLASHMLA_SPARSE backend runs
// it for DeepSeek Sparse Attention layers (DeepSeek-V3.2, GLM-5) with a
// bf16 KV cache (vllm-project/vllm
// vllm/v1/attention/backends/mla/flashmla_sparse.py, FlashMLASparseImpl:
// _forward_bf16_kv sends every token of the step, decode and prefill, to
// flash_mla_sparse_fwd in MQA form, q of 576 = kv_lora + rope and v of 512
// = kv_lora, "the kernels want to use MQA 576/512 approach for both prefill
// and decode"; _bf16_flash_mla_kernel pads the per-rank q heads to a
// multiple of 64 on Hopper and 128 on Blackwell, "kernel requires
// num_local_head to be a multiple of 64 on hopper and 128 on blackwell").
//
// The Hopper kernel (deepseek-ai/FlashMLA csrc/sm90/prefill/sparse/fwd.cu
// @ e77c306) launches one CTA of 384 threads per (query token, 64-head
// group), one CTA per SM (__launch_bounds__(NUM_THREADS, 1, 1)), and loops
// over all params.topk / 64 blocks of the query's index list whether the
// indices are valid or not (invalid ones are masked to -inf, not skipped).
// So a query costs its padded heads x index_topk x (576 + 512) x 2 FLOPs
// whatever its context, and a step of few tokens fills few SMs.

// SparseMLAShape is one step's sparse MLA attention on one rank.
type SparseMLAShape struct {
	Tokens int // query tokens of the step (decode and prefill)
	Seqs   int // sequences those tokens belong to (each reads its own selected rows)
	Heads  int // q heads per rank before padding
	TopK   int // index_topk: the width of every query's index list
	QKDim  int // 576: kv_lora_rank + qk_rope_head_dim
	VDim   int // 512: kv_lora_rank
}

// SparseMLAHeadTile is the q-head multiple the sparse kernel needs on arch
// (vLLM's prefill_padding): 64 on sm_90, 128 on sm_100/sm_103, 0 where
// vLLM runs no FlashMLA sparse kernel.
func SparseMLAHeadTile(a Arch) int {
	switch a {
	case SM90:
		return 64
	case SM100, SM103:
		return 128
	}
	return 0
}

// EffSparseMLA is the FlashMLA sparse kernel's fraction of the dense bf16
// tensor peak per SM at full waves. sm_90: 0.619, the median over
// aiconfigurator's kernel-level H200 rows of flash_mla_sparse_fwd with
// GLM-5's dimensions at 2 to 125 full waves (256 to 16,384 query tokens,
// 64 heads; testdata/perfdb_flashmla_sparse_h200.csv, per-CTA FLOPs over
// (latency - StreamKernelLatency) / waves at 989.4/132 TFLOPS per SM;
// 0.599-0.638), an op-level measurement on the GPU of the rows that
// outranks FlashMLA's README figure for the H800, "up to 640 TFlops" of
// 989.4 (0.647). sm_100/sm_103: the README's "up to 1450 TFlops on B200"
// of 2250 TFLOPS dense bf16 (no kernel rows).
func EffSparseMLA(a Arch) float64 {
	switch a {
	case SM90:
		return EffSparseMLASM90
	case SM100, SM103:
		return 1450.0 / 2250
	}
	return 0
}

// EffSparseMLASM90 is EffSparseMLA on sm_90 (TestSparseMLAMeasured derives it).
const EffSparseMLASM90 = 0.619

// SparseMLAPaddedHeads is h rounded up to the arch's head tile.
func SparseMLAPaddedHeads(h int, a Arch) int {
	t := SparseMLAHeadTile(a)
	if t <= 0 || h <= 0 {
		return h
	}
	return (h + t - 1) / t * t
}

// SparseMLA prices s on one rank: each CTA computes tile heads x TopK x
// (QKDim + VDim) x 2 FLOPs at the SM's share of the bf16 peak times
// EffSparseMLA; the CTAs (Tokens x padded heads / tile) run in waves of one
// per SM:
//
//	t = ceil(CTAs / SMs) x FLOPs_CTA / (peak_bf16 / SMs x eff) + StreamKernelLatency
//
// floored by the roofline of its bytes: each sequence's TopK bf16 latent
// rows of QKDim from DRAM once (the queries of one sequence select from the
// same rows, which L2 serves after the first read: a 16k-token prefix is
// 19 MB of latent, under the H100/H200's 50 MB L2), the index lists (4 B
// per entry) and q in and out per padded head. Zero without tokens.
func (c *Costs) SparseMLA(s SparseMLAShape) cost.Estimate {
	tile := SparseMLAHeadTile(c.GPU.Arch)
	eff := EffSparseMLA(c.GPU.Arch)
	if s.Tokens <= 0 || s.Heads <= 0 || s.TopK <= 0 || tile <= 0 || eff <= 0 {
		return cost.Estimate{}
	}
	hp := SparseMLAPaddedHeads(s.Heads, c.GPU.Arch)
	perCTA := 2 * float64(tile) * float64(s.TopK) * float64(s.QKDim+s.VDim)
	ctas := float64(s.Tokens) * float64(hp/tile)
	sms := float64(c.GPU.SMs)
	if sms <= 0 {
		sms = 1
	}
	waves := math.Ceil(ctas / sms)
	peak := c.GPU.PeakFor(dtype.BF16)
	tComp := unit.ComputeTime(unit.FLOPs(waves*perCTA), peak/unit.FLOPsPerSecond(sms)*unit.FLOPsPerSecond(eff))
	bytes := unit.Bytes(float64(max(s.Seqs, 1))*float64(s.TopK)*float64(s.QKDim)*actBytesSparse +
		float64(s.Tokens)*float64(s.TopK)*4 +
		float64(s.Tokens)*float64(hp)*float64(s.QKDim+s.VDim)*actBytesSparse)
	tMem := unit.TransferTime(bytes, c.GPU.MemBW*unit.BytesPerSecond(c.eff().Mem))
	e := cost.Estimate{Bytes: bytes, FLOPs: unit.FLOPs(ctas * perCTA), Kernels: 1}
	e.Source = cost.Source{Kind: cost.Roofline, Formula: formulaSparseMLA, Efficiency: eff, Bound: "compute",
		Note: noteSparseMLA}
	body, sp := tComp, ComputeSpread
	if tMem > tComp {
		body, sp = tMem, MemorySpread
		e.Source.Bound, e.Source.Efficiency = "memory", c.eff().Mem
	}
	e.Time = body + StreamKernelLatency
	e.Lo = body*unit.Seconds(sp.Lo) + StreamKernelLatency*unit.Seconds(LatencySpread.Lo)
	e.Hi = body*unit.Seconds(sp.Hi) + StreamKernelLatency*unit.Seconds(LatencySpread.Hi)
	if floor := unit.TransferTime(bytes, c.GPU.MemBW); e.Lo < floor {
		e.Lo = floor
	}
	return e
}

const (
	actBytesSparse   = 2 // bf16 q, latent rows and output
	formulaSparseMLA = "ceil(CTAs/SMs) x FLOPs_CTA/(peak_bf16/SMs x eff) + t_kernel; CTA = 1 query x 64-head tile x index_topk keys"
	noteSparseMLA    = "FlashMLA sparse MQA (vLLM FLASHMLA_SPARSE, bf16 KV): q heads padded to the kernel's tile, every index_topk entry computed; eff: sm_90 the perf database's H200 kernel rows, Blackwell FlashMLA's README"
)
