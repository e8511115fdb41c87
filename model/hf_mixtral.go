package model

import "fmt"

// hfMixtral mirrors the config.json of MixtralForCausalLM (Mixtral-8x7B,
// 8x22B): every layer MoE, experts of width intermediate_size, no shared
// expert, GQA.
type hfMixtral struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	NumLocalExperts    int      `json:"num_local_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	SlidingWindow      *int     `json:"sliding_window"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

func parseMixtral(d *doc) (*Config, error) {
	h, err := decodeFamily[hfMixtral](d, localExpertsRename)
	if err != nil {
		return nil, err
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "mixtral",
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		MoEStep:       1,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn:          gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.HeadDim, h.HiddenSize),
		MoE:           MoE{Experts: h.NumLocalExperts, TopK: h.NumExpertsPerTok, Inter: h.IntermediateSize},
	}
	if err := checkWindow(d, "sliding_window", h.SlidingWindow); err != nil {
		return nil, err
	}
	if h.SlidingWindow != nil && *h.SlidingWindow > 0 {
		c.Attn.SlidingWindow, c.Attn.SlidingLayers = *h.SlidingWindow, h.NumHiddenLayers
		c.Notes = append(c.Notes, fmt.Sprintf("sliding window %d on every layer: attention reads min(context, window) tokens and the KV is bounded at the window", *h.SlidingWindow))
	}
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, nil, "", "block_sparse_moe.experts.0", []string{"w1", "w3", "w2"})
	})
}
