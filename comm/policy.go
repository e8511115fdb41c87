package comm

import (
	"fmt"

	"github.com/moecast/moecast/internal/unit"
)

// Policy is a serving engine's all-reduce policy: which implementation
// the engine runs for an all-reduce of a given size over a group of ranks
// on a fabric (what Auto resolves to), and which measured all-reduce entry
// point of a calibration table records the engine's own choice. The zero
// value is vLLM's. serve's engine table gives each engine its Policy; comm
// cannot import serve, so the engine travels as this value.
type Policy uint8

const (
	VLLMPolicy   Policy = iota // vLLM's custom all-reduce
	SGLangPolicy               // SGLang's custom all-reduce
)

// policyRow is one engine's custom all-reduce gate and kernel choice.
type policyRow struct {
	// table is the Table.Impl of the engine's measured all-reduce entry
	// point ("vllm", "sglang"); title names the engine in prose.
	table, title string
	// maxSize: the custom all-reduce runs below it; maxRanks: on at most
	// this many ranks, and only an even number of them.
	maxSize  unit.Bytes
	maxRanks int
}

// policies is the all-reduce policy table, indexed by Policy.
//
// vLLM: vllm-project/vllm csrc/custom_all_reduce.cuh and
// vllm/distributed/device_communicators/custom_all_reduce.py: world sizes
// 2, 4, 6, 8; inputs below 8 MiB; on more than 2 ranks only with full
// NVLink; P2P required; 2 ranks always the one-stage kernel, else one-stage
// below 512 KiB on <= 4 ranks or below 256 KiB on <= 8, two-stage above.
//
// SGLang: sgl-project/sglang
// python/sglang/srt/distributed/device_communicators/custom_all_reduce.py
// @ 004e6561cb8ae26d62166c15782955f99f058274 (CustomAllreduce:
// _SUPPORTED_WORLD_SIZES [2, 4, 6, 8], _MAX_CAR_SIZE 8192*1024 on CUDA,
// disabled beyond 2 PCIe-only GPUs and without P2P; should_custom_ar:
// size < max_size when world_size == 2 or full NVLink) and
// sgl-kernel/csrc/allreduce/custom_all_reduce.cuh @
// 0bb5d5e9fdb0c6ea031d3f8ac23444f8142d1f81 (allreduce: 2 ranks one-stage;
// full NVLink one-stage below 512 KiB on <= 4 ranks or 256 KiB on <= 8,
// two-stage above). The rule is vLLM's (SGLang's file is adapted from
// it); what differs is the engine's measured entry point ("sglang"
// tables), which parallel_state.py's GroupCoordinator.all_reduce @
// 0005973a84f7a02787e270b6be5970d3022d07fe reaches when no optional
// communicator (mscclpp, symmetric memory, FlashInfer fusion: all off by
// default) is enabled.
var policies = [...]policyRow{
	VLLMPolicy:   {table: "vllm", title: "vLLM", maxSize: CustomARMaxSize, maxRanks: CustomARMaxRanks},
	SGLangPolicy: {table: "sglang", title: "SGLang", maxSize: 8 * unit.MiB, maxRanks: 8},
}

func (p Policy) row() *policyRow {
	if int(p) < len(policies) {
		return &policies[p]
	}
	return &policies[VLLMPolicy]
}

func (p Policy) String() string { return p.row().table }

// Choice is the implementation an engine runs for one all-reduce and why.
type Choice struct {
	Impl   Impl
	Reason string
}

