package model

// This file lists the weight matrices of each layer kind: the single source
// of truth for both the byte accounting (weights.go) and the cost model (sim
// turns each Linear into a GEMM). Names follow vLLM's module names.

import "github.com/moecast/moecast/internal/dtype"

var classNames = [NumClasses]string{
	"routed_experts", "shared_expert", "attention", "dense_mlp", "embedding",
	"lm_head", "router", "norm", "mtp",
}

func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return "class?"
}

// vocabPadding is vLLM's DEFAULT_VOCAB_PADDING_SIZE: VocabParallelEmbedding
// and ParallelLMHead pad the vocabulary to a multiple of 64 rows before
// splitting it over TP.
const vocabPadding = 64

func ceilDiv(a, b int) int {
	if b <= 1 {
		return a
	}
	return (a + b - 1) / b
}

// ShardDims is the shape of the slice of l one TP rank holds, tp ranks
// sharing it: Column splits Out, Row splits In (ceil, the largest rank);
// VocabParallel splits the vocabulary (Out) after padding it to a multiple
// of 64; QKVParallel gives ceil(Heads/tp) query heads and
// max(1, ceil(KVHeads/tp)) kv heads per rank; Replicated is whole.
func (l Linear) ShardDims(tp int) (in, out int) {
	if tp < 1 {
		tp = 1
	}
	switch l.Split {
	case Column:
		return l.In, ceilDiv(l.Out, tp)
	case Row:
		return ceilDiv(l.In, tp), l.Out
	case VocabParallel:
		if tp == 1 {
			return l.In, l.Out
		}
		return l.In, ceilDiv(ceilDiv(l.Out, vocabPadding)*vocabPadding, tp)
	case QKVParallel:
		if tp == 1 {
			return l.In, l.Out
		}
		kv := max(1, ceilDiv(l.KVHeads, tp))
		vd := l.VHeadDim
		if vd == 0 {
			vd = l.HeadDim
		}
		return l.In, (ceilDiv(l.Heads, tp)+kv)*l.HeadDim + kv*vd
	}
	return l.In, l.Out
}

// ShardBias is the bias length one of tp ranks holds (0 without a bias):
// split like the output for Column, VocabParallel and QKVParallel, whole for
// Row and Replicated.
func (l Linear) ShardBias(tp int) int {
	if !l.Bias {
		return 0
	}
	switch l.Split {
	case Row, Replicated:
		return l.Out
	}
	_, out := l.ShardDims(tp)
	return out
}

// FusedQKVA is the one replicated GEMM vLLM's DeepseekV2MLAAttention runs
// for q_a_proj and kv_a_proj_with_mqa (fused_qkv_a_proj) when the model has
// both (q_lora_rank set), replicated, in one format and over one input;
// false otherwise.
func (c *Config) FusedQKVA() (Linear, bool) {
	var qa, kva *Linear
	ls := c.AttentionLinears()
	for i := range ls {
		switch ls[i].Name {
		case "q_a_proj":
			qa = &ls[i]
		case "kv_a_proj_with_mqa":
			kva = &ls[i]
		}
	}
	if qa == nil || kva == nil || qa.Split != Replicated || kva.Split != Replicated || qa.Format != kva.Format || qa.In != kva.In {
		return Linear{}, false
	}
	return Linear{Name: "fused_qkv_a_proj", In: qa.In, Out: qa.Out + kva.Out, Split: Replicated, Format: qa.Format}, true
}

