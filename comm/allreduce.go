package comm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// Impl is the all-reduce implementation: the TOML key runtime.allreduce.
type Impl uint8

const (
	Auto    Impl = iota // what the engine picks for the fabric, rank count and size (Policy)
	NCCL                // NCCL ring/tree with LL/LL128/Simple
	OneShot             // custom all-reduce, one stage
	TwoShot             // custom all-reduce, reduce-scatter + all-gather
)

var implNames = [...]string{"auto", "nccl", "oneshot", "twoshot"}

func (i Impl) String() string {
	if int(i) < len(implNames) {
		return implNames[i]
	}
	return "impl(?)"
}

// ParseImpl maps an all-reduce implementation name (runtime.allreduce,
// the CLI) to an Impl; "" is Auto. It is the one parser of these names.
func ParseImpl(s string) (Impl, error) {
	if s == "" {
		return Auto, nil
	}
	for i, n := range implNames {
		if n == s {
			return Impl(i), nil
		}
	}
	return 0, fmt.Errorf("unknown all-reduce %q (want %s or %s)", s,
		strings.Join(implNames[:len(implNames)-1], ", "), implNames[len(implNames)-1])
}

// ImplNames lists the Impl names in order: auto, nccl, oneshot, twoshot.
func ImplNames() []string { return slices.Clone(implNames[:]) }

// TableImpls lists the implementations a collective table may name: the
// Impl names, and the serving engines' measured all-reduce entry points
// ("vllm", "sglang", "trtllm": each engine's custom all-reduce, which picks
// its kernel by size itself). A table naming another would never answer a
// query (Tables matches these strings exactly).
func TableImpls() []string {
	return []string{"nccl", "vllm", "sglang", "trtllm", "oneshot", "twoshot", "auto"}
}

// Comm costs collectives among ranks on one fabric. Its methods do not
// allocate.
type Comm struct {
	Fabric Fabric
	Graphs bool
	// Tables, when set, is consulted before the alpha-beta model.
	Tables Lookup
	// Policy is the serving engine's all-reduce policy (zero: vLLM's).
	Policy Policy
	// NIC joins the nodes of Fabric.NodeGPUs GPUs when ranks span more
	// than one (multinode.go); the zero Link prices every collective on
	// the fabric alone.
	NIC Link
}

// Lookup supplies measured collective costs from calibration tables
// (implemented by comm/table.go). Nil means alpha-beta only. Each method
// reports false when no table covers the query.
type Lookup interface {
	AllReduce(impl Impl, ranks int, b unit.Bytes) (cost.Estimate, bool)
	AllGather(ranks int, b unit.Bytes) (cost.Estimate, bool)
	ReduceScatter(ranks int, b unit.Bytes) (cost.Estimate, bool)
	AllToAll(ranks int, bytesPerRank unit.Bytes) (cost.Estimate, bool)
}

// exactAllReducer is a Lookup that can answer from a table of exactly one
// implementation (*Tables).
type exactAllReducer interface {
	AllReduceExact(impl Impl, ranks int, b unit.Bytes) (cost.Estimate, bool)
}

// vLLM custom all-reduce limits (csrc/custom_all_reduce.cuh,
// custom_all_reduce.py); Policy applies them (policy.go).
const (
	CustomARMaxSize    unit.Bytes = 8 * unit.MiB
	CustomARMaxRanks              = 8
	oneShotLimit4Ranks unit.Bytes = 512 * unit.KiB
	oneShotLimit8Ranks unit.Bytes = 256 * unit.KiB
)