// Choose is the implementation the engine runs for an all-reduce of b
// bytes over ranks on fabric f: its custom one-shot/two-shot kernel where
// it enables its custom all-reduce, NCCL otherwise; Reason says which rule
// decided.
func (p Policy) Choose(f Fabric, ranks int, b unit.Bytes) Choice {
	r := p.row()
	impl, rule := p.decide(f, ranks, b)
	var why string
	switch rule {
	case ruleSingle:
		return Choice{impl, "single rank: no communication"}
	case ruleNoP2P:
		why = "no P2P between the GPUs"
	case ruleSize:
		why = fmt.Sprintf("%s at or above its custom all-reduce's %s limit", binary(b), binary(r.maxSize))
	case ruleRanks:
		why = fmt.Sprintf("its custom all-reduce runs on 2, 4, 6 or 8 GPUs, not %d", ranks)
	case ruleTwo:
		return Choice{impl, r.title + " custom all-reduce: one-shot, always on 2 GPUs"}
	case ruleNoNVLink:
		why = fmt.Sprintf("its custom all-reduce is off on more than 2 GPUs without NVLink (%d)", ranks)
	case ruleOne4:
		return Choice{impl, fmt.Sprintf("%s custom all-reduce: one-shot below %s on <= 4 GPUs", r.title, binary(oneShotLimit4Ranks))}
	case ruleOne8:
		return Choice{impl, fmt.Sprintf("%s custom all-reduce: one-shot below %s on <= 8 GPUs", r.title, binary(oneShotLimit8Ranks))}
	default:
		return Choice{impl, r.title + " custom all-reduce: two-shot above the one-shot limit"}
	}
	return Choice{impl, r.title + " uses NCCL: " + why}
}

// The rules of decide, in the order it applies them.
const (
	ruleSingle = iota
	ruleNoP2P
	ruleSize
	ruleRanks
	ruleTwo
	ruleNoNVLink
	ruleOne4
	ruleOne8
	ruleTwoShot
)

// decide is Choose without the reason's text (it does not allocate): the
// implementation and the rule that picked it.
func (p Policy) decide(f Fabric, ranks int, b unit.Bytes) (Impl, int) {
	r := p.row()
	switch {
	case ranks <= 1:
		return NCCL, ruleSingle
	case !f.P2P:
		return NCCL, ruleNoP2P
	case b >= r.maxSize:
		return NCCL, ruleSize
	case ranks > r.maxRanks || ranks%2 != 0:
		return NCCL, ruleRanks
	case ranks == 2:
		return OneShot, ruleTwo
	case !f.NVLink:
		return NCCL, ruleNoNVLink
	case ranks <= 4 && b < oneShotLimit4Ranks:
		return OneShot, ruleOne4
	case b < oneShotLimit8Ranks:
		return OneShot, ruleOne8
	}
	return TwoShot, ruleTwoShot
}

// Refusal says why a stock engine would never run the asked custom
// implementation impl (OneShot or TwoShot) on ranks GPUs of fabric f, at
// any size, and how moecast prices it then; "" when the engine runs impl
// there for some sizes (or impl is not a custom kernel, or ranks <= 1).
func (p Policy) Refusal(f Fabric, ranks int, impl Impl) string {
	r := p.row()
	if (impl != OneShot && impl != TwoShot) || ranks <= 1 {
		return ""
	}
	switch {
	case !f.P2P:
		return fmt.Sprintf("fabric %s has no P2P, so no custom all-reduce can run; NCCL is priced", f.Name)
	case ranks > r.maxRanks || ranks%2 != 0:
		return fmt.Sprintf("stock %s runs its custom all-reduce on 2, 4, 6 or 8 GPUs, not %d (it uses NCCL); priced as asked, from a table of that kernel or its model", r.title, ranks)
	case !f.NVLink && ranks > 2:
		return fmt.Sprintf("stock %s disables its custom all-reduce on more than 2 GPUs without NVLink (it uses NCCL on this %d-GPU %s group); priced as asked, for a patched engine, from a table of that kernel or its model, never from the engine's measured all-reduce",
			r.title, ranks, f.Name)
	case ranks == 2 && impl == TwoShot:
		return fmt.Sprintf("stock %s always runs the one-shot kernel on 2 GPUs; priced as asked, from a table of that kernel or its model", r.title)
	}
	return ""
}

// binary writes b in the engines' own units: "8 MiB", "512 KiB", "14336 B".
func binary(b unit.Bytes) string {
	switch {
	case b >= unit.MiB && b == unit.Bytes(int64(b/unit.MiB))*unit.MiB:
		return fmt.Sprintf("%d MiB", int64(b/unit.MiB))
	case b >= unit.KiB && b == unit.Bytes(int64(b/unit.KiB))*unit.KiB:
		return fmt.Sprintf("%d KiB", int64(b/unit.KiB))
	}
	return fmt.Sprintf("%g B", float64(b))
}
