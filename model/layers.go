package model

import "fmt"

// This file describes models whose decoder layers are not all alike:
// hybrids of softmax attention with linear attention (Gated DeltaNet, Kimi
// Delta Attention) or Mamba-2, models whose layers alternate local
// sliding-window and global attention with different head shapes, and
// models whose layers have different widths (DeciLM). Such a model lists
// its layer kinds in Config.Kinds; every other model leaves Kinds nil and
// LayerKinds derives its (at most two) kinds from the uniform fields.

// Mixer is what a decoder layer mixes tokens with.
type Mixer uint8

const (
	MixAttention Mixer = iota // softmax attention (LayerKind.Attn)
	MixGDN                    // Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5)
	MixKDA                    // Kimi Delta Attention (Kimi-Linear, Kimi-K3)
	MixMamba2                 // Mamba-2 SSD mixer (Nemotron-H)
	MixNone                   // no token mixer (DeciLM attention no_op)
)

func (m Mixer) String() string {
	switch m {
	case MixAttention:
		return "attention"
	case MixGDN:
		return "gated-deltanet"
	case MixKDA:
		return "kda"
	case MixMamba2:
		return "mamba2"
	case MixNone:
		return "none"
	}
	return "mixer?"
}

// Recurrent mixers keep a fixed-size state per sequence instead of a KV
// entry per token.
func (m Mixer) Recurrent() bool { return m == MixGDN || m == MixKDA || m == MixMamba2 }

// Recurrent holds the dimensions of a linear-attention or Mamba-2 mixer.
//
//	GDN:    KHeads key heads of KDim, Heads value heads of VDim (each value
//	        head shares a key head), a depthwise causal conv of Conv taps
//	        over q, k and v; state Heads x KDim x VDim per sequence.
//	KDA:    Heads heads of KDim = VDim for q, k and v; low-rank (VDim)
//	        decay and output gates; conv as GDN; state Heads x KDim x VDim.
//	Mamba2: Heads heads of VDim (mamba_head_dim), Groups groups of B and C
//	        of KDim (ssm_state_size), conv over the inner width and B, C;
//	        state Heads x VDim x KDim.
type Recurrent struct {
	Heads, KHeads int
	KDim, VDim    int
	Groups        int
	Conv          int
	// StateBytes is the element size of the recurrent state (fp32 when
	// the config sets mamba_ssm_cache_dtype / mamba_ssm_dtype float32,
	// else the checkpoint dtype); the conv state is in the checkpoint dtype.
	StateBytes int
	// GateRank is KDA's low-rank gate width (head_dim); 0 for the others.
	GateRank int
	// Chunk is the chunk length of the chunked prefill algorithm when the
	// config gives one (Mamba-2 chunk_size); 0: the kernel's default.
	Chunk int
}

// FFN is the feed-forward block of a layer kind.
type FFN uint8

const (
	FFNDense FFN = iota // SwiGLU (or the family's gated/ungated) MLP of width Inter
	FFNMoE              // the model's MoE block
	FFNNone             // none (DeciLM ffn no_op)
)

// LayerKind is a group of decoder layers that cost the same.
type LayerKind struct {
	Name  string // shown by `model show` and sim's explain ("sliding moe", "gdn moe", ...)
	Count int
	Mixer Mixer
	// Attn is the softmax attention of MixAttention layers.
	Attn Attention
	// SlideFrac is the fraction of this kind's layers that attend at most
	// Attn.SlidingWindow tokens (1 for a kind of sliding layers; gpt-oss
	// and Llama-4 keep their historical blend over uniform layers).
	SlideFrac float64
	Rec       Recurrent
	FFN       FFN
	// Inter is the dense MLP width (FFNDense).
	Inter int
	// UngatedMLP: the dense MLP is up -> act -> down without a gate
	// (Nemotron-H relu2), Hidden -> Inter -> Hidden.
	UngatedMLP bool
}