// Custom all-reduce latencies.
const (
	// OneShotLatency is the one-shot latency of a fabric without its own
	// CustomARLatency: vLLM custom all-reduce, graph-captured, 8 KB on 8
	// H200 5.1 us, 8 H100 5.1 us, 2 RTX PRO 6000 4.5 us (ai-dynamo/aiconfigurator
	// @ 095f58a, aic-core/src/aiconfigurator_core/systems/data/<system>/
	// comm/vllm/0.24.0/custom_allreduce_perf).
	OneShotLatency unit.Seconds = 5 * unit.Microsecond
	// TwoShotExtraLatency: the two-stage kernel's second barrier; on 8 H200
	// at 1-4 MB it leaves 5.1-8.3 us after the bandwidth term, 1.5 us above
	// the one-shot latency at the middle.
	TwoShotExtraLatency unit.Seconds = 1.5 * unit.Microsecond
	// CustomAREagerFloor: without CUDA graphs the custom all-reduce copies
	// its input into the registered buffer and is host-bound; perfdb's
	// eager points at 8 KB are 20.1-21.8 us on H200, B200 and RTX PRO 6000.
	CustomAREagerFloor unit.Seconds = 20 * unit.Microsecond
)

// CommSpread is the stated interval of alpha-beta estimates. Against
// perfdb's nccl-tests and vLLM custom all-reduce points (sanity_test.go)
// the model lies within x0.75-x1.35 of the measurement at decode sizes
// (8 ranks, <= 64 KB) and within x0.45-x2.2 over all points 8 KB-4 MB on
// 2-8 ranks (worst: 2-4 PCIe ranks at 64 KB, B200 custom all-reduce at
// 1-4 MB).
var CommSpread = struct{ Lo, Hi float64 }{0.7, 1.5}

const (
	formulaOneShot = "custom all-reduce one-shot: t_custom + (n-1)*bytes/P2PBW"
	formulaTwoShot = "custom all-reduce two-shot: t_custom + t_2nd_barrier + 2(n-1)/n*bytes/P2PBW"
	formulaSingle  = "single rank: no communication"
	noteEager      = "eager custom all-reduce: host-bound floor (perfdb eager points)"
	noteNoP2P      = "custom all-reduce needs P2P; NCCL used"
	noteNotEngine  = "asked for, though stock %s runs another all-reduce here; no table of this kernel: its model"
)

// ChooseAllReduce is the implementation c's engine (c.Policy) uses for an
// all-reduce of b bytes over ranks on c's fabric; Policy.Choose says why.
func (c *Comm) ChooseAllReduce(ranks int, b unit.Bytes) Impl {
	impl, _ := c.Policy.decide(c.Fabric, ranks, b)
	return impl
}

// AllReduceAlgorithm names the algorithm AllReduce(impl, ranks, b) models
// (Auto resolved; for NCCL the ring/tree and protocol NCCL would pick).
func (c *Comm) AllReduceAlgorithm(impl Impl, ranks int, b unit.Bytes) string {
	return c.AllReduce(impl, ranks, b).Source.Formula
}

