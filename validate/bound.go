package validate

import (
	"fmt"
	"math"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/sim"
)

// Physical lower bounds of a measured row: the fastest any engine could
// run the row's deployment, from the bytes every decode step must read
// from HBM and the FLOPs every prompt token must compute. A measured mean
// below its bound cannot be what the row's label says (the client did not
// hold the stated concurrency, or the row belongs to another setup): the
// scorer excludes it (ExcludeBelowBound).
//
// Decode step. On each GPU of a decode instance, every step reads at
// least
//
//	W = non-expert weights of the GPU's shard (model.Weights PerGPU:
//	    attention, dense MLP, shared expert, router, norms, lm_head; not
//	    the embedding, a row lookup, unless tied to lm_head; not the MTP
//	    layers)
//	  + top_k experts of ONE token, spread over the instance's GPUs:
//	    TopK/Experts x routed-expert bytes of the whole model / GPUs
//	    (the slowest rank reads at least the mean; no assumption that a
//	    batch routes to more experts than one token does)
//	  - the GPU's L2 (at most that much can stay on chip between steps)
//
// plus the KV cache of the sequences it decodes: b sequences per
// attention group (GPUs / attention-TP groups per instance), each of
// context c = ISL + OSL/2 (the mean over a request's decode), at
// model.KVSplitPerGPU bytes per token (the sliding-window layers' share
// at most the window) in the smallest KV element the engines offer on the
// GPU, whatever the scenario assumes (the row does not record it): fp8 (1
// byte), halved on a GPU with fp4 tensor cores (SGLang's fp4_e2m1 and
// TensorRT-LLM's NVFP4 KV caches on Blackwell). At the GPU's peak
// HBM bandwidth B (kernels.GPU.MemBW, the spec figure):
//
//	step(b) >= (W + b x c x KV) / B
//
// Mean TPOT. In a closed loop at concurrency C over n instances, a
// request spends TTFT before its first token and D = (OSL-1) x TPOT
// after it; by Little's law an instance holds on average
// L = C/n x D/(TTFT+D) requests past their first token (running or
// waiting: a request decodes only in a step that includes it). An
// instance emits at most b/step(b) tokens per second with b <= L(t),
// an increasing concave function of L(t), so its mean rate is at most
// L/step(L) (Jensen), and mean TPOT = L / rate >= step(L); with
// speculative decoding of k draft tokens a step emits at most k+1
// tokens per sequence:
//
//	TPOT >= (W + L x c x KV) / B / (k+1)
//
// TTFT. Each prompt token passes every linear layer but the embedding
// and lm_head (logits of the last token only): 2 x ISL x (active
// parameters - embedding - lm_head) FLOPs, on at most the prefill
// instance's GPUs at the GPU's highest dense tensor peak (any dtype):
//
//	TTFT >= 2 x ISL x P / (GPUs x max peak)
//
// Attention FLOPs, activations and communication are left out, so both
// bounds stay below what a real engine does.

// BoundInput is one measured row on its deployment.
type BoundInput struct {
	// Decode is the decode instance's configuration (the only instance's
	// when aggregated): model, GPU, layout, GPUs, speculative decoding
	// (its KV dtype is not used: the bound takes the smallest).
	Decode          sim.Config
	DecodeInstances int // 1 when aggregated
	PrefillGPUs     int // GPUs per prefill instance (Decode.GPUs when aggregated)
	// Concurrency is the closed loop's (all requests offered at once,
	// C in flight); 0 for any other load (no TPOT bound).
	Concurrency    int
	ISL, OSL       float64 // mean input and output tokens
	TTFTms, TPOTms float64 // measured means
}

// Bound is a row's lower bounds and their parts.
type Bound struct {
	TPOTms, TTFTms float64 // NaN where not computed
	// The decode step's parts: bytes per GPU of weights (W) and KV, the
	// mean requests past their first token per instance (L) and the
	// context (c).
	WeightBytes, KVBytes float64
	Decoding, Context    float64
}

