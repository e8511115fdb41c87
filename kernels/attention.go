package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// MLAShape is MLA decode attention (absorbed form) on one rank.
type MLAShape struct {
	Batch, Context int
	Heads          int // query heads on this rank
	KVLoRARank     int
	QKRopeDim      int
	KV             dtype.KVCache
	TotalHeads     int // heads in the model (table key: tp = TotalHeads/Heads)
	// Model dims the MLA module's projections depend on; a calibration
	// table measured for other dims does not answer (0: not checked).
	Hidden, QLoRARank, QKNopeDim, VHeadDim int
	// Engine is the serving engine the step runs on ("vllm", "sglang"; ""
	// unknown): the source policy answers from its own measured tables
	// before another engine's (source.go). Costs sets it from Costs.Engine.
	Engine string
	// KeepCollectorBias answers from a legacy-collected MLA module table
	// as measured, its collector's excess kept (MLATable.LegacyCollector;
	// the mla-collector mechanism off).
	KeepCollectorBias bool
}

// GQAShape is GQA decode attention on one rank.
type GQAShape struct {
	Batch, Context int
	Heads, KVHeads int // on this rank
	HeadDim        int
	KV             dtype.KVCache
	// Engine is the serving engine the step runs on ("vllm", "sglang"; ""
	// unknown): the source policy answers from its own measured tables
	// before another engine's (source.go). Costs sets it from Costs.Engine.
	Engine string
}

// Kernel counts: MLA decode runs a split-KV stage and a combine stage
// (Triton MLA `_fwd_grouped_kernel_stage1`/`_fwd_kernel_stage2`, FlashMLA
// splitkv + combine, as they appear in traces; Triton names from
// vllm-project/vllm `vllm/v1/attention/ops/triton_decode_attention.py`);
// GQA decode likewise a split-KV
// attention kernel and its combine. Checked on an H200
// (testdata/measure_h200_attention.json, PyTorch SDPA, graph replay, KV
// rotated through 4x L2): the smallest decode shapes take 6.4-6.9 us
// (2 x StreamKernelLatency = 6 us), the largest stream the KV cache at
// 3.85-4.41 TB/s (0.80-0.92 of peak; EffMem 0.80). Mid-size shapes with
// one KV head are up to 1.4x slower than the model (too few KV heads to
// fill the GPU without split-KV).
const (
	MLAKernels = 2
	GQAKernels = 2
)

// mlaBytes is the KV latent read, Batch*Context*(KVLoRARank+QKRopeDim)*elt,
// plus the bf16 absorbed queries (Batch*Heads*(KVLoRARank+QKRopeDim)) and
// outputs (Batch*Heads*KVLoRARank).
func mlaBytes(s MLAShape) unit.Bytes {
	b, h, l, r := float64(s.Batch), float64(s.Heads), float64(s.KVLoRARank), float64(s.QKRopeDim)
	return unit.Bytes(b*float64(s.Context)*(l+r)*s.KV.Bytes() + 2*b*h*(l+r) + 2*b*h*l)
}

// MLAFLOPs is Batch*Heads*Context*(2*(KVLoRARank+QKRopeDim) + 2*KVLoRARank):
// per head and KV position, the score over the latent and rope parts and the
// weighted sum of the latent values.
func MLAFLOPs(s MLAShape) unit.FLOPs {
	return unit.FLOPs(mlaFLOPs(s, s.Heads))
}

func mlaFLOPs(s MLAShape, heads int) float64 {
	l, r := float64(s.KVLoRARank), float64(s.QKRopeDim)
	return float64(s.Batch) * float64(heads) * float64(s.Context) * (2*(l+r) + 2*l)
}

// MLADecode is the cost of MLA decode attention on one rank (the attention
// kernels only; the projections are GEMMs):
//
//	t = max(MLABytes/(BW*Mem), FLOPs_padded/(peak_bf16*ComputeAttention)) + 2*StreamKernelLatency
//
// where FLOPs_padded counts heads rounded up to MLAHeadPad (the kernel's
// head tile). Memory-bound at TP8 for 64-head models; compute-bound with
// many heads per GPU (DP attention) on GPUs with a weak decode kernel.
func (c *Costs) MLADecode(s MLAShape) cost.Estimate {
	e := c.eff()
	padded := s.Heads
	if p := e.MLAHeadPad; p > 1 && padded%p != 0 {
		padded += p - padded%p
	}
	return c.roofline(op{
		bytes:        mlaBytes(s),
		flops:        MLAFLOPs(s),
		computeFLOPs: unit.FLOPs(mlaFLOPs(s, padded)),
		effMem:       e.Mem,
		effCompute:   e.ComputeAttention,
		peak:         c.GPU.PeakFor(dtype.BF16),
		fixed:        MLAKernels * StreamKernelLatency,
		kernels:      MLAKernels,
		formula:      formulaRoofline,
	})
}

// MLAModule is the whole MLA decode module (the projections plus
// attention) from Tables.MLAModule, floored at the DRAM streaming time of
// the projections' and attention's bytes (MLADecode plus each GEMM of
// projections). It reports false when Tables is nil or does not cover s;
// the caller then adds MLADecode and the projection GEMMs itself.
func (c *Costs) MLAModule(s MLAShape, projections []GEMMShape) (cost.Estimate, bool) {
	if c.Tables == nil {
		return cost.Estimate{}, false
	}
	if s.Engine == "" {
		s.Engine = c.Engine
	}
	t, ok := c.Tables.MLAModule(s)
	if !ok {
		return cost.Estimate{}, false
	}
	r := c.MLADecode(s)
	for _, p := range projections {
		g := c.ProjRoof(p)
		r.Bytes += g.Bytes
		r.FLOPs += g.FLOPs
		r.Kernels += g.Kernels
	}
	return c.applyFloor(t, r, c.GPU.PeakFor(dtype.BF16)), true
}