// AllReduce is the cost of an all-reduce of b bytes (the buffer each rank
// holds) over ranks. Auto resolves through ChooseAllReduce. Tables, when set,
// are asked first with the resolved implementation. Models:
//
//   - NCCL: ncclTime (see nccl.go), minimum over ring/tree x LL/LL128/Simple;
//   - one-shot: CustomARLatency + (n-1)*b/P2PBW (each rank reads every
//     peer's buffer);
//   - two-shot: CustomARLatency + TwoShotExtraLatency + 2(n-1)/n*b/P2PBW
//     (reduce-scatter then all-gather through peer memory).
//
// Without CUDA graphs a custom all-reduce costs at least CustomAREagerFloor.
// A custom implementation on a fabric without P2P falls back to NCCL.
// ranks <= 1 costs nothing. One kernel per call.
func (c *Comm) AllReduce(impl Impl, ranks int, b unit.Bytes) cost.Estimate {
	if ranks <= 1 {
		return single()
	}
	if m, ok := c.nodes(ranks); ok {
		return c.allReduceNodes(ranks, m, b)
	}
	if impl == Auto {
		impl = c.ChooseAllReduce(ranks, b)
	}
	note := ""
	if impl != NCCL && !c.Fabric.P2P {
		impl, note = NCCL, noteNoP2P
	}
	if c.Tables != nil {
		// A custom all-reduce the engine would not run here (vLLM's on
		// more than 2 PCIe-only GPUs, or two-shot where it runs one-shot)
		// is priced from a table of that kernel or by its model, never
		// from the engine's measured all-reduce, which measured the
		// engine's own choice (NCCL, or the other kernel).
		if impl == NCCL || c.ChooseAllReduce(ranks, b) == impl {
			if t, ok := c.engineAllReduce(impl, ranks, b); ok {
				return fromTable(t, b)
			}
		} else if ex, ok := c.Tables.(exactAllReducer); ok {
			if t, ok := ex.AllReduceExact(impl, ranks, b); ok {
				return fromTable(t, b)
			}
		}
	}
	if impl != NCCL && c.ChooseAllReduce(ranks, b) != impl && note == "" {
		note = fmt.Sprintf(noteNotEngine, c.Policy.row().title)
	}
	n := float64(ranks)
	lat := c.Fabric.CustomARLatency
	if lat == 0 {
		lat = OneShotLatency
	}
	var t unit.Seconds
	var formula string
	switch impl {
	case OneShot:
		t = lat + unit.TransferTime(b*unit.Bytes(n-1), c.Fabric.P2PBW)
		formula = formulaOneShot
	case TwoShot:
		t = lat + TwoShotExtraLatency + unit.TransferTime(b*unit.Bytes(2*(n-1)/n), c.Fabric.P2PBW)
		formula = formulaTwoShot
	default:
		t, formula = c.ncclTime(cost.AllReduce, ranks, b)
	}
	if impl != NCCL && !c.Graphs && t < CustomAREagerFloor {
		t, note = CustomAREagerFloor, noteEager
	}
	return alphaBeta(t, b*unit.Bytes(2*(n-1)/n), formula, note)
}

// policyAllReducer is a Lookup that can answer from the measured
// all-reduce entry point of c's engine (*Tables).
type policyAllReducer interface {
	AllReduceFor(p Policy, impl Impl, ranks int, b unit.Bytes) (cost.Estimate, bool)
}

// engineAllReduce asks c.Tables for impl as c's engine runs it: from the
// engine's own measured entry point where the tables know engines.
func (c *Comm) engineAllReduce(impl Impl, ranks int, b unit.Bytes) (cost.Estimate, bool) {
	if pa, ok := c.Tables.(policyAllReducer); ok {
		return pa.AllReduceFor(c.Policy, impl, ranks, b)
	}
	return c.Tables.AllReduce(impl, ranks, b)
}

// single is the zero cost of a collective on one rank.
func single() cost.Estimate {
	return cost.Estimate{Source: cost.Source{Kind: cost.Fixed, Formula: formulaSingle}}
}

// alphaBeta wraps a modelled time with CommSpread; wire is the bytes each
// rank sends.
func alphaBeta(t unit.Seconds, wire unit.Bytes, formula, note string) cost.Estimate {
	return cost.Estimate{
		Time: t, Lo: t * unit.Seconds(CommSpread.Lo), Hi: t * unit.Seconds(CommSpread.Hi),
		Bytes: wire, Kernels: 1,
		Source: cost.Source{Kind: cost.Roofline, Formula: formula, Bound: "latency+bandwidth", Note: note},
	}
}

// fromTable completes a table estimate (one kernel; bytes if missing).
func fromTable(t cost.Estimate, b unit.Bytes) cost.Estimate {
	if t.Kernels == 0 {
		t.Kernels = 1
	}
	if t.Bytes == 0 {
		t.Bytes = b
	}
	if t.Lo > t.Time {
		t.Lo = t.Time
	}
	if t.Hi < t.Time {
		t.Hi = t.Time
	}
	return t
}
