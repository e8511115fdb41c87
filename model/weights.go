package model

import (
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// IsMoELayer reports whether decoder layer i (0-based) has an MoE block:
// i >= DenseLayers, i not in DenseOnly, and (i+MoEPhase) % MoEStep == 0.
// This is HF's rule for DeepSeek (first_k_dense_replace, moe_layer_freq),
// Qwen3 (mlp_only_layers, decoder_sparse_step) and Llama-4
// (interleave_moe_layer_step).
func (c *Config) IsMoELayer(i int) bool {
	if k, ok := c.kindAt(i); ok {
		return k.FFN == FFNMoE && c.MoE.Experts > 0
	}
	if i < 0 || i >= c.Layers || i < c.DenseLayers || c.MoE.Experts == 0 {
		return false
	}
	for _, d := range c.DenseOnly {
		if d == i {
			return false
		}
	}
	step := max(c.MoEStep, 1)
	return (i+c.MoEPhase)%step == 0
}

// MoELayers counts the decoder layers with an MoE block (MTP layers not
// included).
func (c *Config) MoELayers() int {
	n := 0
	for i := range c.Layers {
		if c.IsMoELayer(i) {
			n++
		}
	}
	return n
}

// DenseLayerCount counts the decoder layers with a dense MLP:
// Layers - MoELayers().
// With Kinds, only the layers with a dense MLP count (not those without an
// FFN).
func (c *Config) DenseLayerCount() int {
	if c.Kinds != nil {
		n := 0
		for _, k := range c.Kinds {
			if k.FFN == FFNDense {
				n += k.Count
			}
		}
		return n
	}
	return c.Layers - c.MoELayers()
}

// ExpertTP is the degree each routed expert is split over: TP*DP/EP. With
// EP = 1 that is TP*DP: vLLM's FusedMoE flattens TP across DP when expert
// parallelism is off (FusedMoEParallelConfig), so every rank holds every
// expert, split TP*DP ways.
func (l Layout) ExpertTP() int {
	n := max(l.TP, 1) * max(l.DP, 1) / max(l.EP, 1)
	return max(n, 1)
}

// ExpertsPerRank is the number of routed experts one rank holds:
// ceil(experts/EP).
func (l Layout) ExpertsPerRank(experts int) int { return ceilDiv(experts, max(l.EP, 1)) }

// AttentionTP is the degree attention weights are split over: 1 with
// DPAttention (each rank holds all of them), else TP.
func (l Layout) AttentionTP() int {
	if l.DPAttention {
		return 1
	}
	return max(l.TP, 1)
}

// acc accumulates the bytes of linears into a WeightBytes.
type acc struct {
	w    *WeightBytes
	base float64 // bytes per bias value (Quant.Base)
}

// add counts a linear in class cls: total copies in the model, perRank
// copies on one GPU, each rank holding its tp-way shard.
//
//	total bytes  = copies  x (In*Out*B/param + Out*B_base)
//	per GPU      = perRank x (in_r*out_r*B/param + bias_r*B_base)
//
// with (in_r, out_r) = ShardDims(tp) and bias_r = ShardBias(tp).
func (a acc) add(cls Class, l Linear, copies, perRank float64, tp int) {
	bpp := l.Format.BytesPerParam()
	bias := 0.0
	if l.Bias {
		bias = float64(l.Out)
	}
	a.w.Total[cls] += unit.Bytes(copies * (l.Params()*bpp + bias*a.base))
	in, out := marlinPadded(l, cls, tp)
	biasR := float64(l.ShardBias(tp))
	if l.Bias && isMarlinExpert(l, cls) {
		biasR = float64(out) // the biases padded with their weights
	}
	a.w.PerGPU[cls] += unit.Bytes(perRank * (float64(in)*float64(out)*bpp + biasR*a.base))
}

// marlinPadded is a linear's tp-way shard (ShardDims) as the GPU holds it.
// vLLM's Marlin MXFP4 MoE (dtype.MXFP4Marlin, routed experts) stores its
// weights padded: the hidden size to a multiple of 256 and each rank's
// expert width to a multiple of 128
// (mxfp4_round_up_hidden_size_and_intermediate_size,
// vllm/model_executor/layers/fused_moe/oracle/mxfp4.py @ 001eda3;
// Mxfp4MoEMethod.create_weights, quantization/mxfp4.py @ 007d500), as the
// MoE op prices it (sim, opMoE): gpt-oss-120b at TP2 holds 1.14x its
// routed experts' bytes (hidden 2880 -> 3072, width 1440 -> 1536). The
// width is each rank's (ExpertTP = TP*DP/EP ways: at EP = TP it is the
// whole 2880 -> 2944); the MTP layers' experts (ClassMTP) are the same
// layer; an ungated expert's up_proj pads its one width (a gated
// gate_up_proj pads its gate and up halves apiece); the biases (w13_bias,
// w2_bias) are padded with their weights (add). Every other linear is its
// ShardDims.
func marlinPadded(l Linear, cls Class, tp int) (in, out int) {
	in, out = l.ShardDims(tp)
	if !isMarlinExpert(l, cls) {
		return in, out
	}
	up := func(n, m int) int { return ceilDiv(n, m) * m }
	switch l.Split {
	case Column:
		if l.Name == gateUpName { // hidden in, 2 x width out
			return up(in, 256), 2 * up(ceilDiv(out, 2), 128)
		}
		return up(in, 256), up(out, 128) // ungated up_proj: hidden in, width out
	case Row: // down: width in, hidden out
		return up(in, 128), up(out, 256)
	}
	return in, out
}

// gateUpName is the name of a gated MLP's fused gate and up projection
// (mlp, ExpertLinears).
const gateUpName = "gate_up_proj"

// isMarlinExpert reports whether l is a routed expert's linear (of a
// decoder or an MTP layer) in vLLM's Marlin MXFP4 format: only the routed
// experts take dtype.MXFP4Marlin (scenarios setMXFP4Activation).
func isMarlinExpert(l Linear, cls Class) bool {
	return l.Format == dtype.MXFP4Marlin && (cls == ClassRoutedExperts || cls == ClassMTP)
}

func (a acc) addAll(cls Class, ls []Linear, copies, perRank float64, tp int) {
	for _, l := range ls {
		a.add(cls, l, copies, perRank, tp)
	}
}

// Weights is the byte accounting of the model's weights for layout l, per
// weight class, for the whole model (Total) and for one GPU (PerGPU, the
// largest rank when the split is uneven), as vLLM shards them:
//
//   - Column/Row/QKV/VocabParallel linears are split over TP (ceil; see
//     Linear.ShardDims), Replicated ones are whole on every rank;
//   - attention is split over AttentionTP (whole on every rank with
//     DPAttention);
//   - routed experts: each rank holds ExpertsPerRank = ceil(Experts/EP)
//     experts of every MoE layer, each split over ExpertTP = TP*DP/EP;
//   - the shared expert, dense MLP, embedding and lm_head split over TP;
//   - ClassNorm (norm vectors, sinks) is counted whole on every rank (an
//     upper bound that errs by under 1 MB);
//   - ClassMTP holds the MTP layers (one MoE decoder layer each, plus
//     eh_proj and three norms); vLLM loads them only when speculative
//     decoding uses MTP: see WeightBytes.PerGPUTotal.
//
// Bytes per parameter include group scales (dtype.Format.BytesPerParam);
// biases are stored in Quant.Base. A tied lm_head adds no bytes.
func (c *Config) Weights(l Layout) WeightBytes {
	var w WeightBytes
	a := acc{w: &w, base: c.Quant.Base.BytesPerParam()}
	tp := max(l.TP, 1)
	attnTP := l.AttentionTP()
	moe := float64(c.MoELayers())
	e := float64(c.MoE.Experts)
	eRank := float64(l.ExpertsPerRank(c.MoE.Experts))
	etp := l.ExpertTP()

	for _, k := range c.LayerKinds() {
		n := float64(k.Count)
		a.addAll(ClassAttention, c.MixerLinears(&k), n, n, attnTP)
		a.addAll(ClassDenseMLP, c.FFNLinears(&k), n, n, tp)
	}
	if moe > 0 {
		a.addAll(ClassSharedExpert, c.SharedExpertLinears(), moe, moe, tp)
		a.addAll(ClassRoutedExperts, c.ExpertLinears(), moe*e, moe*eRank, etp)
		a.add(ClassRouter, c.RouterLinear(), moe, moe, 1)
	}
	a.add(ClassEmbedding, c.EmbeddingLinear(), 1, 1, tp)
	if !c.TieEmbeddings {
		a.add(ClassLMHead, c.LMHeadLinear(), 1, 1, tp)
	}
	norms := unit.Bytes((c.normParams() + float64(c.Hidden)) * a.base)
	w.Total[ClassNorm] = norms
	w.PerGPU[ClassNorm] = norms

	if m := float64(c.MTPLayers); m > 0 {
		a.addAll(ClassMTP, c.AttentionLinears(), m, m, attnTP)
		a.addAll(ClassMTP, c.SharedExpertLinears(), m, m, tp)
		a.addAll(ClassMTP, c.ExpertLinears(), m*e, m*eRank, etp)
		if c.MoE.Experts > 0 {
			a.add(ClassMTP, c.RouterLinear(), m, m, 1)
		} else {
			a.addAll(ClassMTP, c.mlp(ClassMTP, c.DenseInter, c.Quant.DenseMLP, false), m, m, tp)
		}
		a.addAll(ClassMTP, c.MTPLinears(), m, m, 1)
		// Decoder-layer norms plus enorm, hnorm and shared_head.norm.
		n := unit.Bytes(m * float64(c.NormParamsPerLayer()+3*c.Hidden) * a.base)
		w.Total[ClassMTP] += n
		w.PerGPU[ClassMTP] += n
	}
	return w
}

// PerGPUTotal is the weight bytes one GPU holds, with or without the MTP
// layers (vLLM loads them only for speculative decoding with MTP).
func (w WeightBytes) PerGPUTotal(withMTP bool) unit.Bytes {
	s := Sum(w.PerGPU)
	if !withMTP {
		s -= w.PerGPU[ClassMTP]
	}
	return s
}

// ParamCount summarises a model's parameter counts (weights only, no
// scales), as model cards quote them.
type ParamCount struct {
	// Total: every weight of the main model (embedding and lm_head
	// included, MTP layers not).
	Total float64
	// Active: the weights one token's forward pass reads: everything but
	// the routed experts, plus TopK experts per MoE layer.
	Active float64
	// MTP: the MTP layers' weights (DeepSeek-V3 card: 671B + 14B MTP).
	MTP float64
	// PerClass: Total split by class (ClassMTP holds MTP).
	PerClass [NumClasses]float64
}

// Params counts parameters: linears (In*Out plus biases), norms, and
// embedding and lm_head (once when tied).
func (c *Config) Params() ParamCount {
	var p ParamCount
	count := func(ls []Linear, n float64, cls Class) {
		for _, l := range ls {
			v := l.Params()
			if l.Bias {
				v += float64(l.Out)
			}
			p.PerClass[cls] += n * v
		}
	}
	moe := float64(c.MoELayers())
	for _, k := range c.LayerKinds() {
		n := float64(k.Count)
		count(c.MixerLinears(&k), n, ClassAttention)
		count(c.FFNLinears(&k), n, ClassDenseMLP)
		if k.Mixer == MixAttention && k.Attn.KEqV && k.Attn.Kind == GQA {
			// The checkpoint has no v_proj (vLLM loads k_proj into both
			// slots, so the GPU holds it twice: Weights counts that).
			p.PerClass[ClassAttention] -= n * float64(c.Hidden) * float64(k.Attn.KVHeads*k.Attn.HeadDim)
		}
	}
	if moe > 0 {
		count(c.SharedExpertLinears(), moe, ClassSharedExpert)
		count(c.ExpertLinears(), moe*float64(c.MoE.Experts), ClassRoutedExperts)
		count([]Linear{c.RouterLinear()}, moe, ClassRouter)
	}
	count([]Linear{c.EmbeddingLinear()}, 1, ClassEmbedding)
	if !c.TieEmbeddings {
		count([]Linear{c.LMHeadLinear()}, 1, ClassLMHead)
	}
	p.PerClass[ClassNorm] = c.normParams() + float64(c.Hidden)
	if m := float64(c.MTPLayers); m > 0 {
		count(c.AttentionLinears(), m, ClassMTP)
		count(c.SharedExpertLinears(), m, ClassMTP)
		count(c.ExpertLinears(), m*float64(c.MoE.Experts), ClassMTP)
		if c.MoE.Experts > 0 {
			count([]Linear{c.RouterLinear()}, m, ClassMTP)
		} else {
			count(c.mlp(ClassMTP, c.DenseInter, c.Quant.DenseMLP, false), m, ClassMTP)
		}
		count(c.MTPLinears(), m, ClassMTP)
		p.PerClass[ClassMTP] += m * float64(c.NormParamsPerLayer()+3*c.Hidden)
	}
	for cls, v := range p.PerClass {
		if Class(cls) != ClassMTP {
			p.Total += v
		}
	}
	p.MTP = p.PerClass[ClassMTP]
	p.Active = p.Total - p.PerClass[ClassRoutedExperts]
	if c.MoE.Experts > 0 {
		p.Active += p.PerClass[ClassRoutedExperts] * float64(c.MoE.TopK) / float64(c.MoE.Experts)
	}
	return p
}

// KVBytesPerToken is the KV-cache size of one token over all decoder layers
// (MTP layers' own cache not included), in bytes, kv being the element size:
//
//	MLA: Layers x (KVLoRARank + QKRopeDim) x elt   (the latent and the rope key)
//	GQA: Layers x 2 x KVHeads x HeadDim x elt
//
// plus, with a DSA indexer, IndexerKeyBytesPerToken. Kimi-K2.5 in bf16:
// 61 x 576 x 2 = 70,272 B (kv_lora_rank 512 + qk_rope_head_dim 64 of
// presets/moonshotai--Kimi-K2.5_config.json). Sliding-window layers are
// counted here at full size per token; KVSplitPerGPU separates their share,
// which vLLM's hybrid KV-cache manager bounds at the window (sim's memory
// does). Recurrent layers hold no KV: see RecurrentStateBytes.
func (c *Config) KVBytesPerToken(kv dtype.KVCache) unit.Bytes {
	return c.kvBytes(kv, 1) + c.IndexerKeyBytesPerToken()
}

// KVBytesPerTokenPerGPU is the KV-cache size of one token on one GPU for
// layout l, as vLLM allocates it:
//
//   - MLA: the latent is not split by heads, so every attention-TP rank
//     holds the whole per-token latent (no decode context parallelism);
//   - GQA: kv heads split over TP, at least one per rank
//     (max(1, ceil(KVHeads/TP)); vLLM replicates kv heads when TP > KVHeads);
//   - DPAttention: attention is not split (TP 1 inside attention), each
//     rank stores only its own requests' KV at the unsplit per-token size;
//     the caller divides the batch by DP.
func (c *Config) KVBytesPerTokenPerGPU(kv dtype.KVCache, l Layout) unit.Bytes {
	return c.kvBytes(kv, l.AttentionTP()) + c.IndexerKeyBytesPerToken()
}

func (c *Config) kvBytes(kv dtype.KVCache, tp int) unit.Bytes {
	full, slide := c.kvSplit(kv, tp)
	return full + slide
}

// kvSplit is the per-token KV bytes of the layers that keep every token
// (full) and of those whose cache a sliding window bounds (slide), on a
// rank of attention-TP degree tp; a kind blending both (gpt-oss, Llama-4's
// chunked layers) splits by its SlideFrac.
func (c *Config) kvSplit(kv dtype.KVCache, tp int) (full, slide unit.Bytes) {
	elt := kv.Bytes()
	for _, k := range c.LayerKinds() {
		if k.Mixer != MixAttention {
			continue
		}
		if k.Attn.Kind == DSV4 {
			// The compressed entries grow with the context; the window
			// of raw tokens is bounded.
			if r := k.Attn.Compress; r > 1 {
				full += unit.Bytes(float64(k.Count) * float64(k.Attn.HeadDim) / float64(r) * elt)
			}
			slide += unit.Bytes(float64(k.Count) * float64(k.Attn.HeadDim) * elt)
			continue
		}
		b := float64(k.Count) * attnKVPerLayer(&k.Attn, tp) * elt
		f := 0.0
		if k.Attn.SlidingWindow > 0 {
			f = k.SlideFrac // the windowed share of this kind's layers
		}
		slide += unit.Bytes(b * f)
		full += unit.Bytes(b * (1 - f))
	}
	return full, slide
}

// attnKVPerLayer is one layer's cached elements per token: the MLA latent
// and rope key, or K and V of the rank's kv heads.
func attnKVPerLayer(a *Attention, tp int) float64 {
	if a.Kind == MLA {
		return float64(a.KVLoRARank + a.QKRopeDim)
	}
	heads := max(1, ceilDiv(a.KVHeads, tp))
	return float64(heads * (a.HeadDim + a.VDim()))
}

// KVSplitPerGPU is KVBytesPerTokenPerGPU split into the layers that keep
// every token (full, the DSA indexer keys included) and the sliding-window
// layers (slide), whose cache vLLM's hybrid allocator bounds at the window
// (Window tokens per sequence).
func (c *Config) KVSplitPerGPU(kv dtype.KVCache, l Layout) (full, slide unit.Bytes, window int) {
	full, slide = c.kvSplit(kv, l.AttentionTP())
	if slide > 0 {
		window = c.Window()
	}
	return full + c.IndexerKeyBytesPerToken(), slide, window
}

// IndexerKeyBytesPerToken is the DSA indexer's key cache per token over all
// layers: IndexHeadDim fp8 values plus one fp32 scale per 128 values, per
// layer (vLLM's DeepSeek-V3.2 indexer cache: 128 + 4 = 132 B per layer,
// whatever the KV-cache dtype; assumed the same for GLM-5). Replicated on
// every rank. Zero without an indexer.
func (c *Config) IndexerKeyBytesPerToken() unit.Bytes {
	if c.Kinds == nil {
		return unit.Bytes(float64(c.Layers) * indexKeyBytes(&c.Attn))
	}
	s := 0.0
	for _, k := range c.Kinds {
		if k.Mixer == MixAttention {
			s += float64(k.Count) * indexKeyBytes(&k.Attn)
		}
	}
	return unit.Bytes(s)
}

// IndexKeyBytesPerLayer is one sparse layer's index-key cache per token
// (see IndexerKeyBytesPerToken); 0 without an indexer.
func IndexKeyBytesPerLayer(a *Attention) float64 { return indexKeyBytes(a) }

func indexKeyBytes(a *Attention) float64 {
	if a.IndexHeads == 0 || a.IndexHeadDim == 0 {
		return 0
	}
	b := float64(a.IndexHeadDim) + float64(ceilDiv(a.IndexHeadDim, 128))*4
	if a.Kind == DSV4 && a.Compress > 1 {
		b /= float64(a.Compress) // one index key per compressed entry
	}
	return b
}

// SparseTopK is the tokens a sparse-attention layer reads at most (DSA
// index_topk, MiniMax-M3's selected blocks), or 0 without sparse layers.
func (c *Config) SparseTopK() int {
	if c.Attn.IndexHeads > 0 && c.Attn.IndexTopK > 0 {
		return c.Attn.IndexTopK
	}
	for _, k := range c.Kinds {
		if k.Mixer == MixAttention && k.Attn.IndexHeads > 0 && k.Attn.IndexTopK > 0 {
			return k.Attn.IndexTopK
		}
	}
	return 0
}

// normParams is ClassNorm over the decoder layers (final norm not included).
func (c *Config) normParams() float64 {
	n := 0.0
	for _, k := range c.LayerKinds() {
		n += float64(k.Count) * float64(c.KindNormParams(&k))
	}
	return n
}

// MTPKVBytesPerTokenPerGPU is the KV cache per token the MTP layers keep
// on one GPU of layout l: one layer of Config.Attn each (the DSA indexer
// keys included). For a model of uniform layers it is the per-layer share
// of KVBytesPerTokenPerGPU times MTPLayers.
func (c *Config) MTPKVBytesPerTokenPerGPU(kv dtype.KVCache, l Layout) unit.Bytes {
	if c.MTPLayers == 0 {
		return 0
	}
	a := &c.Attn
	per := attnKVPerLayer(a, l.AttentionTP()) * kv.Bytes()
	if a.Kind == DSV4 {
		per = float64(a.HeadDim) * kv.Bytes() / float64(max(a.Compress, 1))
	}
	return unit.Bytes(float64(c.MTPLayers) * (per + indexKeyBytes(a)))
}