// ProjRoof is what MLAModule's floor takes from one projection GEMM's
// roofline: its bytes, FLOPs and kernels.
type ProjRoof struct {
	Bytes   unit.Bytes
	FLOPs   unit.FLOPs
	Kernels float64
}

// ProjRoof is projection p's ProjRoof (its roofline's).
func (c *Costs) ProjRoof(p GEMMShape) ProjRoof {
	g := c.gemmRoofline(p)
	return ProjRoof{Bytes: g.Bytes, FLOPs: g.FLOPs, Kernels: g.Kernels}
}

// MLAModuleRoofs is MLAModule with its projections given by their
// ProjRoofs (in the same order): the same estimate, for a caller that
// prices the same projections at many contexts.
func (c *Costs) MLAModuleRoofs(s MLAShape, roofs []ProjRoof) (cost.Estimate, bool) {
	if c.Tables == nil {
		return cost.Estimate{}, false
	}
	if s.Engine == "" {
		s.Engine = c.Engine
	}
	t, ok := c.Tables.MLAModule(s)
	if !ok {
		return cost.Estimate{}, false
	}
	r := c.MLADecode(s)
	for _, g := range roofs {
		r.Bytes += g.Bytes
		r.FLOPs += g.FLOPs
		r.Kernels += g.Kernels
	}
	return c.applyFloor(t, r, c.GPU.PeakFor(dtype.BF16)), true
}

// gqaBytes is the KV read, Batch*Context*2*KVHeads*HeadDim*elt, plus bf16
// queries and outputs (2*Batch*Heads*HeadDim*2).
func gqaBytes(s GQAShape) unit.Bytes {
	b, d := float64(s.Batch), float64(s.HeadDim)
	return unit.Bytes(b*float64(s.Context)*2*float64(s.KVHeads)*d*s.KV.Bytes() + 4*b*float64(s.Heads)*d)
}

// gqaFLOPs is 4*Batch*Heads*Context*HeadDim (QK^T and PV).
func gqaFLOPs(s GQAShape) unit.FLOPs {
	return unit.FLOPs(4 * float64(s.Batch) * float64(s.Heads) * float64(s.Context) * float64(s.HeadDim))
}

// GQADecodeMixedFA2 is the cost of a step's decodes when they share one
// FlashAttention-2 varlen call with a prefill chunk (vLLM's FLASH_ATTN
// backend where FlashAttention-2 runs it): the kernel packs a KV head's
// query heads into one tile only when the call's longest query is one
// token (seqlenq_ngroups_swapped in FlashAttention-2's mha_varlen_fwd,
// Dao-AILab/flash-attention csrc/flash_attn/flash_api.cpp; commit not
// pinned: the rows behind GPU.FA2MixedRead are the evidence), so with a
// chunk beside them each decode's KV is read once per query head:
//
//	t = max(alone, Heads/KVHeads x KV bytes / GPU.FA2MixedRead + 2*StreamKernelLatency)
//
// alone is the decodes' cost in a decode-only step (GQADecode). A GPU
// without a measured FA2MixedRead, or a shape without GQA grouping, keeps
// alone.
func (c *Costs) GQADecodeMixedFA2(s GQAShape, alone cost.Estimate) cost.Estimate {
	r := c.GPU.FA2MixedRead
	if r <= 0 || s.KVHeads <= 0 || s.Heads <= s.KVHeads || s.Batch <= 0 {
		return alone
	}
	kv := float64(s.Batch) * float64(s.Context) * 2 * float64(s.KVHeads) * float64(s.HeadDim) * s.KV.Bytes()
	reads := unit.Bytes(float64(s.Heads) / float64(s.KVHeads) * kv)
	body := unit.TransferTime(reads, r)
	fixed := GQAKernels * StreamKernelLatency
	if body+fixed <= alone.Time {
		return alone
	}
	e := alone
	e.Time = body + fixed
	e.Lo = body*unit.Seconds(MemorySpread.Lo) + fixed*unit.Seconds(LatencySpread.Lo)
	e.Hi = body*unit.Seconds(MemorySpread.Hi) + fixed*unit.Seconds(LatencySpread.Hi)
	e.Source = cost.Source{Kind: cost.Roofline, Bound: "memory",
		Formula: "FlashAttention-2 varlen beside a prefill chunk: q_heads/kv_heads x KV bytes / the GPU's measured re-read rate + t_kernel"}
	return e
}

// GQADecode is the cost of GQA decode attention on one rank:
//
//	t = max(GQABytes/(BW*Mem), GQAFLOPs/(peak_bf16*ComputeAttention)) + 2*StreamKernelLatency
//
// With Tables set and covering s, the table's estimate floored at
// gqaBytes/(BW*Mem).
func (c *Costs) GQADecode(s GQAShape) cost.Estimate {
	e := c.eff()
	r := c.roofline(op{
		bytes:      gqaBytes(s),
		flops:      gqaFLOPs(s),
		effMem:     e.Mem,
		effCompute: e.ComputeAttention,
		peak:       c.GPU.PeakFor(dtype.BF16),
		fixed:      GQAKernels * StreamKernelLatency,
		kernels:    GQAKernels,
		formula:    formulaRoofline,
	})
	if c.Tables != nil {
		if s.Engine == "" {
			s.Engine = c.Engine
		}
		if t, ok := c.Tables.GQA(s); ok {
			return c.applyFloor(t, r, c.GPU.PeakFor(dtype.BF16))
		}
	}
	return r
}
