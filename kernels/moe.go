package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// MoEShape is a grouped MoE layer (gate_up GEMM, activation, down GEMM and
// routing glue) on one rank.
type MoEShape struct {
	Tokens         int     // tokens entering the layer on this rank
	Pairs          float64 // token-expert pairs this rank computes (most-loaded rank)
	ExpertsTouched float64 // expected distinct experts this rank reads
	Hidden         int
	Inter          int // per-expert FFN width on this rank (after expert-TP split)
	Weight         dtype.Format
	// Table keys (aiconfigurator moe_perf columns).
	GlobalTokens int // tokens entering the MoE layer across the DP group (num_tokens)
	Experts      int // routed experts in the model
	TopK         int
	MoETP        int // expert tensor-parallel degree (moe_tp_size)
	EP           int // expert-parallel degree (moe_ep_size)
	// DeepEP is true when the tokens reach the experts' ranks by an
	// expert-parallel dispatch (DeepEP normal or low-latency): each rank
	// computes only the pairs routed to its experts, not every token of
	// the DP group behind an expert map (MoETable.Lookup).
	DeepEP bool
	// Engine is the serving engine the step runs on ("vllm", "sglang"; ""
	// unknown): the source policy answers from its own measured tables
	// before another engine's (source.go). Costs sets it from Costs.Engine.
	Engine string
	// Routing is the skewed routing distribution of the perf database the
	// layer is priced with where the chosen table has rows of it
	// ("power_law_1.01", "power_law_1.2": PerfDBRouting); "" prices
	// uniform random routing (balanced rows remapped, MoETable.Lookup).
	// Not used with DeepEP (the dispatched split reads balanced rows).
	Routing string
}

// MoE kernel counts (vLLM fused MoE, kernel names as vLLM 0.28 traces show
// them, e.g. vllm::moe::moe_align_block_size_kernel): moe_align_block_size
// (align/sort), gate_up grouped GEMM, silu_and_mul, down grouped GEMM,
// moe_sum. fp8/int8/fp4-compute experts add an activation-quant kernel
// before each grouped GEMM. The router GEMM and top-k are costed by Router.
const (
	MoEKernels          = 5
	MoEKernelsQuantized = 7
)

// MoEWeightBytes is the expert weights this rank streams:
// ExpertsTouched * 3*Hidden*Inter * Weight.BytesPerParam().
func MoEWeightBytes(s MoEShape) unit.Bytes {
	return unit.Bytes(s.ExpertsTouched * 3 * float64(s.Hidden) * float64(s.Inter) * s.Weight.BytesPerParam())
}

// MoEBytes is MoEWeightBytes plus bf16 activation traffic: the layer input
// and output (2*Tokens*Hidden), and per pair the gate_up output written and
// read (2*2*Inter), the activation output written and read (2*Inter) and the
// down output written and read by moe_sum (2*Hidden), 2 bytes each.
func MoEBytes(s MoEShape) unit.Bytes {
	act := 2 * (2*float64(s.Tokens)*float64(s.Hidden) + s.Pairs*(4*float64(s.Inter)+2*float64(s.Inter)+2*float64(s.Hidden)))
	return MoEWeightBytes(s) + unit.Bytes(act)
}

// MoEFLOPs is 2*Pairs*3*Hidden*Inter (gate, up and down projections).
func MoEFLOPs(s MoEShape) unit.FLOPs {
	return unit.FLOPs(2 * s.Pairs * 3 * float64(s.Hidden) * float64(s.Inter))
}

// MoE is the cost of one MoE layer's routed experts on one rank:
//
//	t = max(MoEBytes/(BW*eff_mem), MoEFLOPs/(peak*eff_compute))
//	    + 2*StreamKernelLatency + (n_kernels-2)*SmallKernelLatency [+ MoEFixedMarlin]
//
// with (MemMarlin, ComputeMarlin) at the bf16 peak for weight-only formats
// (vLLM fused_marlin_moe, plus its fixed MoEFixedMarlin) and (Mem,
// ComputeMoE·MoEWidthFactor(Inter)) at the format's compute peak
// otherwise; n_kernels = MoEKernels or MoEKernelsQuantized. The weights read
// are those of the experts this rank touches, so the cost falls with fewer
// distinct experts at small batch. With Tables set and covering s, the
// table's estimate is used, but never below MoEBytes/(BW*eff_mem): a table
// point replayed from a CUDA graph with the weights resident in L2 is
// faster than inside a real step (the MoE rows of ai-dynamo/aiconfigurator
// @ 095f58a, aic-core/src/aiconfigurator_core/systems/data/<system>/moe/,
// replay one layer from a CUDA graph with no cache flush). vLLM's Marlin
// MoE on MXFP4 weights (dtype.MXFP4Marlin) on sm_90 replaces the roofline
// by its own fit (marlinMXFP4, moe_marlin.go).
func (c *Costs) MoE(s MoEShape) cost.Estimate {
	r := c.moeRoofline(s)
	if c.Tables != nil {
		if s.Engine == "" {
			s.Engine = c.Engine
		}
		if t, ok := c.Tables.MoE(s); ok {
			return c.applyFloor(t, r, c.GPU.PeakFor(s.Weight.Compute))
		}
	}
	return r
}

func (c *Costs) moeRoofline(s MoEShape) cost.Estimate {
	if e, ok := c.marlinMXFP4(s); ok { // vLLM's Marlin on MXFP4 (moe_marlin.go)
		return e
	}
	e := c.eff()
	effMem, effComp := e.Mem, e.ComputeMoE
	n := float64(MoEKernels)
	fixed := 2*StreamKernelLatency + unit.Seconds(n-2)*SmallKernelLatency
	if s.Weight.Quantized() {
		effMem, effComp = e.MemMarlin, e.ComputeMarlin
		fixed += e.MoEFixedMarlin
	} else {
		effComp *= MoEWidthFactor(s.Inter) // narrow experts (moe_width.go)
	}
	if s.Weight.Compute != dtype.BF16 {
		n = MoEKernelsQuantized
		fixed = 2*StreamKernelLatency + unit.Seconds(n-2)*SmallKernelLatency
	}
	return c.roofline(op{
		bytes:      MoEBytes(s),
		flops:      MoEFLOPs(s),
		effMem:     effMem,
		effCompute: effComp,
		peak:       c.GPU.PeakFor(s.Weight.Compute),
		fixed:      fixed,
		kernels:    n,
		formula:    formulaRoofline,
	})
}
