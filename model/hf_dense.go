package model

import "fmt"

// hfDense mirrors the config.json of the dense GQA decoders:
// LlamaForCausalLM (Llama-3.1), Qwen3ForCausalLM (Qwen3 dense; also the
// text model of Qwen3VLForConditionalGeneration) and MiMoForCausalLM
// (MiMo-7B: Qwen2 layers with q/k/v biases and MTP layers).
type hfDense struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   *int     `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	AttentionBias      bool     `json:"attention_bias"`
	MLPBias            bool     `json:"mlp_bias"`
	UseSlidingWindow   bool     `json:"use_sliding_window"`
	SlidingWindow      *int     `json:"sliding_window"`
	NumNextNPredict    int      `json:"num_nextn_predict_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

func parseLlama(d *doc) (*Config, error) { return parseDense(d, "llama", false) }
func parseQwen3(d *doc) (*Config, error) { return parseDense(d, "qwen3", true) }
func parseMiMo(d *doc) (*Config, error)  { return parseDense(d, "mimo", false) }

// parseDense converts a dense decoder: every layer GQA attention (q/k/v
// biases when attention_bias; per-head q/k RMSNorm for Qwen3) and a SwiGLU
// MLP of intermediate_size. num_key_value_heads absent means MHA (HF's
// default). MiMo's num_nextn_predict_layers MTP layers are counted in
// class mtp, each one dense decoder layer plus eh_proj (vLLM
// mimo_mtp.py MiMoMultiTokenPredictorLayer).
func parseDense(d *doc, fam string, qkNorm bool) (*Config, error) {
	h, err := decodeFamily[hfDense](d, nil)
	if err != nil {
		return nil, err
	}
	kv := h.NumAttentionHeads
	if h.NumKeyValueHeads != nil {
		kv = *h.NumKeyValueHeads
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        fam,
		DenseModel:    true,
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		DenseInter:    h.IntermediateSize,
		MoEStep:       1,
		MTPLayers:     h.NumNextNPredict,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn:          gqaAttention(h.NumAttentionHeads, kv, h.HeadDim, h.HiddenSize),
	}
	c.Attn.QKNorm, c.Attn.QKVBias = qkNorm, h.AttentionBias
	if h.MLPBias {
		c.Notes = append(c.Notes, "mlp_bias: the MLP biases (under 0.01% of the weights) are not counted")
	}
	if err := checkWindow(d, "sliding_window", h.SlidingWindow); err != nil {
		return nil, err
	}
	if h.UseSlidingWindow && h.SlidingWindow != nil && *h.SlidingWindow > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("use_sliding_window with window %d: not modelled, every layer attends to the full context", *h.SlidingWindow))
	}
	noteMTP(c)
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, swigluProj, "", "", nil)
	})
}
