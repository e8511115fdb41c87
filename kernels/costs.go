package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// Costs turns op shapes into cost.Estimates on one GPU. Its methods do not
// allocate: sim calls them a few hundred times per decode-step evaluation.
type Costs struct {
	GPU GPU
	// Eff is the efficiency set; the zero value means EfficiencyFor(GPU).
	Eff Efficiency
	// Graphs: kernels run inside a CUDA graph (per-kernel cost only) rather
	// than launched from the host (host launch cost per kernel).
	Graphs bool
	// Tables, when set, is consulted before the roofline.
	Tables Lookup
	// Engine is the serving engine ("vllm", "sglang"; "" unknown) whose own
	// measured tables answer first where several engines' do (the source
	// policy, source.go: every op's shape carries it to Tables).
	Engine string
	// HostLaunch is the host time per kernel an eager launch costs; 0
	// means HostLaunchLatency (EngineHostLaunch has the engines' own).
	HostLaunch unit.Seconds
	// AnyEngineMLAPrefill lets another engine's MLA prefill table answer a
	// vLLM step on every architecture (the vllm-own-mla-prefill mechanism
	// off: vllmOwnMLAPrefill is not applied).
	AnyEngineMLAPrefill bool
}

// hostLaunch is c's host time per eagerly launched kernel.
func (c *Costs) hostLaunch() unit.Seconds {
	if c.HostLaunch > 0 {
		return c.HostLaunch
	}
	return HostLaunchLatency
}

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
	// Prefill is the step's prefill attention on one rank (the chunks
	// against their prefixes).
	Prefill(s PrefillShape) (cost.Estimate, bool)
	// Elementwise is one small memory-bound kernel (norm, rotary, KV-cache
	// write, top-k, sampler pass) that moves b bytes.
	Elementwise(b unit.Bytes) (cost.Estimate, bool)
}

// Formulas named in Sources (static strings: building a Source never allocates).
const (
	formulaRoofline    = "max(bytes/(BW*eff_mem), flops/(peak*eff_compute)) + n_kernels*t_kernel"
	formulaElementwise = "bytes/(BW*eff_mem) + t_kernel"
	formulaLaunch      = "n_kernels*t_host_launch - op time (eager, no CUDA graph)"
	formulaGraph       = "inside a CUDA graph: per-kernel cost is in each op's t_kernel"
	noteFloor          = "table below the physical floor max(bytes/peak BW, flops/peak FLOPs); floor used"
)

// eff returns the efficiency set in use.
func (c *Costs) eff() Efficiency {
	if c.Eff.Mem == 0 {
		return EfficiencyFor(c.GPU)
	}
	return c.Eff
}

// op is the inputs of one roofline evaluation.
type op struct {
	bytes      unit.Bytes
	flops      unit.FLOPs
	effMem     float64
	effCompute float64
	peak       unit.FLOPsPerSecond
	// computeFLOPs is the FLOP count the compute side is timed with (padded
	// tiles); 0 means flops.
	computeFLOPs unit.FLOPs
	// fixed is the sum of per-kernel fixed costs; kernels the launch count.
	fixed   unit.Seconds
	kernels float64
	formula string
}

// roofline evaluates t = max(bytes/(BW*eff_mem), flops/(peak*eff_compute)) + fixed,
// with the spread of the bound side, and Lo never below bytes at peak DRAM
// bandwidth.
func (c *Costs) roofline(o op) cost.Estimate {
	tMem := unit.TransferTime(o.bytes, c.GPU.MemBW*unit.BytesPerSecond(o.effMem))
	cf := o.computeFLOPs
	if cf == 0 {
		cf = o.flops
	}
	var tComp unit.Seconds
	if cf > 0 {
		tComp = unit.ComputeTime(cf, o.peak*unit.FLOPsPerSecond(o.effCompute))
	}
	e := cost.Estimate{Bytes: o.bytes, FLOPs: o.flops, Kernels: o.kernels}
	e.Source = cost.Source{Kind: cost.Roofline, Formula: o.formula}
	body := tMem
	sp := MemorySpread
	e.Source.Bound = "memory"
	e.Source.Efficiency = o.effMem
	if tComp > tMem {
		body = tComp
		sp = ComputeSpread
		e.Source.Bound = "compute"
		e.Source.Efficiency = o.effCompute
	}
	if o.fixed > body {
		sp = LatencySpread
		e.Source.Bound = "latency"
	}
	e.Time = body + o.fixed
	e.Lo = body*unit.Seconds(sp.Lo) + o.fixed*unit.Seconds(LatencySpread.Lo)
	e.Hi = body*unit.Seconds(sp.Hi) + o.fixed*unit.Seconds(LatencySpread.Hi)
	if floor := unit.TransferTime(o.bytes, c.GPU.MemBW); e.Lo < floor {
		e.Lo = floor
	}
	return e
}