// LayerKinds lists the model's layer kinds: Config.Kinds when the importer
// set it, else one kind of dense layers and one of MoE layers (those that
// exist), both with Config.Attn.
func (c *Config) LayerKinds() []LayerKind {
	if c.Kinds != nil {
		return c.Kinds
	}
	frac := 0.0
	if c.Attn.SlidingWindow > 0 && c.Attn.SlidingLayers > 0 && c.Layers > 0 {
		frac = float64(c.Attn.SlidingLayers) / float64(c.Layers)
	}
	var ks []LayerKind
	if n := c.DenseLayerCount(); n > 0 {
		ks = append(ks, LayerKind{Name: "dense", Count: n, Attn: c.Attn, SlideFrac: frac, FFN: FFNDense, Inter: c.DenseInter})
	}
	if n := c.MoELayers(); n > 0 {
		ks = append(ks, LayerKind{Name: "moe", Count: n, Attn: c.Attn, SlideFrac: frac, FFN: FFNMoE})
	}
	return ks
}

// kindBuilder groups per-layer descriptions into Config.Kinds, in order of
// first appearance, and records each layer's kind.
type kindBuilder struct {
	kinds []LayerKind
	of    []int
}

// add appends layer len(of) of kind k (merged with an equal earlier kind;
// Count is ignored).
func (b *kindBuilder) add(k LayerKind) {
	k.Count = 0
	for i := range b.kinds {
		o := b.kinds[i]
		o.Count = 0
		if o == k {
			b.kinds[i].Count++
			b.of = append(b.of, i)
			return
		}
	}
	k.Count = 1
	b.kinds = append(b.kinds, k)
	b.of = append(b.of, len(b.kinds)-1)
}

// set stores the kinds in c.
func (b *kindBuilder) set(c *Config) {
	c.Kinds, c.KindOf = b.kinds, b.of
}

// kindAt returns layer i's kind when the model lists kinds.
func (c *Config) kindAt(i int) (LayerKind, bool) {
	if c.Kinds == nil || i < 0 || i >= len(c.KindOf) || c.KindOf[i] >= len(c.Kinds) {
		return LayerKind{}, false
	}
	return c.Kinds[c.KindOf[i]], true
}

// RecurrentStateBytes is the recurrent state of one sequence over all
// recurrent layers (whole model, unsplit): the SSM/delta-rule state
// (Heads x KDim x VDim at StateBytes) plus the conv state ((Conv-1) x conv
// width at the checkpoint's bytes).
func (c *Config) RecurrentStateBytes() float64 { return c.recurrentState(1) }

// RecurrentStateBytesPerGPU is RecurrentStateBytes on one rank of
// attention-TP degree tp: vLLM splits the heads (and the conv channels)
// over TP.
func (c *Config) RecurrentStateBytesPerGPU(l Layout) float64 {
	return c.recurrentState(l.AttentionTP())
}

func (c *Config) recurrentState(tp int) float64 {
	base := c.Quant.Base.BytesPerParam()
	s := 0.0
	for _, k := range c.LayerKinds() {
		if !k.Mixer.Recurrent() {
			continue
		}
		r := k.Rec
		heads := float64(ceilDiv(r.Heads, tp))
		state := heads * float64(r.KDim) * float64(r.VDim) * float64(r.StateBytes)
		conv := float64(max(r.Conv-1, 0)) * float64(ceilDiv(k.convWidth(), tp)) * base
		s += float64(k.Count) * (state + conv)
	}
	return s
}

// convWidth is the channels of a recurrent mixer's causal conv: q, k and v
// for GDN (KHeads·KDim twice plus Heads·VDim) and KDA (3·Heads·KDim); the
// inner width plus B and C for Mamba-2.
func (k *LayerKind) convWidth() int {
	r := k.Rec
	switch k.Mixer {
	case MixGDN:
		return 2*r.KHeads*r.KDim + r.Heads*r.VDim
	case MixKDA:
		return 3 * r.Heads * r.KDim
	case MixMamba2:
		return r.Heads*r.VDim + 2*r.Groups*r.KDim
	}
	return 0
}

