package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// GEMMShape is Y[M x N] = X[M x K] W[K x N] with W stored in Weight.
type GEMMShape struct {
	M, N, K int
	Weight  dtype.Format
	// Count identical GEMMs run as one batched kernel (torch.bmm over
	// heads, e.g. MLA's absorbed W_UK/W_UV); 0 means 1.
	Count int
	// Engine is the serving engine the step runs on ("vllm", "sglang"; ""
	// unknown): the source policy answers from its own measured tables
	// before another engine's (source.go). Costs sets it from Costs.Engine.
	Engine string
}

func (s GEMMShape) count() float64 {
	if s.Count <= 0 {
		return 1
	}
	return float64(s.Count)
}

// activationBytes is the size of one activation element a GEMM with
// weights in f reads: bf16 (2 B) for bf16 and weight-only formats; the
// quantized activation (the weight format's bytes per value, scales
// included) for fp8/int8/fp4 compute.
func activationBytes(f dtype.Format) float64 {
	if f.Compute == dtype.BF16 {
		return 2
	}
	return f.BytesPerParam()
}

// GEMMBytes is the DRAM traffic of s in bytes:
// Count * (K*N*B_w + M*K*B_act + M*N*2), where B_w = Weight.BytesPerParam()
// (group scales included), B_act = activationBytes, output bf16.
func GEMMBytes(s GEMMShape) unit.Bytes {
	m, n, k := float64(s.M), float64(s.N), float64(s.K)
	return unit.Bytes(s.count() * (k*n*s.Weight.BytesPerParam() + m*k*activationBytes(s.Weight) + m*n*2))
}

// GEMMFLOPs is 2*M*N*K*Count.
func GEMMFLOPs(s GEMMShape) unit.FLOPs {
	return unit.FLOPs(2 * float64(s.M) * float64(s.N) * float64(s.K) * s.count())
}

// gemmKernels: one GEMM kernel, plus one activation-quantization kernel
// when the GEMM computes in fp8/int8/fp4 (vLLM's per-token-group quant
// before a block-fp8 GEMM).
func gemmKernels(f dtype.Format) float64 {
	if f.Compute == dtype.BF16 {
		return 1
	}
	return 2
}

// GEMM is the cost of a dense GEMM (also lm_head, router, attention
// projections): the roofline
//
//	t = max(GEMMBytes/(BW*eff_mem), GEMMFLOPs/(peak(Weight.Compute)*eff_compute)) + t_kernel
//
// with eff = (Mem, ComputeGEMM) for bf16/fp8 weights (MemGEMMBatch for bf16
// above GEMMBatchRows rows where the architecture sets it) and (MemMarlin,
// ComputeMarlin) for weight-only formats (W4A16 Marlin: dequantizes to bf16,
// memory-bound up to M ~ 16-32 per IST-DASLab/marlin README @ 2f6d7c1
// and Frantar et al., arXiv 2408.11743). t_kernel is
// StreamKernelLatency; a GEMM computing on fp8/int8/fp4 activations takes
// eff_mem, eff_compute and t_kernel (its activation-quant kernel included)
// from the architecture's Efficiency.QuantGEMM, fitted on the engines' measured GEMM
// rows (DefaultQuantGEMM elsewhere: EffMem and StreamKernelLatency +
// SmallKernelLatency). With Tables set and covering s, the table's
// estimate is used, but never below GEMMBytes/(BW*eff_mem).
func (c *Costs) GEMM(s GEMMShape) cost.Estimate {
	r := c.gemmRoofline(s)
	if c.Tables != nil {
		if s.Engine == "" {
			s.Engine = c.Engine
		}
		if t, ok := c.Tables.GEMM(s); ok {
			return c.applyFloor(t, r, c.GPU.PeakFor(s.Weight.Compute))
		}
	}
	return r
}

// weightEffMem is the memory efficiency of streaming weights stored in f:
// MemMarlin for weight-only formats (Marlin kernels), Mem otherwise. GEMM
// and MoE both floor a table's estimate at the weights' read time at it.
func (c *Costs) weightEffMem(f dtype.Format) float64 {
	e := c.eff()
	if f.Quantized() {
		return e.MemMarlin
	}
	return e.Mem
}

func (c *Costs) gemmRoofline(s GEMMShape) cost.Estimate {
	e := c.eff()
	effMem, effComp := e.Mem, e.ComputeGEMM
	if s.Weight.Quantized() {
		effMem, effComp = e.MemMarlin, e.ComputeMarlin
	} else if s.Weight.Compute == dtype.BF16 && s.M > GEMMBatchRows && e.MemGEMMBatch > 0 {
		effMem = e.MemGEMMBatch
	}
	eng := s.Engine
	if eng == "" {
		eng = c.Engine
	}
	if !s.Weight.Quantized() && s.Weight.Compute == dtype.BF16 && eng == "vllm" && e.ComputeGEMMVLLM > 0 {
		effComp = e.ComputeGEMMVLLM
	}
	if !s.Weight.Quantized() && s.Weight.Compute == dtype.BF16 && e.ComputeGEMMBF16 > 0 {
		effComp = e.ComputeGEMMBF16
	}
	k := gemmKernels(s.Weight)
	fixed := StreamKernelLatency + unit.Seconds(k-1)*SmallKernelLatency
	if q, ok := e.QuantGEMM.For(s.Weight); ok && q.Mem > 0 {
		effMem, fixed = q.Mem, q.Fixed
		if q.Compute > 0 {
			effComp = q.Compute
		}
	}
	return c.roofline(op{
		bytes:      GEMMBytes(s),
		flops:      GEMMFLOPs(s),
		effMem:     effMem,
		effCompute: effComp,
		peak:       c.GPU.PeakFor(s.Weight.Compute),
		fixed:      fixed,
		kernels:    k,
		formula:    formulaRoofline,
	})
}
