package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// RecurrentShape is the state-update kernel of a linear-attention (Gated
// DeltaNet, KDA) or Mamba-2 layer on one rank.
type RecurrentShape struct {
	Seqs   int // sequences whose state is read and written
	Tokens int // tokens the kernel runs (decode tokens, or prefill tokens)
	Heads  int // heads on this rank
	// KDim and VDim: the state of one head is KDim x VDim (Mamba-2:
	// ssm_state_size x mamba_head_dim).
	KDim, VDim int
	StateBytes int // element size of the state (4: fp32)
	// Chunk is the chunk length of the chunked (prefill) algorithm; 0 for
	// the per-token decode recurrence.
	Chunk int
	// GDN: a Gated DeltaNet layer (KDA and Mamba-2 are not), whose state
	// update a gdn table (table_gdn.go) prices where one covers it;
	// KHeads are its key heads on this rank (Heads: its value heads).
	GDN    bool
	KHeads int
	// Engine is the serving engine whose own gdn tables answer first.
	Engine string
	// Roofline: price by the roofline even where a gdn table covers the
	// shape (the gdn-table mechanism off).
	Roofline bool
}

// Formulas of the recurrent kernels (static strings).
const (
	formulaRecurrentDecode = "roofline: bytes = seqs x heads x K x V x state_bytes x 2 (state read + write) + tokens x heads x (2K+2V) x 2 B; " +
		"flops = tokens x heads x 4KV; eff (Mem, ComputeAttention)"
	formulaRecurrentPrefill = "roofline of the chunked algorithm (chunk C): flops = tokens x heads x 2(2CK + CV + 2KV); " +
		"bytes = tokens x heads x (2K+2V) x 2 B + (tokens/C + 2 seqs) x heads x K x V x 4 B; eff (Mem, ComputeAttention)"
)

// RecurrentDecode prices the per-token recurrence of decode steps
// (fused_recurrent_gated_delta_rule, selective_state_update): memory-bound
// on the state, which each sequence reads and writes once per step.
func (c *Costs) RecurrentDecode(s RecurrentShape) cost.Estimate {
	if t, ok := c.gdnTable(s); ok {
		return t
	}
	e := c.eff()
	h, k, v := float64(s.Heads), float64(s.KDim), float64(s.VDim)
	state := float64(s.Seqs) * h * k * v * float64(s.StateBytes) * 2
	act := float64(s.Tokens) * h * (2*k + 2*v) * 2
	return c.roofline(op{
		bytes:      unit.Bytes(state + act),
		flops:      unit.FLOPs(float64(s.Tokens) * h * 4 * k * v),
		effMem:     e.Mem,
		effCompute: e.ComputeAttention,
		peak:       c.GPU.PeakFor(dtype.BF16),
		fixed:      StreamKernelLatency,
		kernels:    1,
		formula:    formulaRecurrentDecode,
	})
}

// RecurrentPrefill prices the chunked algorithm over prefill tokens
// (chunk_gated_delta_rule, chunk_kda, mamba_chunk_scan_combined): per
// chunk of C tokens and head, the intra-chunk scores (C x C x K), their
// product with V (C x C x V), the WY/UT transform (C x C x K), the
// inter-chunk output (C x K x V) and the state update (K x C x V), run as
// tensor-core matmuls; the chunk states (fp32) are written and read once.
func (c *Costs) RecurrentPrefill(s RecurrentShape) cost.Estimate {
	if t, ok := c.gdnTable(s); ok {
		return t
	}
	e := c.eff()
	h, k, v := float64(s.Heads), float64(s.KDim), float64(s.VDim)
	ch := float64(max(s.Chunk, 1))
	t := float64(s.Tokens)
	flops := t * h * 2 * (2*ch*k + ch*v + 2*k*v)
	states := (t/ch + 2*float64(s.Seqs)) * h * k * v * 4
	return c.roofline(op{
		bytes:      unit.Bytes(t*h*(2*k+2*v)*2 + states),
		flops:      unit.FLOPs(flops),
		effMem:     e.Mem,
		effCompute: e.ComputeAttention,
		peak:       c.GPU.PeakFor(dtype.BF16),
		fixed:      4 * StreamKernelLatency,
		kernels:    4,
		formula:    formulaRecurrentPrefill,
	})
}

// gdnTable is a measured Gated DeltaNet state update, where c's tables
// cover s (Tables.GDN; the scenario's engine's own first) and s is not
// priced by the roofline alone.
func (c *Costs) gdnTable(s RecurrentShape) (cost.Estimate, bool) {
	if !s.GDN || s.Roofline || c.Tables == nil {
		return cost.Estimate{}, false
	}
	t, ok := c.Tables.(interface {
		GDN(RecurrentShape) (cost.Estimate, bool)
	})
	if !ok {
		return cost.Estimate{}, false
	}
	if s.Engine == "" {
		s.Engine = c.Engine
	}
	return t.GDN(s)
}
