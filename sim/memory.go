package sim

import (
	"math"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
)

// Memory is the per-GPU memory picture at one point.
type Memory struct {
	Weights  unit.Bytes // per GPU (draft weights included with MTP / EAGLE-3)
	KV       unit.Bytes // per GPU for this batch and context
	Free     unit.Bytes // usable memory left after weights and KV (negative: does not fit)
	MaxBatch int        // largest batch that fits at this context
	// Reserve is the activation/workspace/communicator memory set aside:
	// the engine's profile run when Config.Profile is set
	// (profileReserve), else aiconfigurator's OtherReserve + ncclReserve; Usable = Memory x utilisation - Weights
	// - Reserve is what the KV cache may take.
	Reserve unit.Bytes
	// ReserveParts are Reserve's terms with their sources (shared between
	// points: read only).
	ReserveParts []ReservePart
	Usable       unit.Bytes
	// KVPerToken is the KV-cache bytes of one token on one GPU (MTP / draft
	// layers included), sliding-window layers counted at full size.
	KVPerToken unit.Bytes
	// KVWindowPerToken is the part of KVPerToken held by sliding-window
	// layers, which keep at most Window tokens per sequence (vLLM's hybrid
	// KV-cache manager frees the blocks that leave the window); zero
	// without such layers.
	KVWindowPerToken unit.Bytes
	Window           int
	// StatePerSeq is the recurrent state (linear attention, Mamba-2) one
	// sequence holds on one GPU whatever its length; zero without
	// recurrent layers.
	StatePerSeq unit.Bytes
}

// Memory reserves, from NVIDIA aiconfigurator @ 095f58a
// systems/{rtx_pro_6000_server,h100_sxm,h200_sxm,b200_sxm}.yaml, misc
// section (Apache-2.0; the same values in all four files):
//
//   - other_mem = 3,758,096,384 B (3.5 GiB) per GPU: activations, CUDA
//     graphs, the sampler's workspace and allocator slack ("increase from
//     551MB to 3.5GB for safer deployment, this will cover part of the
//     inaccurate mem calc");
//   - nccl_mem by GPU count: 1 -> 0, 2 -> 358,612,992 B (342 MiB),
//     4 and 8 -> 411,041,792 B (392 MiB); larger groups take the 8-GPU value.
const (
	OtherReserve unit.Bytes = 3758096384
	nccl2        unit.Bytes = 358612992
	nccl4plus    unit.Bytes = 411041792
)

// ncclReserve is aiconfigurator's nccl_mem for a number of GPUs.
func ncclReserve(gpus int) unit.Bytes {
	switch {
	case gpus <= 1:
		return 0
	case gpus <= 3:
		return nccl2
	}
	return nccl4plus
}

// memoryModel holds what the memory picture needs, fixed in New.
type memoryModel struct {
	weights    unit.Bytes
	reserve    unit.Bytes
	parts      []ReservePart
	usable     unit.Bytes
	kvPerToken unit.Bytes
	kvWindow   unit.Bytes // per-token bytes of the sliding-window layers (part of kvPerToken)
	window     int
	state      unit.Bytes // recurrent state per sequence
	groups     int        // attention groups: each holds the KV of ceil(B/groups) sequences
}

// newMemoryModel computes the per-GPU weights and KV per token:
//
//	weights = model.Weights(layout).PerGPUTotal(MTP loaded) + EAGLE-3 head / TP
//	KV/token/GPU = model.KVBytesPerTokenPerGPU (MLA latent replicated over
//	               attention-TP ranks; GQA kv heads split) + the draft
//	               layers' own cache (MTP layers, or the EAGLE-3 layer)
//	usable = GPU.EngineMemory x gpu_memory_utilization - weights - reserve
//
// (reserve 0 under a WeightsAndKV profile: SGLang's fraction).
func newMemoryModel(c *Config, sh shape) memoryModel {
	m := c.Model
	w := m.Weights(c.Layout)
	mm := memoryModel{groups: sh.groups}
	mm.weights = w.PerGPUTotal(c.Spec.Method == SpecMTP)
	kv := m.KVBytesPerTokenPerGPU(c.KVCache, c.Layout)
	_, mm.kvWindow, mm.window = m.KVSplitPerGPU(c.KVCache, c.Layout)
	mm.state = unit.Bytes(m.RecurrentStateBytesPerGPU(c.Layout))
	switch c.Spec.Method {
	case SpecMTP:
		// One more decoder layer's cache per MTP layer, of the model's
		// main attention (the indexer key cache of a DSA model counted
		// for it too).
		kv += m.MTPKVBytesPerTokenPerGPU(c.KVCache, c.Layout)
	case SpecEAGLE3:
		b := &builder{m: m, sh: sh}
		fc, qkv, o, mlp, lm := b.eagleLinears()
		for _, l := range append([]model.Linear{fc, qkv, o, lm}, mlp...) {
			tp := sh.tp
			if l.Split == model.QKVParallel || l.Name == o.Name {
				tp = sh.attnTP
			}
			in, out := l.ShardDims(tp)
			mm.weights += unit.Bytes(float64(in) * float64(out) * l.Format.BytesPerParam())
		}
		kv += unit.Bytes(2 * float64(max(1, eagleKVHeads/sh.attnTP)*eagleHeadDim) * c.KVCache.Bytes())
	}
	mm.kvPerToken = kv
	switch {
	case c.Profile.WeightsAndKV:
		mm.parts = outsideFraction()
	case c.Profile.Tokens > 0:
		mm.parts = c.profileReserve(sh)
	default:
		mm.parts = fixedReserve(c.GPUs)
	}
	for _, p := range mm.parts {
		mm.reserve += p.Bytes
	}
	mm.usable = unit.Bytes(float64(c.GPU.EngineMemory())*c.GPUMemoryUtilization) - mm.weights - mm.reserve
	return mm
}

// at is the memory picture at a batch and context: each GPU holds the KV of
// ceil(batch/groups) sequences of context tokens; the largest batch that
// fits is floor(usable / per-sequence bytes) sequences per group, a
// sequence holding context x (KV/token of the full layers) + min(context,
// window) x (KV/token of the sliding layers) + its recurrent state.
func (mm *memoryModel) at(batch, context int) (Memory, bool) {
	seqs := ceilDiv(batch, mm.groups)
	perSeq := float64(context)*float64(mm.kvPerToken-mm.kvWindow) + float64(capCtx(context, mm.window))*float64(mm.kvWindow) + float64(mm.state)
	mem := Memory{Weights: mm.weights, Reserve: mm.reserve, ReserveParts: mm.parts, Usable: mm.usable, KVPerToken: mm.kvPerToken,
		KVWindowPerToken: mm.kvWindow, Window: mm.window, StatePerSeq: mm.state}
	mem.KV = unit.Bytes(float64(seqs) * perSeq)
	mem.Free = mm.usable - mem.KV
	if mm.usable > 0 && perSeq > 0 {
		maxSeqs := math.Floor(float64(mm.usable) / perSeq)
		mem.MaxBatch = int(math.Min(maxSeqs*float64(mm.groups), math.MaxInt32))
	}
	return mem, mm.usable > 0 && mem.Free >= 0
}
