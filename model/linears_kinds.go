package model

// Linears of the layer kinds (layers.go): the token mixer and the MLP of
// one layer of each kind, for the byte accounting and the cost model.

// MixerLinears lists one layer's token-mixer projections for kind k:
// AttentionLinears of k.Attn for softmax attention; for the recurrent
// mixers the projections vLLM builds (vllm-project/vllm @ 8744bb0,
// vllm/model_executor/models/qwen3_next.py Qwen3NextGatedDeltaNet,
// kimi_linear.py KimiDeltaAttention, layers/mamba/mamba_mixer2.py
// MambaMixer2):
//
//	GDN:    in_proj_qkvz Hidden -> 2·KHeads·KDim + 2·Heads·VDim (Column),
//	        in_proj_ba Hidden -> 2·Heads (Column), conv1d Conv -> conv
//	        width (Column, checkpoint dtype), out_proj Heads·VDim -> Hidden (Row)
//	KDA:    q/k/v_proj Hidden -> Heads·KDim each (Column), f_a/g_a Hidden
//	        -> GateRank (Replicated), f_b/g_b GateRank -> Heads·KDim
//	        (Column), b_proj Hidden -> Heads (Column), conv1d as GDN,
//	        o_proj Heads·VDim -> Hidden (Row)
//	Mamba2: in_proj Hidden -> 2·Heads·VDim + 2·Groups·KDim + Heads
//	        (Column), conv1d, out_proj Heads·VDim -> Hidden (Row)
//
// A projection the checkpoint stores in a format of its own
// (Quant.MixerLinear) takes that format; the others the attention class's.
// None for MixNone.
func (c *Config) MixerLinears(k *LayerKind) []Linear {
	f := c.Quant.Attention
	r := k.Rec
	lin := func(name string, in, out int, split Split) Linear {
		return Linear{Name: name, Class: ClassAttention, In: in, Out: out, Split: split, Format: f}
	}
	conv := Linear{Name: "conv1d", Class: ClassAttention, In: r.Conv, Out: k.convWidth(), Split: Column, Format: c.Quant.Base}
	switch k.Mixer {
	case MixAttention:
		return c.Quant.byLinear(c.attentionLinears(&k.Attn))
	case MixGDN:
		return c.Quant.byMixerLinear([]Linear{
			lin("in_proj_qkvz", c.Hidden, 2*r.KHeads*r.KDim+2*r.Heads*r.VDim, Column),
			lin("in_proj_ba", c.Hidden, 2*r.Heads, Column),
			conv,
			lin("out_proj", r.Heads*r.VDim, c.Hidden, Row),
		})
	case MixKDA:
		hd := r.Heads * r.KDim
		ls := []Linear{lin("qkv_proj", c.Hidden, 3*hd, Column)}
		if r.GateRank > 0 {
			ls = append(ls, lin("f_a_proj", c.Hidden, r.GateRank, Replicated), lin("f_b_proj", r.GateRank, hd, Column))
		} else {
			ls = append(ls, lin("f_proj", c.Hidden, hd, Column))
		}
		g := max(r.GateRank, r.KDim)
		return append(ls,
			lin("g_a_proj", c.Hidden, g, Replicated),
			lin("g_b_proj", g, hd, Column),
			lin("b_proj", c.Hidden, r.Heads, Column),
			conv,
			lin("o_proj", r.Heads*r.VDim, c.Hidden, Row),
		)
	case MixMamba2:
		inner := r.Heads * r.VDim
		return []Linear{
			lin("in_proj", c.Hidden, 2*inner+2*r.Groups*r.KDim+r.Heads, Column),
			conv,
			lin("out_proj", inner, c.Hidden, Row),
		}
	}
	return nil
}

// mixerNormParams counts a kind's small per-layer vectors of the mixer:
// attention's (see NormParamsPerLayer) or, for a recurrent mixer, A_log and
// dt_bias per head, the gated output norm (VDim; Mamba-2: the inner width)
// and Mamba-2's D per head.
func (c *Config) mixerNormParams(k *LayerKind) int {
	r := k.Rec
	switch k.Mixer {
	case MixAttention:
		return c.attnNormParams(&k.Attn) - 2*c.Hidden
	case MixGDN:
		return 2*r.Heads + r.VDim
	case MixKDA:
		return 2*r.Heads*r.KDim + r.VDim
	case MixMamba2:
		return 3*r.Heads + r.Heads*r.VDim
	}
	return 0
}

// KindNormParams is one layer's ClassNorm parameters for kind k: the
// mixer's vectors plus one norm of Hidden before each of mixer and FFN
// that the layer has.
func (c *Config) KindNormParams(k *LayerKind) int {
	n := c.mixerNormParams(k)
	if k.Mixer != MixNone {
		n += c.Hidden
	}
	if k.FFN != FFNNone {
		n += c.Hidden
	}
	return n
}

// FFNLinears lists one layer's dense MLP for kind k (nil for MoE and
// no-FFN kinds): SwiGLU of width k.Inter, or up/down without a gate.
func (c *Config) FFNLinears(k *LayerKind) []Linear {
	if k.FFN != FFNDense {
		return nil
	}
	if k.UngatedMLP {
		f := c.Quant.DenseMLP
		return []Linear{
			{Name: "up_proj", Class: ClassDenseMLP, In: c.Hidden, Out: k.Inter, Split: Column, Format: f},
			{Name: "down_proj", Class: ClassDenseMLP, In: k.Inter, Out: c.Hidden, Split: Row, Format: f},
		}
	}
	return c.mlp(ClassDenseMLP, k.Inter, c.Quant.DenseMLP, false)
}