// validateKinds checks Config.Kinds against Layers.
func (c *Config) validateKinds() error {
	if c.Kinds == nil {
		return nil
	}
	n := 0
	for _, k := range c.Kinds {
		if k.Count <= 0 {
			return fieldErr("num_hidden_layers", "layer kind %q has %d layers", k.Name, k.Count)
		}
		n += k.Count
		if k.Mixer.Recurrent() {
			r := k.Rec
			for _, v := range []int{r.Heads, r.KDim, r.VDim, r.StateBytes} {
				if v <= 0 || v > maxDim {
					return fieldErr("layer_types", "%s layers: dimensions %+v are not valid", k.Mixer, r)
				}
			}
			if r.Heads > maxHeads || r.KDim > maxHeadDim || r.VDim > maxHeadDim || r.Conv < 0 || r.Conv > 64 {
				return fieldErr("layer_types", "%s layers: dimensions %+v are implausible", k.Mixer, r)
			}
		}
		if k.Mixer == MixAttention && k.Attn.Kind == GQA {
			a := k.Attn
			if a.Heads <= 0 || a.KVHeads <= 0 || a.HeadDim <= 0 || a.Heads%a.KVHeads != 0 || a.Heads > maxHeads || a.HeadDim > maxHeadDim {
				return fieldErr("num_key_value_heads", "%s layers: %d heads, %d kv heads of %d is not valid", k.Name, a.Heads, a.KVHeads, a.HeadDim)
			}
		}
		if k.Mixer == MixAttention && k.SlideFrac > 0 && k.Attn.SlidingWindow != c.Window() {
			return fieldErr("sliding_window", "%s layers: window %d differs from the model's %d (one window per model)", k.Name, k.Attn.SlidingWindow, c.Window())
		}
		if k.FFN == FFNDense && (k.Inter <= 0 || k.Inter > maxInter) {
			return fieldErr("intermediate_size", "%s layers: dense width %d is not valid", k.Name, k.Inter)
		}
	}
	if n != c.Layers || len(c.KindOf) != c.Layers {
		return fieldErr("num_hidden_layers", "layer kinds cover %d layers, the model has %d", n, c.Layers)
	}
	return nil
}

// layerTypes reads a layer_types list of n entries with the names given
// (e.g. "sliding_attention", "full_attention"), returning each layer's
// index in names.
func layerTypes(d *doc, key string, types []string, n int, names ...string) ([]int, error) {
	if len(types) != n {
		return nil, d.keyErr(key, "has %d entries for %d layers", len(types), n)
	}
	out := make([]int, n)
	for i, t := range types {
		j := -1
		for k, nm := range names {
			if nm == t {
				j = k
			}
		}
		if j < 0 {
			return nil, d.keyErr(key, "entry %d: unknown layer type %q (want %s)", i, t, fmt.Sprint(names))
		}
		out[i] = j
	}
	return out, nil
}

// Window is the sliding window of the model's windowed layers (one size
// per model): Config.Attn's, or that of a sliding kind; 0 when none.
func (c *Config) Window() int {
	if c.Attn.SlidingWindow > 0 && c.Attn.SlidingLayers > 0 {
		return c.Attn.SlidingWindow
	}
	for _, k := range c.Kinds {
		if k.Mixer == MixAttention && (k.SlideFrac > 0 || k.Attn.Kind == DSV4) && k.Attn.SlidingWindow > 0 {
			return k.Attn.SlidingWindow
		}
	}
	return 0
}

// VDim is a GQA attention's value head dim: VHeadDim when set, else
// HeadDim.
func (a *Attention) VDim() int {
	if a.Kind == GQA && a.VHeadDim > 0 {
		return a.VHeadDim
	}
	return a.HeadDim
}