// AttentionLinears lists one layer's attention projections.
//
// MLA (DeepSeek-V3, Kimi, GLM-5), as vLLM's DeepseekV2MLAAttention holds them:
//
//	q_a_proj            Hidden -> QLoRARank                     Replicated
//	q_b_proj            QLoRARank -> Heads*(QKNope+QKRope)      Column
//	  (q_proj Hidden -> Heads*(QKNope+QKRope), Column, when QLoRARank is 0)
//	kv_a_proj_with_mqa  Hidden -> KVLoRARank+QKRope             Replicated
//	kv_b_proj           KVLoRARank -> Heads*(QKNope+VHead)      Column
//	o_proj              Heads*VHead -> Hidden                   Row
//
// plus, with a DSA indexer (GLM-5, DeepSeek-V3.2 layout): indexer.wq_b
// QLoRARank -> IndexHeads*IndexHeadDim, indexer.wk Hidden -> IndexHeadDim and
// indexer.weights_proj Hidden -> IndexHeads, all Replicated (vLLM does not
// shard the indexer).
//
// GQA: qkv_proj Hidden -> (Heads+2*KVHeads)*HeadDim (QKVParallel) and o_proj
// Heads*HeadDim -> Hidden (Row), with biases when the config has them.
// Norms (q_a/kv_a layernorms, q/k norms, sinks) are in NormParamsPerLayer.
func (c *Config) AttentionLinears() []Linear { return c.Quant.byLinear(c.attentionLinears(&c.Attn)) }

// attentionLinears lists the projections of attention a (AttentionLinears).
func (c *Config) attentionLinears(a *Attention) []Linear {
	f := c.Quant.Attention
	if a.Kind == DSV4 {
		return c.dsv4Linears(a)
	}
	if a.Kind == MLA {
		qk := a.QKNopeDim + a.QKRopeDim
		var ls []Linear
		if a.QLoRARank > 0 {
			ls = append(ls,
				Linear{Name: "q_a_proj", Class: ClassAttention, In: c.Hidden, Out: a.QLoRARank, Split: Replicated, Format: f},
				Linear{Name: "q_b_proj", Class: ClassAttention, In: a.QLoRARank, Out: a.Heads * qk, Split: Column, Format: f})
		} else {
			ls = append(ls, Linear{Name: "q_proj", Class: ClassAttention, In: c.Hidden, Out: a.Heads * qk, Split: Column, Format: f})
		}
		ls = append(ls,
			Linear{Name: "kv_a_proj_with_mqa", Class: ClassAttention, In: c.Hidden, Out: a.KVLoRARank + a.QKRopeDim, Split: Replicated, Format: f},
			Linear{Name: "kv_b_proj", Class: ClassAttention, In: a.KVLoRARank, Out: a.Heads * (a.QKNopeDim + a.VHeadDim), Split: Column, Format: f},
			Linear{Name: "o_proj", Class: ClassAttention, In: a.Heads * a.VHeadDim, Out: c.Hidden, Split: Row, Format: f})
		if a.OutputGate {
			ls = append(ls, Linear{Name: "g_proj (output gate)", Class: ClassAttention, In: c.Hidden, Out: a.Heads * a.VHeadDim, Split: Column, Format: f})
		}
		if a.IndexHeads > 0 {
			qIn := a.QLoRARank
			if qIn == 0 {
				qIn = c.Hidden
			}
			ls = append(ls,
				Linear{Name: "indexer.wq_b", Class: ClassAttention, In: qIn, Out: a.IndexHeads * a.IndexHeadDim, Split: Replicated, Format: f},
				Linear{Name: "indexer.wk", Class: ClassAttention, In: c.Hidden, Out: a.IndexHeadDim, Split: Replicated, Format: f},
				Linear{Name: "indexer.weights_proj", Class: ClassAttention, In: c.Hidden, Out: a.IndexHeads, Split: Replicated, Format: c.Quant.Base})
		}
		return ls
	}
	vd := a.VDim()
	ls := []Linear{
		{Name: "qkv_proj", Class: ClassAttention, In: c.Hidden, Out: (a.Heads+a.KVHeads)*a.HeadDim + a.KVHeads*vd,
			Split: QKVParallel, Format: f, Bias: a.QKVBias, Heads: a.Heads, KVHeads: a.KVHeads, HeadDim: a.HeadDim, VHeadDim: a.VHeadDim},
	}
	if a.OutputGate {
		ls = append(ls, Linear{Name: "q_proj gate", Class: ClassAttention, In: c.Hidden, Out: a.Heads * vd, Split: Column, Format: f})
	}
	if a.IndexHeads > 0 {
		// Sparse-attention indexer on GQA (MiniMax-M3): index queries
		// split over TP, one replicated index key.
		ls = append(ls,
			Linear{Name: "indexer.wq", Class: ClassAttention, In: c.Hidden, Out: a.IndexHeads * a.IndexHeadDim, Split: Column, Format: f},
			Linear{Name: "indexer.wk", Class: ClassAttention, In: c.Hidden, Out: a.IndexHeadDim, Split: Replicated, Format: f})
	}
	return append(ls, Linear{Name: "o_proj", Class: ClassAttention, In: a.Heads * vd, Out: c.Hidden, Split: Row, Format: f, Bias: a.OBias})
}

