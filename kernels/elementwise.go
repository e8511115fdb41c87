package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// Elementwise is the cost of one memory-bound elementwise kernel that moves
// b bytes (reads plus writes): t = b/(BW*MemElementwise) + SmallKernelLatency.
// Use the *Bytes helpers below for the usual decode kernels. With Tables
// set and an elementwise table covering b (op "elementwise" in a
// calibration file: latency per kernel by bytes moved), the table answers,
// floored at the DRAM streaming time b/(BW*MemElementwise).
func (c *Costs) Elementwise(b unit.Bytes) cost.Estimate {
	eff := c.eff().MemElementwise
	r := c.roofline(op{
		bytes:   b,
		effMem:  eff,
		fixed:   SmallKernelLatency,
		kernels: 1,
		formula: formulaElementwise,
	})
	if c.Tables != nil {
		if t, ok := c.Tables.Elementwise(b); ok {
			return c.applyFloor(t, r, 0)
		}
	}
	return r
}

// Byte counts of the usual decode elementwise kernels, bf16 activations
// (2 B per element).

// RMSNormBytes: read and write tokens x width, read the weight.
func RMSNormBytes(tokens, width int) unit.Bytes {
	return unit.Bytes(2 * (2*float64(tokens)*float64(width) + float64(width)))
}

// fusedAddRMSNormBytes (vLLM fused_add_rms_norm): read x and the residual,
// write both, read the weight.
func fusedAddRMSNormBytes(tokens, width int) unit.Bytes {
	return unit.Bytes(2 * (4*float64(tokens)*float64(width) + float64(width)))
}

// rotaryBytes: read and write tokens x width rotated elements (q and k
// parts together), read a cos/sin row of rotDim per token.
func rotaryBytes(tokens, width, rotDim int) unit.Bytes {
	return unit.Bytes(2*2*float64(tokens)*float64(width) + 2*float64(tokens)*float64(rotDim))
}

// ActivationBytes (silu_and_mul): read 2*inter, write inter per token.
func ActivationBytes(tokens, inter int) unit.Bytes {
	return unit.Bytes(2 * 3 * float64(tokens) * float64(inter))
}

// ResidualAddBytes: read two tokens x width tensors, write one.
func ResidualAddBytes(tokens, width int) unit.Bytes {
	return unit.Bytes(2 * 3 * float64(tokens) * float64(width))
}

// kvWriteBytes (reshape_and_cache / concat_and_cache_mla): read elems bf16
// values per token and write them at the cache precision.
func kvWriteBytes(tokens, elems int, kv dtype.KVCache) unit.Bytes {
	return unit.Bytes(float64(tokens) * float64(elems) * (2 + kv.Bytes()))
}

// RouterShape is the MoE router on one rank: a GEMM of tokens x Hidden by
// Hidden x Experts (bf16 weights, replicated) and a top-k selection.
type RouterShape struct {
	Tokens, Hidden, Experts, TopK int
}

// RouterKernels: the router GEMM and one top-k kernel (topk_softmax or
// grouped_topk; vLLM may fuse grouped_topk into one Triton kernel).
const RouterKernels = 2

// TopKBytes: read fp32 scores tokens x experts, write top-k ids and
// weights (4 B each).
func TopKBytes(tokens, experts, k int) unit.Bytes {
	return unit.Bytes(4*float64(tokens)*float64(experts) + 8*float64(tokens)*float64(k))
}

// Router is the router GEMM (Tokens x Hidden x Experts, bf16) plus the top-k
// kernel as an elementwise kernel over TopKBytes.
func (c *Costs) Router(s RouterShape) cost.Estimate {
	g := c.GEMM(GEMMShape{M: s.Tokens, N: s.Experts, K: s.Hidden, Weight: dtype.BF16Weights})
	return add(g, c.Elementwise(TopKBytes(s.Tokens, s.Experts, s.TopK)))
}

// SamplingShape is the sampler over the logits of Batch rows.
type SamplingShape struct {
	Batch, Vocab int
	// Greedy: argmax only (one pass over the fp32 logits). Otherwise
	// temperature, softmax, top-k/top-p filter and the draw: SamplingPasses
	// passes (a sort-free FlashInfer-style sampler; a sort-based top-p costs
	// more).
	Greedy bool
}

// SamplingPasses is the number of fp32 passes over the logits (one kernel
// each) of a non-greedy sampler: temperature, softmax, top-k/top-p, draw.
const SamplingPasses = 4

// SamplingBytes is passes * Batch*Vocab*4 bytes (fp32 logits).
func SamplingBytes(s SamplingShape) unit.Bytes {
	p := float64(SamplingPasses)
	if s.Greedy {
		p = 1
	}
	return unit.Bytes(p * 4 * float64(s.Batch) * float64(s.Vocab))
}

// Sampling is a bytes-based estimate: each pass is an elementwise kernel over
// Batch*Vocab fp32 logits.
func (c *Costs) Sampling(s SamplingShape) cost.Estimate {
	one := c.Elementwise(unit.Bytes(4 * float64(s.Batch) * float64(s.Vocab)))
	if s.Greedy {
		return one
	}
	return one.Scale(SamplingPasses)
}

// add sums two estimates of kernels that run one after the other: times,
// intervals, bytes, FLOPs and kernels add; the source is the longer one's.
func add(a, b cost.Estimate) cost.Estimate {
	src := a.Source
	if b.Time > a.Time {
		src = b.Source
	}
	return cost.Estimate{
		Time: a.Time + b.Time, Lo: a.Lo + b.Lo, Hi: a.Hi + b.Hi,
		Bytes: a.Bytes + b.Bytes, FLOPs: a.FLOPs + b.FLOPs, Kernels: a.Kernels + b.Kernels,
		Source: src,
	}
}
