package model

import "fmt"

// hfGptOss mirrors the config.json of GptOssForCausalLM (gpt-oss-120b/20b).
type hfGptOss struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	NumLocalExperts    int      `json:"num_local_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	ExpertsPerToken    int      `json:"experts_per_token"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	AttentionBias      *bool    `json:"attention_bias"`
	SlidingWindow      *int     `json:"sliding_window"`
	LayerTypes         []string `json:"layer_types"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

// parseGptOss converts gpt-oss: GQA (head_dim 64) with biases on q/k/v and
// o_proj and one attention-sink logit per head; sliding_window on the
// layers layer_types marks "sliding_attention" (every other layer when
// layer_types is absent); every layer MoE, experts with biases, router with
// bias; no shared expert.
func parseGptOss(d *doc) (*Config, error) {
	h, err := decodeFamily[hfGptOss](d, localExpertsRename)
	if err != nil {
		return nil, err
	}
	topK := h.NumExpertsPerTok
	if topK == 0 {
		topK = h.ExpertsPerToken
	}
	bias := h.AttentionBias == nil || *h.AttentionBias
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "gpt_oss",
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		MoEStep:       1,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn:          gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.HeadDim, h.HiddenSize),
		MoE:           MoE{Experts: h.NumLocalExperts, TopK: topK, Inter: h.IntermediateSize, RouterBias: true, ExpertBias: true},
	}
	c.Attn.QKVBias, c.Attn.OBias, c.Attn.Sinks = bias, bias, true
	if err := checkWindow(d, "sliding_window", h.SlidingWindow); err != nil {
		return nil, err
	}
	if h.SlidingWindow != nil && *h.SlidingWindow > 0 {
		window := *h.SlidingWindow
		n := 0
		if h.LayerTypes == nil {
			n = h.NumHiddenLayers / 2
		}
		for i, t := range h.LayerTypes {
			switch t {
			case "sliding_attention":
				n++
			case "full_attention":
			default:
				return nil, d.keyErr("layer_types", "entry %d: unknown layer type %q (want sliding_attention or full_attention)", i, t)
			}
		}
		if h.LayerTypes != nil && len(h.LayerTypes) != h.NumHiddenLayers {
			return nil, d.keyErr("layer_types", "has %d entries for %d layers", len(h.LayerTypes), h.NumHiddenLayers)
		}
		c.Attn.SlidingWindow, c.Attn.SlidingLayers = window, n
		c.Notes = append(c.Notes, fmt.Sprintf("sliding window %d on %d of %d layers: attention there reads min(context, %d) tokens and their KV is bounded at the window (vLLM's hybrid KV-cache manager); priced as one layer kind blending both",
			window, n, h.NumHiddenLayers, window))
	}
	c.Notes = append(c.Notes, "active parameters per token count the embedding table; the gpt-oss model card's active count (5.13B for gpt-oss-120b) leaves it out")
	if q := h.QuantizationConfig; q != nil && q.QuantMethod == "mxfp4" {
		c.Notes = append(c.Notes, "mxfp4 experts: vLLM pads each rank's expert width to a multiple of 128 or 256 (kernel backend dependent); the padding is not counted")
	}
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, nil, "", "mlp.experts", []string{"gate_up_proj", "down_proj"})
	})
}
