package model

import "fmt"

// hfGemma4 mirrors the text_config of Gemma4ForConditionalGeneration
// (Gemma-4 26B-A4B, 31B): local sliding-window and global layers
// (layer_types) with their own head shapes, a GELU-gated MLP in every
// layer and, with enable_moe_block, an MoE block beside it.
type hfGemma4 struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	MoEIntermediate    *int     `json:"moe_intermediate_size"`
	EnableMoEBlock     bool     `json:"enable_moe_block"`
	NumExperts         *int     `json:"num_experts"`
	TopKExperts        *int     `json:"top_k_experts"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	NumGlobalKVHeads   *int     `json:"num_global_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	GlobalHeadDim      *int     `json:"global_head_dim"`
	AttentionKEqV      bool     `json:"attention_k_eq_v"`
	AttentionBias      bool     `json:"attention_bias"`
	LayerTypes         []string `json:"layer_types"`
	SlidingWindow      *int     `json:"sliding_window"`
	NumKVSharedLayers  int      `json:"num_kv_shared_layers"`
	PerLayerInput      int      `json:"hidden_size_per_layer_input"`
	TieWordEmbeddings  *bool    `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

var gemma4Rename = map[string]string{"num_experts_per_tok": "top_k_experts", "n_shared_experts": "intermediate_size", "num_hidden_layers": "layer_types"}

// parseGemma4 converts Gemma-4 as vLLM builds it (vllm-project/vllm @
// 001cabc, vllm/model_executor/models/gemma4.py Gemma4DecoderLayer):
//
//   - sliding_attention layers: num_key_value_heads kv heads of head_dim,
//     attending sliding_window tokens; full_attention layers: head_dim
//     global_head_dim and, with attention_k_eq_v, num_global_key_value_heads
//     kv heads whose keys double as values (the checkpoint has no v_proj;
//     vLLM loads k_proj into both slots of qkv_proj and caches K and V);
//     per-head q/k norms on both;
//   - every layer a gated MLP of intermediate_size; with enable_moe_block
//     the MoE block (num_experts of moe_intermediate_size, top_k_experts)
//     runs beside it on the same input, so the MLP is counted as the MoE
//     layer's shared expert.
func parseGemma4(d *doc) (*Config, error) {
	h, err := decodeFamily[hfGemma4](d, gemma4Rename)
	if err != nil {
		return nil, err
	}
	if h.NumKVSharedLayers > 0 {
		return nil, d.keyErr("num_kv_shared_layers", "KV sharing across layers (%d layers) is not modelled", h.NumKVSharedLayers)
	}
	if h.PerLayerInput > 0 {
		return nil, d.keyErr("hidden_size_per_layer_input", "per-layer embeddings (%d) are not modelled", h.PerLayerInput)
	}
	if err := checkWindow(d, "sliding_window", h.SlidingWindow); err != nil {
		return nil, err
	}
	tie := h.TieWordEmbeddings == nil || *h.TieWordEmbeddings
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "gemma4",
		DenseModel:    !h.EnableMoEBlock,
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		DenseInter:    h.IntermediateSize,
		MoEStep:       1,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: tie,
	}
	global := gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.GlobalHeadDim, h.HiddenSize)
	if h.GlobalHeadDim == nil {
		global.HeadDim = gqaHeadDim(h.HeadDim, h.HiddenSize, h.NumAttentionHeads)
	}
	if h.AttentionKEqV {
		global.KEqV = true
		if h.NumGlobalKVHeads != nil {
			global.KVHeads = *h.NumGlobalKVHeads
		}
	}
	local := gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.HeadDim, h.HiddenSize)
	for _, a := range []*Attention{&global, &local} {
		a.QKNorm, a.QKVBias, a.OBias = true, h.AttentionBias, h.AttentionBias
	}
	window := 0
	if h.SlidingWindow != nil {
		window = *h.SlidingWindow
	}
	local.SlidingWindow = window
	c.Attn = global
	if h.EnableMoEBlock {
		var e, k, inter int
		if h.NumExperts != nil {
			e = *h.NumExperts
		}
		if h.TopKExperts != nil {
			k = *h.TopKExperts
		}
		if h.MoEIntermediate != nil {
			inter = *h.MoEIntermediate
		}
		c.MoE = MoE{Experts: e, TopK: k, Inter: inter, Shared: 1, SharedInter: h.IntermediateSize}
	}
	if h.NumHiddenLayers > maxLayers || h.NumHiddenLayers < 0 {
		return nil, d.keyErr("num_hidden_layers", "%d is not a plausible layer count (limit %d)", h.NumHiddenLayers, maxLayers)
	}
	kindOf, err := layerTypes(d, "layer_types", h.LayerTypes, h.NumHiddenLayers, "full_attention", "sliding_attention")
	if err != nil {
		return nil, err
	}
	var kb kindBuilder
	nLocal := 0
	for _, t := range kindOf {
		k := LayerKind{Mixer: MixAttention, FFN: FFNDense, Inter: h.IntermediateSize, Name: "dense"}
		if h.EnableMoEBlock {
			k.FFN, k.Inter, k.Name = FFNMoE, 0, "moe"
		}
		if t == 0 {
			k.Attn, k.Name = global, "global "+k.Name
		} else {
			if window <= 0 {
				return nil, d.keyErr("sliding_window", "sliding_attention layers need a window > 0")
			}
			k.Attn, k.SlideFrac, k.Name = local, 1, "local "+k.Name
			nLocal++
		}
		kb.add(k)
	}
	kb.set(c)
	c.Notes = append(c.Notes, fmt.Sprintf("%d local layers (window %d, %d kv heads x %d) and %d global layers (%d kv heads x %d%s); the local layers' KV is bounded at the window",
		nLocal, window, local.KVHeads, local.HeadDim, h.NumHiddenLayers-nLocal, global.KVHeads, global.HeadDim, map[bool]string{true: ", keys as values", false: ""}[global.KEqV]))
	if h.EnableMoEBlock {
		c.Notes = append(c.Notes, "the dense MLP beside the MoE block is counted as its shared expert; Gemma's extra pre/post feed-forward norms (under 0.01% of the weights) are not counted")
	}
	c.Notes = append(c.Notes, "vision tower not counted (text decode never runs it)")
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, swigluProj, "mlp", "moe.experts.0", swigluProj)
	})
}