// physicalFloor is the least time an op of b bytes and f FLOPs can take on
// the GPU: max(b / peak DRAM bandwidth, f / peak). A floor is the hardware's
// limit, never a typical efficiency: a measured row faster than a floor
// that held an efficiency would be a sign the floor is wrong (issue 25).
// The bandwidth is the datasheet peak, not a measured copy bandwidth: a
// GEMV read on an H200 measured 4.5 TB/s where a device-to-device copy
// measured 4.23-4.28 TB/s (kernels/gpu.go, bench/moe-trace), so a copy
// bandwidth would refuse real read-bound kernels.
func (c *Costs) physicalFloor(b unit.Bytes, f unit.FLOPs, peak unit.FLOPsPerSecond) unit.Seconds {
	t := unit.TransferTime(b, c.GPU.MemBW)
	if peak > 0 && f > 0 {
		t = max(t, unit.ComputeTime(f, peak))
	}
	return t
}

// applyFloor returns the table estimate t, or the physical floor of the
// roofline estimate r's bytes and FLOPs (at peak, the op's compute peak)
// when t is faster (Source.Note says so). Bytes and FLOPs come from the
// roofline when the table has none.
func (c *Costs) applyFloor(t, r cost.Estimate, peak unit.FLOPsPerSecond) cost.Estimate {
	if t.Bytes == 0 {
		t.Bytes = r.Bytes
	}
	if t.FLOPs == 0 {
		t.FLOPs = r.FLOPs
	}
	if t.Kernels == 0 {
		t.Kernels = r.Kernels
	}
	floor := c.physicalFloor(r.Bytes, r.FLOPs, peak)
	if t.Time < floor {
		t.Time = floor
		t.Source.Note = noteFloor
		if t.Lo < floor {
			t.Lo = floor
		}
	}
	if t.Lo > t.Time {
		t.Lo = t.Time
	}
	if t.Hi < t.Time {
		t.Hi = t.Time
	}
	return t
}

// KernelOverhead is the host-side cost of one kernel launch that the op
// estimates do not include: 0 inside a CUDA graph (the graph's per-kernel
// cost is already in each op's t_kernel), HostLaunchLatency without one.
// Use LaunchCost to turn an op's launch count into the launch category.
func (c *Costs) KernelOverhead() cost.Estimate {
	if c.Graphs {
		return cost.Estimate{Source: cost.Source{Kind: cost.Fixed, Formula: formulaGraph}}
	}
	h := c.hostLaunch()
	note := "PyTorch eager tiny op 10.5 us on an H200 host (measure_h200.json)"
	if c.HostLaunch > 0 {
		note = "the engine's eager forward on its profiler trace (EngineHostLaunch)"
	}
	return cost.Estimate{
		Time: h, Lo: h * 0.5, Hi: h * 1.5,
		Kernels: 1,
		Source:  cost.Source{Kind: cost.Fixed, Formula: "t_host_launch per kernel", Note: note},
	}
}

// HostTime is the host time to launch op e's kernels eagerly: e.Kernels x
// the host time per kernel (HostLaunch, else HostLaunchLatency).
func (c *Costs) HostTime(e cost.Estimate) unit.Seconds {
	return c.hostLaunch() * unit.Seconds(e.Kernels)
}

// LaunchCost is the launch-category time an op adds without CUDA graphs:
// the host issues op.Kernels kernels at HostTime each, and the GPU
// waits for the host when that is longer than the op's own time:
// max(0, kernels*t_host_launch - op.Time). Zero with graphs.
func (c *Costs) LaunchCost(e cost.Estimate) cost.Estimate {
	out := cost.Estimate{Source: cost.Source{Kind: cost.Fixed, Formula: formulaLaunch}}
	if c.Graphs {
		out.Source.Formula = formulaGraph
		return out
	}
	if d := c.HostTime(e) - e.Time; d > 0 {
		out.Time = d
		out.Lo = d * unit.Seconds(LatencySpread.Lo)
		out.Hi = d * unit.Seconds(LatencySpread.Hi)
	}
	return out
}