// mlp lists a SwiGLU MLP: gate_up_proj Hidden -> 2*inter (Column, vLLM's
// MergedColumnParallelLinear) and down_proj inter -> Hidden (Row).
func (c *Config) mlp(class Class, inter int, f dtype.Format, bias bool) []Linear {
	return []Linear{
		{Name: gateUpName, Class: class, In: c.Hidden, Out: 2 * inter, Split: Column, Format: f, Bias: bias},
		{Name: "down_proj", Class: class, In: inter, Out: c.Hidden, Split: Row, Format: f, Bias: bias},
	}
}

// DenseMLPLinears lists the MLP of one dense layer (width DenseInter), or
// nil when the model has no dense layers.
func (c *Config) DenseMLPLinears() []Linear {
	if c.DenseLayerCount() == 0 {
		return nil
	}
	return c.mlp(ClassDenseMLP, c.DenseInter, c.Quant.DenseMLP, false)
}

// SharedExpertLinears lists the shared expert of one MoE layer (width
// SharedInter; DeepSeek fuses n_shared_experts into one MLP), or nil.
//
// With a latent MoE the two latent projections (fc1_latent_proj Hidden ->
// Latent, Column; fc2_latent_proj Latent -> Hidden, Row) are listed here
// too: they are the MoE block's dense weights beside the shared expert.
func (c *Config) SharedExpertLinears() []Linear {
	var ls []Linear
	if c.MoE.Shared > 0 && c.MoE.SharedInter > 0 {
		if c.MoE.Ungated {
			ls = c.ungated(ClassSharedExpert, c.Hidden, c.MoE.SharedInter, c.Quant.SharedExpert)
		} else {
			ls = c.mlp(ClassSharedExpert, c.MoE.SharedInter, c.Quant.SharedExpert, false)
		}
	}
	if l := c.MoE.Latent; l > 0 {
		f := c.Quant.SharedExpert
		ls = append(ls,
			Linear{Name: "fc1_latent_proj", Class: ClassSharedExpert, In: c.Hidden, Out: l, Split: Column, Format: f},
			Linear{Name: "fc2_latent_proj", Class: ClassSharedExpert, In: l, Out: c.Hidden, Split: Row, Format: f})
	}
	return ls
}

// ungated lists an MLP without a gate: up_proj in -> inter (Column) and
// down_proj inter -> in (Row).
func (c *Config) ungated(class Class, in, inter int, f dtype.Format) []Linear {
	return []Linear{
		{Name: "up_proj", Class: class, In: in, Out: inter, Split: Column, Format: f},
		{Name: "down_proj", Class: class, In: inter, Out: in, Split: Row, Format: f},
	}
}

// ExpertHidden is the width the routed experts read and write: MoE.Latent
// when set, else Hidden.
func (c *Config) ExpertHidden() int {
	if c.MoE.Latent > 0 {
		return c.MoE.Latent
	}
	return c.Hidden
}

// ExpertLinears lists ONE routed expert: gate_up_proj Hidden -> 2*Inter
// (Column) and down_proj Inter -> Hidden (Row); the split applies over the
// expert-TP degree (see Layout). A layer holds MoE.Experts of them.
func (c *Config) ExpertLinears() []Linear {
	if c.MoE.Ungated || c.MoE.Latent > 0 {
		if c.MoE.Ungated {
			return c.ungated(ClassRoutedExperts, c.ExpertHidden(), c.MoE.Inter, c.Quant.RoutedExperts)
		}
		h := c.ExpertHidden()
		f := c.Quant.RoutedExperts
		return []Linear{
			{Name: gateUpName, Class: ClassRoutedExperts, In: h, Out: 2 * c.MoE.Inter, Split: Column, Format: f},
			{Name: "down_proj", Class: ClassRoutedExperts, In: c.MoE.Inter, Out: h, Split: Row, Format: f},
		}
	}
	return c.mlp(ClassRoutedExperts, c.MoE.Inter, c.Quant.RoutedExperts, c.MoE.ExpertBias)
}