// LowerBound computes the row's bounds; NaN for a bound whose inputs are
// missing (no concurrency, lengths, measured figures or GPU figures).
func LowerBound(in BoundInput) Bound {
	b := Bound{TPOTms: math.NaN(), TTFTms: math.NaN()}
	m, g, l, gpus := in.Decode.Model, in.Decode.GPU, in.Decode.Layout, in.Decode.GPUs
	if m == nil || !(float64(g.MemBW) > 0) || gpus <= 0 {
		return b
	}
	draft := 0
	if in.Decode.Spec.Active() {
		draft = in.Decode.Spec.DraftTokens
	}
	w := m.Weights(l)
	var nonExpert float64
	for cls, v := range w.PerGPU {
		switch model.Class(cls) {
		case model.ClassRoutedExperts, model.ClassMTP:
		case model.ClassEmbedding:
			if m.TieEmbeddings {
				nonExpert += float64(v)
			}
		default:
			nonExpert += float64(v)
		}
	}
	experts := 0.0
	if m.MoE.Experts > 0 {
		experts = float64(m.MoE.TopK) / float64(m.MoE.Experts) * float64(w.Total[model.ClassRoutedExperts]) / float64(gpus)
	}
	b.WeightBytes = math.Max(0, nonExpert+experts-float64(g.L2))

	if in.ISL > 0 && in.OSL > 1 && in.Concurrency > 0 && in.DecodeInstances > 0 && in.TPOTms > 0 && in.TTFTms > 0 {
		d := (in.OSL - 1) * in.TPOTms
		b.Decoding = float64(in.Concurrency) / float64(in.DecodeInstances) * d / (in.TTFTms + d)
		b.Context = in.ISL + in.OSL/2
		full, slide, window := m.KVSplitPerGPU(dtype.KVFP8, l)
		elt := 1.0 // of fp8's byte
		if g.Peak[dtype.FP4] > 0 {
			elt = 0.5
		}
		perSeq := float64(full) * b.Context
		if slide > 0 {
			c := b.Context
			if window > 0 {
				c = math.Min(c, float64(window))
			}
			perSeq += float64(slide) * c
		}
		groups := float64(gpus) / float64(l.AttentionTP())
		b.KVBytes = b.Decoding / math.Max(groups, 1) * perSeq * elt
		b.TPOTms = (b.WeightBytes + b.KVBytes) / float64(g.MemBW) / float64(draft+1) * 1e3
	}

	var peak float64
	for _, p := range g.Peak {
		peak = math.Max(peak, float64(p))
	}
	if in.ISL > 0 && in.PrefillGPUs > 0 && peak > 0 {
		p := m.Params()
		active := p.Active - p.PerClass[model.ClassEmbedding] - p.PerClass[model.ClassLMHead]
		b.TTFTms = 2 * in.ISL * active / (float64(in.PrefillGPUs) * peak) * 1e3
	}
	// Lengths, a concurrency or a measured mean no run can have (a
	// corrupt or hostile file) overflow: no bound then, rather than an
	// infinite one; such a row's lengths are refused where it is
	// simulated.
	if !finiteNum(b.TPOTms) || !finiteNum(b.KVBytes) || !finiteNum(b.Decoding) || !finiteNum(b.Context) {
		b.TPOTms, b.KVBytes, b.Decoding, b.Context = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	if !finiteNum(b.TTFTms) {
		b.TTFTms = math.NaN()
	}
	return b
}

// ExcludeBelowBound heads the reason of a row whose measured mean is
// below its physical lower bound (LowerBound).
const ExcludeBelowBound = "unreliable: below the physical lower bound"

// BelowBound is the exclusion reason of a row whose measured mean TPOT or
// TTFT is below its bound, with the figures; "" otherwise.
func BelowBound(in BoundInput, b Bound) string {
	switch {
	case in.TPOTms > 0 && in.TPOTms < b.TPOTms:
		return fmt.Sprintf("%s (mean TPOT %.3g ms < %.3g ms: every decode step reads %.3g GB of weights and %.3g GB of KV cache per GPU (%.3g requests decoding per instance, context %.0f) at %.3g TB/s peak)",
			ExcludeBelowBound, in.TPOTms, b.TPOTms, b.WeightBytes/1e9, b.KVBytes/1e9, b.Decoding, b.Context, float64(in.Decode.GPU.MemBW)/1e12)
	case in.TTFTms > 0 && in.TTFTms < b.TTFTms:
		return fmt.Sprintf("%s (mean TTFT %.3g ms < %.3g ms: the prompt's linear-layer FLOPs on %d GPUs at peak)",
			ExcludeBelowBound, in.TTFTms, b.TTFTms, in.PrefillGPUs)
	}
	return ""
}
