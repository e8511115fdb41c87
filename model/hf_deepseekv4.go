package model

import (
	"fmt"

	"github.com/moecast/moecast/internal/dtype"
)

// hfDeepseekV4 mirrors the config.json of DeepseekV4ForCausalLM
// (DeepSeek-V4 Pro and Flash).
type hfDeepseekV4 struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	MoEIntermediate    int      `json:"moe_intermediate_size"`
	NRoutedExperts     int      `json:"n_routed_experts"`
	NSharedExperts     int      `json:"n_shared_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            int      `json:"head_dim"`
	QLoRARank          int      `json:"q_lora_rank"`
	QKRopeHeadDim      int      `json:"qk_rope_head_dim"`
	OLoRARank          int      `json:"o_lora_rank"`
	OGroups            int      `json:"o_groups"`
	SlidingWindow      *int     `json:"sliding_window"`
	CompressRatios     []int    `json:"compress_ratios"`
	IndexNHeads        int      `json:"index_n_heads"`
	IndexHeadDim       int      `json:"index_head_dim"`
	IndexTopK          int      `json:"index_topk"`
	HCMult             int      `json:"hc_mult"`
	ExpertDtype        string   `json:"expert_dtype"`
	NumNextNPredict    int      `json:"num_nextn_predict_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

// parseDeepseekV4 converts DeepSeek-V4 as vLLM builds it (vllm-project/vllm
// @ 023da1f, vllm/model_executor/models/deepseek_v4.py DeepseekV4Attention,
// DeepseekV4DecoderLayer):
//
//   - attention: fused_wqa_wkv (Hidden -> q_lora_rank + head_dim,
//     replicated), wq_b (q_lora_rank -> heads x head_dim), one K=V head of
//     head_dim (qk_rope_head_dim of it rotary), a learned sink per head, and
//     the grouped low-rank output wo_a (o_groups bmm's of heads x head_dim /
//     o_groups -> o_lora_rank) then wo_b (o_groups x o_lora_rank -> Hidden);
//   - compress_ratios per layer: 4 = compressed sparse attention (the KV is
//     pooled 4:1 by a compressor, a lightning indexer of index_n_heads x
//     index_head_dim over the compressed keys picks index_topk of them),
//     128 = heavily compressed attention (pooled 128:1, all read), 0 = none;
//     every layer also attends the last sliding_window raw tokens;
//   - hyper-connections: the residual stream is hc_mult hidden states,
//     mixed before and after attention and the MoE (mHC, fp32 mixing
//     weights of (2 + hc_mult) x hc_mult rows over hc_mult x Hidden);
//   - every layer MoE (n_routed_experts, shared experts; the first
//     num_hash_layers route by token hash, same cost), MTP layers.
//
// Approximations (noted): the compressors' projections are taken as
// Hidden -> 2 x head_dim (KV and gate) and Hidden -> 2 x index_head_dim,
// replicated; the decode attention is priced as absorbed MLA with a latent
// of head_dim - rope and the rope part, over min(context/4, index_topk) or
// context/128 compressed entries plus the window.
func parseDeepseekV4(d *doc) (*Config, error) {
	h, err := decodeFamily[hfDeepseekV4](d, deepseekRename)
	if err != nil {
		return nil, err
	}
	if err := checkWindow(d, "sliding_window", h.SlidingWindow); err != nil {
		return nil, err
	}
	window := 0
	if h.SlidingWindow != nil {
		window = *h.SlidingWindow
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "deepseek_v4",
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		MoEStep:       1,
		MTPLayers:     h.NumNextNPredict,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		HCMult:        h.HCMult,
		MoE:           deepseekMoE(h.NRoutedExperts, h.NumExpertsPerTok, h.NSharedExperts, h.MoEIntermediate, true),
	}
	base := Attention{Kind: DSV4, Heads: h.NumAttentionHeads, KVHeads: max(h.NumKeyValueHeads, 1), HeadDim: h.HeadDim, QLoRARank: h.QLoRARank,
		QKRopeDim: h.QKRopeHeadDim, OLoRARank: h.OLoRARank, OGroups: h.OGroups, SlidingWindow: window, Sinks: true}
	if base.Heads <= 0 || base.HeadDim <= 0 || base.QLoRARank <= 0 || base.OLoRARank <= 0 || base.OGroups <= 0 || base.Heads%base.OGroups != 0 {
		return nil, d.keyErr("o_groups", "num_attention_heads (%d), head_dim (%d), q_lora_rank (%d), o_lora_rank (%d) must be > 0 and o_groups (%d) divide the heads",
			base.Heads, base.HeadDim, base.QLoRARank, base.OLoRARank, base.OGroups)
	}
	if base.QKRopeDim <= 0 || base.QKRopeDim >= base.HeadDim {
		return nil, d.keyErr("qk_rope_head_dim", "must be in (0, head_dim=%d), got %d", base.HeadDim, base.QKRopeDim)
	}
	if h.NumHiddenLayers > maxLayers || h.NumHiddenLayers < 0 {
		return nil, d.keyErr("num_hidden_layers", "%d is not a plausible layer count (limit %d)", h.NumHiddenLayers, maxLayers)
	}
	if len(h.CompressRatios) < h.NumHiddenLayers {
		return nil, d.keyErr("compress_ratios", "has %d entries for %d layers", len(h.CompressRatios), h.NumHiddenLayers)
	}
	attnOf := func(r int) (Attention, error) {
		a := base
		switch {
		case r <= 1:
			a.Compress = 1
		case r == 4:
			a.Compress = 4
			a.IndexHeads, a.IndexHeadDim, a.IndexTopK = h.IndexNHeads, h.IndexHeadDim, h.IndexTopK
			if a.IndexHeads <= 0 || a.IndexHeadDim <= 0 || a.IndexTopK <= 0 {
				return a, d.keyErr("index_n_heads", "compressed sparse layers need index_n_heads, index_head_dim and index_topk > 0")
			}
		default:
			a.Compress = r
		}
		return a, nil
	}
	var kb kindBuilder
	counts := map[int]int{}
	for i := range h.NumHiddenLayers {
		a, err := attnOf(h.CompressRatios[i])
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("c%d moe", a.Compress)
		if a.Compress == 1 {
			name = "swa moe"
		}
		counts[a.Compress]++
		kb.add(LayerKind{Name: name, Mixer: MixAttention, Attn: a, FFN: FFNMoE})
	}
	kb.set(c)
	mtpRatio := 0
	if len(h.CompressRatios) > h.NumHiddenLayers {
		mtpRatio = h.CompressRatios[h.NumHiddenLayers]
	}
	if c.Attn, err = attnOf(mtpRatio); err != nil {
		return nil, err
	}
	c.Notes = append(c.Notes, fmt.Sprintf("DeepSeek-V4 attention: %d compressed sparse layers (4:1, indexer %d heads x %d, top-%d), %d heavily compressed layers (128:1), %d window-only layers; "+
		"every layer also reads the last %d raw tokens; one K=V head of %d cached per (compressed) entry; decode attention priced as absorbed MLA (latent %d + rope %d)",
		counts[4], h.IndexNHeads, h.IndexHeadDim, h.IndexTopK, counts[128], counts[1], window, h.HeadDim, h.HeadDim-h.QKRopeHeadDim, h.QKRopeHeadDim))
	c.Notes = append(c.Notes, "compressor projections taken as Hidden -> 2 x head_dim (attention) and Hidden -> 2 x index_head_dim (indexer), replicated: an approximation of the checkpoint's shapes")
	if c.HCMult > 1 {
		c.Notes = append(c.Notes, fmt.Sprintf("hyper-connections (hc_mult %d): mixing weights counted as norms; each block's mHC pre/post priced as elementwise passes over %d x hidden", c.HCMult, c.HCMult))
	}
	noteMTP(c)
	cfg, err := finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, []string{"attn.wq_b", "attn.wo_b"}, swigluProj, "ffn.shared_experts", "ffn.experts.0", []string{"w1", "w3", "w2"})
	})
	if err != nil {
		return nil, err
	}
	if h.ExpertDtype == "fp4" && cfg.Quant.RoutedExperts.Name == "fp8-b128" {
		// vLLM's DeepseekV4FP8Config serves expert_dtype fp4 experts as
		// MXFP4 whatever quantization_config says (deepseek_v4.py).
		cfg.Quant.RoutedExperts = dtype.MXFP4
		cfg.Notes = append(cfg.Notes, "expert_dtype fp4: routed experts are MXFP4 (vLLM DeepseekV4FP8Config), the other linears fp8 blocks")
	}
	return cfg, nil
}