// RouterLinear is the MoE gate: Hidden -> Experts, Replicated on every rank.
// vLLM builds it as ReplicatedLinear with quant_config=None, so it stays in
// the checkpoint dtype (Quant.Router) whatever the experts' format; the
// DeepSeek e_score_correction_bias and the gpt-oss router bias count as its
// bias, in Quant.Base (vLLM keeps the DeepSeek correction bias in fp32: 2 B
// per expert more, under 1 KB per layer, not counted).
func (c *Config) RouterLinear() Linear {
	return Linear{Name: "gate", Class: ClassRouter, In: c.Hidden, Out: c.MoE.Experts, Split: Replicated,
		Format: c.Quant.Router, Bias: c.MoE.RouterBias}
}

// EmbeddingLinear is embed_tokens, a Vocab x Hidden table split by vocab
// rows over TP (VocabParallelEmbedding). It is a lookup, not a matmul: the
// Linear is given for its storage (In = Hidden, Out = Vocab).
func (c *Config) EmbeddingLinear() Linear {
	return Linear{Name: "embed_tokens", Class: ClassEmbedding, In: c.Hidden, Out: c.Vocab, Split: VocabParallel, Format: c.Quant.Embedding}
}

// LMHeadLinear is lm_head: Hidden -> Vocab, vocab-parallel (ParallelLMHead;
// vLLM all-gathers the logits). With tied embeddings it shares the
// embedding's storage (Weights counts it once).
func (c *Config) LMHeadLinear() Linear {
	return Linear{Name: "lm_head", Class: ClassLMHead, In: c.Hidden, Out: c.Vocab, Split: VocabParallel, Format: c.Quant.LMHead}
}

// MTPLinears lists the linears an MTP layer adds to a full MoE decoder
// layer: eh_proj 2*Hidden -> Hidden, which projects the concatenation of
// the normalised embedding and hidden state (DeepSeek-V3 technical report,
// arXiv 2412.19437 §2.2). vLLM builds
// it as a plain nn.Linear: Replicated, unquantized. One MTP layer is this
// plus one MoE decoder layer (AttentionLinears, RouterLinear, MoE.Experts x
// ExpertLinears, SharedExpertLinears) plus enorm, hnorm and the shared
// head's norm; it shares embed_tokens and lm_head with the main model. Nil
// when MTPLayers is 0.
func (c *Config) MTPLinears() []Linear {
	if c.MTPLayers == 0 {
		return nil
	}
	return []Linear{{Name: "eh_proj", Class: ClassMTP, In: 2 * c.Hidden, Out: c.Hidden, Split: Replicated, Format: c.Quant.Base}}
}

// NormParamsPerLayer counts the small per-layer vectors (ClassNorm):
// input_layernorm and post_attention_layernorm (Hidden each); MLA q_a and
// kv_a layernorms (QLoRARank, KVLoRARank); the DSA indexer's k_norm
// (LayerNorm: 2*IndexHeadDim); q/k norms (2*HeadDim); attention sinks
// (Heads). Biases are not here: they belong to their Linear.
func (c *Config) NormParamsPerLayer() int { return c.attnNormParams(&c.Attn) }

func (c *Config) attnNormParams(a *Attention) int {
	n := 2 * c.Hidden
	if a.Kind == DSV4 {
		return n + c.dsv4NormParams(a)
	}
	if a.Kind == MLA {
		n += a.QLoRARank + a.KVLoRARank
		if a.IndexHeads > 0 {
			n += 2 * a.IndexHeadDim
		}
	}
	if a.QKNorm {
		n += 2 * a.HeadDim
	}
	if a.Sinks {
		n += a.Heads
	}
	return n
}
