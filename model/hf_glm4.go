package model

// hfGlm4Moe mirrors the config.json of Glm4MoeForCausalLM (GLM-4.5, 4.6,
// 4.7): DeepSeek-style MoE (first_k_dense_replace, shared experts, sigmoid
// router with correction bias, MTP layers) with GQA attention.
type hfGlm4Moe struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	MoEIntermediate    int      `json:"moe_intermediate_size"`
	FirstKDense        int      `json:"first_k_dense_replace"`
	NRoutedExperts     int      `json:"n_routed_experts"`
	NSharedExperts     int      `json:"n_shared_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	UseQKNorm          bool     `json:"use_qk_norm"`
	AttentionBias      bool     `json:"attention_bias"`
	NumNextNPredict    int      `json:"num_nextn_predict_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

// parseGlm4Moe converts GLM-4.5: q/k/v carry a bias when attention_bias
// (o_proj never does, HF Glm4MoeAttention); per-head q/k norms when
// use_qk_norm; MoE as DeepSeek-V3's (deepseekMoE), router always with bias.
func parseGlm4Moe(d *doc) (*Config, error) {
	h, err := decodeFamily[hfGlm4Moe](d, deepseekRename)
	if err != nil {
		return nil, err
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "glm4_moe",
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		DenseInter:    h.IntermediateSize,
		DenseLayers:   h.FirstKDense,
		MoEStep:       1,
		MTPLayers:     h.NumNextNPredict,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn:          gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.HeadDim, h.HiddenSize),
		MoE:           deepseekMoE(h.NRoutedExperts, h.NumExpertsPerTok, h.NSharedExperts, h.MoEIntermediate, true),
	}
	c.Attn.QKNorm, c.Attn.QKVBias = h.UseQKNorm, h.AttentionBias
	noteMTP(c)
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, swigluProj, "mlp.shared_experts", "mlp.experts.0", swigluProj)
	})
}