// dsv4Linears lists a DeepSeek-V4 attention layer's projections (see
// parseDeepseekV4).
func (c *Config) dsv4Linears(a *Attention) []Linear {
	f := c.Quant.Attention
	lin := func(name string, in, out int, split Split) Linear {
		return Linear{Name: name, Class: ClassAttention, In: in, Out: out, Split: split, Format: f}
	}
	ls := []Linear{
		lin("fused_wqa_wkv", c.Hidden, a.QLoRARank+a.HeadDim, Replicated),
		lin("wq_b", a.QLoRARank, a.Heads*a.HeadDim, Column),
	}
	if a.Compress > 1 {
		ls = append(ls, lin("compressor.wkv_wgate", c.Hidden, 2*a.HeadDim, Replicated))
	}
	if a.IndexHeads > 0 {
		ls = append(ls,
			lin("indexer.wq_b", a.QLoRARank, a.IndexHeads*a.IndexHeadDim, Replicated),
			Linear{Name: "indexer.weights_proj", Class: ClassAttention, In: c.Hidden, Out: a.IndexHeads, Split: Replicated, Format: c.Quant.Base},
			lin("indexer.compressor", c.Hidden, 2*a.IndexHeadDim, Replicated))
	}
	return append(ls,
		lin("wo_a", a.Heads*a.HeadDim/max(a.OGroups, 1), a.OGroups*a.OLoRARank, Column),
		lin("wo_b", a.OGroups*a.OLoRARank, c.Hidden, Row))
}

// dsv4NormParams counts a DeepSeek-V4 layer's vectors beyond the two
// hidden-size norms: q_norm, kv_norm and the sinks, the compressors'
// norms, and the hyper-connection mixing weights of attention and FFN.
func (c *Config) dsv4NormParams(a *Attention) int {
	n := a.QLoRARank + a.HeadDim + a.Heads
	if a.Compress > 1 {
		n += a.HeadDim
	}
	if a.IndexHeads > 0 {
		n += a.IndexHeadDim
	}
	if m := c.HCMult; m > 1 {
		mix := (2 + m) * m
		n += 2 * (mix*m*c.Hidden + mix + 3)
	}
	return n
}
