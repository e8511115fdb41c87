package model

import "fmt"

// hfDeepseekV3 mirrors the config.json of DeepseekV3ForCausalLM (DeepSeek-V3,
// DeepSeek-R1, Kimi-K2, the Kimi-K2.5 text model) and of GlmMoeDsaForCausalLM
// (GLM-5: the same MLA/MoE keys plus the DSA indexer's).
type hfDeepseekV3 struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	MoEIntermediate    int      `json:"moe_intermediate_size"`
	FirstKDense        int      `json:"first_k_dense_replace"`
	MoELayerFreq       *int     `json:"moe_layer_freq"`
	NRoutedExperts     int      `json:"n_routed_experts"`
	NSharedExperts     int      `json:"n_shared_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	QLoRARank          *int     `json:"q_lora_rank"`
	KVLoRARank         int      `json:"kv_lora_rank"`
	QKNopeHeadDim      int      `json:"qk_nope_head_dim"`
	QKRopeHeadDim      int      `json:"qk_rope_head_dim"`
	VHeadDim           int      `json:"v_head_dim"`
	NumNextNPredict    int      `json:"num_nextn_predict_layers"`
	TopKMethod         string   `json:"topk_method"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`

	// GLM-5 DSA indexer.
	IndexNHeads  int `json:"index_n_heads"`
	IndexHeadDim int `json:"index_head_dim"`
	IndexTopK    int `json:"index_topk"`
}

// deepseekRename is the key spelling of DeepSeek-style MoE (also GLM-4.5).
var deepseekRename = map[string]string{"num_experts": "n_routed_experts"}

func parseDeepseekV3(d *doc) (*Config, error) { return parseMLA(d, "deepseek_v3") }

func parseGlmMoeDsa(d *doc) (*Config, error) { return parseMLA(d, "glm_moe_dsa") }

// parseDeepseekV32 reads DeepSeek-V3.2 (DeepSeek Sparse Attention: the
// lightning indexer over the whole context, attention over index_topk
// selected tokens; vllm-project/vllm @ 8744bb0, deepseek_v2.py with
// Indexer), which GLM-5 follows.
func parseDeepseekV32(d *doc) (*Config, error) { return parseMLA(d, "deepseek_v32") }

// parseMLA converts the DeepSeek-V3 key set (MoE: see deepseekMoE; the
// router has a correction bias when topk_method is noaux_tc).
func parseMLA(d *doc, fam string) (*Config, error) {
	h, err := decodeFamily[hfDeepseekV3](d, deepseekRename)
	if err != nil {
		return nil, err
	}
	c := &Config{
		ModelType:   h.ModelType,
		Family:      fam,
		Hidden:      h.HiddenSize,
		Layers:      h.NumHiddenLayers,
		Vocab:       h.VocabSize,
		DenseInter:  h.IntermediateSize,
		DenseLayers: h.FirstKDense,
		MoEStep:     1,
		MTPLayers:   h.NumNextNPredict,
		MaxPosition: h.MaxPosition,

		TieEmbeddings: h.TieWordEmbeddings,
		Attn: Attention{
			Kind:         MLA,
			Heads:        h.NumAttentionHeads,
			KVHeads:      h.NumAttentionHeads,
			KVLoRARank:   h.KVLoRARank,
			QKNopeDim:    h.QKNopeHeadDim,
			QKRopeDim:    h.QKRopeHeadDim,
			VHeadDim:     h.VHeadDim,
			IndexHeads:   h.IndexNHeads,
			IndexHeadDim: h.IndexHeadDim,
			IndexTopK:    h.IndexTopK,
		},
		MoE: deepseekMoE(h.NRoutedExperts, h.NumExpertsPerTok, h.NSharedExperts, h.MoEIntermediate, h.TopKMethod == "noaux_tc"),
	}
	if h.QLoRARank != nil {
		c.Attn.QLoRARank = *h.QLoRARank
	}
	if h.MoELayerFreq != nil {
		c.MoEStep = *h.MoELayerFreq
	}
	if fam != "deepseek_v3" && c.Attn.IndexHeads > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("DSA indexer (%d heads x %d, top-%d) on every layer: its projections count as attention weights (replicated), "+
			"its key cache as %d B/token/layer (fp8 + fp32 scale per 128, vLLM DeepSeek-V3.2 layout); attention reads at most index_topk tokens of the latent",
			c.Attn.IndexHeads, c.Attn.IndexHeadDim, c.Attn.IndexTopK, c.Attn.IndexHeadDim+4*ceilDiv(c.Attn.IndexHeadDim, 128)))
	}
	noteMTP(c)
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		attn := mlaProjs
		if c.Attn.QLoRARank == 0 {
			attn = []string{"q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"}
		}
		return hfModules(c, attn, swigluProj, "mlp.shared_experts", "mlp.experts.0", swigluProj)
	})
}
