// CONTRACT SKETCH (to be replaced by the real implementation): the types and
// method signatures sim calls. Field sets may grow; names must not change.
package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// GPU is one accelerator's spec.
type GPU struct {
	Name   string // preset name, e.g. "h200-sxm"
	Label  string // marketing name, e.g. "NVIDIA H200 SXM 141GB"
	Arch   string // "sm_90", "sm_100", "sm_120"
	SMs    int
	Memory unit.Bytes          // usable device memory capacity
	MemBW  unit.BytesPerSecond // peak DRAM bandwidth
	L2     unit.Bytes
	// Peak dense tensor-core throughput indexed by dtype.Compute.
	Peak   [4]unit.FLOPsPerSecond
	Source string // where the figures come from
}

// Efficiency holds the per-op-class fractions of peak the roofline uses.
type Efficiency struct{}

// Costs turns op shapes into cost.Estimates on one GPU.
type Costs struct {
	GPU GPU
	Eff Efficiency
	// Graphs: kernels run inside a CUDA graph (per-kernel cost only) rather
	// than launched from the host (host launch cost per kernel).
	Graphs bool
	// Tables, when set, is consulted before the roofline.
	Tables Lookup
}

// GEMMShape is Y[M x N] = X[M x K] W[K x N] with W stored in Weight.
type GEMMShape struct {
	M, N, K int
	Weight  dtype.Format
	Count   int // identical GEMMs back to back (batched heads); 0 means 1
}

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
}

// MLAShape is MLA decode attention (absorbed form) on one rank.
type MLAShape struct {
	Batch, Context int
	Heads          int // query heads on this rank
	KVLoRARank     int
	QKRopeDim      int
	KV             dtype.KVCache
	TotalHeads     int // heads in the model (table key: tp = TotalHeads/Heads)
}

// GQAShape is GQA decode attention on one rank.
type GQAShape struct {
	Batch, Context int
	Heads, KVHeads int // on this rank
	HeadDim        int
	KV             dtype.KVCache
}

func (c *Costs) GEMM(s GEMMShape) cost.Estimate         { panic("unimplemented") }
func (c *Costs) MoE(s MoEShape) cost.Estimate           { panic("unimplemented") }
func (c *Costs) MLADecode(s MLAShape) cost.Estimate     { panic("unimplemented") }
func (c *Costs) GQADecode(s GQAShape) cost.Estimate     { panic("unimplemented") }
func (c *Costs) Elementwise(b unit.Bytes) cost.Estimate { panic("unimplemented") }
func (c *Costs) KernelOverhead() cost.Estimate          { panic("unimplemented") }
func LookupGPU(name string) (GPU, bool)                 { panic("unimplemented") }

// Lookup supplies measured op costs from calibration tables (implemented by
// the table types that calib builds; see kernels/table.go). A Costs with a
// nil Tables uses the roofline only. Each method reports false when no table
// covers the query, and the caller falls back to the roofline.
type Lookup interface {
	GEMM(s GEMMShape) (cost.Estimate, bool)
	// MoE is the whole MoE layer on one rank (routing glue + grouped GEMMs).
	MoE(s MoEShape) (cost.Estimate, bool)
	// MLAModule is the whole MLA decode module on one rank: projections
	// (q_a, q_b, kv_a, absorbed kv_b, o_proj) plus attention, as
	// aiconfigurator's mla_generation_module measures it.
	MLAModule(s MLAShape) (cost.Estimate, bool)
	GQA(s GQAShape) (cost.Estimate, bool)
}
