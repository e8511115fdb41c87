package model

import "fmt"

// hfQwen3Moe mirrors the config.json of Qwen3MoeForCausalLM (Qwen3-235B-A22B,
// Qwen3-30B-A3B).
type hfQwen3Moe struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	MoEIntermediate    int      `json:"moe_intermediate_size"`
	DecoderSparseStep  *int     `json:"decoder_sparse_step"`
	MLPOnlyLayers      []int    `json:"mlp_only_layers"`
	NumExperts         int      `json:"num_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	AttentionBias      bool     `json:"attention_bias"`
	UseSlidingWindow   bool     `json:"use_sliding_window"`
	SlidingWindow      *int     `json:"sliding_window"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

var qwen3Rename = map[string]string{"moe_layer_freq": "decoder_sparse_step", "first_k_dense_replace": "mlp_only_layers"}

// parseQwen3Moe converts Qwen3-MoE: GQA with per-head q/k RMSNorm, no
// shared expert; layer i is MoE unless listed in mlp_only_layers, when
// (i+1) % decoder_sparse_step == 0 (HF Qwen3MoeDecoderLayer).
func parseQwen3Moe(d *doc) (*Config, error) {
	h, err := decodeFamily[hfQwen3Moe](d, qwen3Rename)
	if err != nil {
		return nil, err
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "qwen3_moe",
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		DenseInter:    h.IntermediateSize,
		MoEStep:       1,
		MoEPhase:      1,
		DenseOnly:     h.MLPOnlyLayers,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn:          gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.HeadDim, h.HiddenSize),
		MoE:           MoE{Experts: h.NumExperts, TopK: h.NumExpertsPerTok, Inter: h.MoEIntermediate},
	}
	c.Attn.QKNorm, c.Attn.QKVBias = true, h.AttentionBias
	if h.DecoderSparseStep != nil {
		c.MoEStep = *h.DecoderSparseStep
	}
	if err := checkWindow(d, "sliding_window", h.SlidingWindow); err != nil {
		return nil, err
	}
	if h.UseSlidingWindow && h.SlidingWindow != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("use_sliding_window with window %d: not modelled, every layer attends to the full context", *h.SlidingWindow))
	}
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, swigluProj, "", "mlp.experts.0", swigluProj)
	})
}
