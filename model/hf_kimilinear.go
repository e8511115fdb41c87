package model

import "fmt"

// hfKimiLinear mirrors the text_config of KimiK3ForConditionalGeneration
// (the text model is KimiLinearForCausalLM, as for Kimi-Linear-48B): Kimi
// Delta Attention layers beside MLA layers (linear_attn_config), DeepSeek-
// style MoE with shared experts and, for Kimi-K3, experts in a latent
// width (routed_expert_hidden_size).
type hfKimiLinear struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	MoEIntermediate    int      `json:"moe_intermediate_size"`
	FirstKDense        int      `json:"first_k_dense_replace"`
	MoELayerFreq       *int     `json:"moe_layer_freq"`
	NumExperts         int      `json:"num_experts"`
	NumExpertsPerToken int      `json:"num_experts_per_token"`
	NumSharedExperts   *int     `json:"num_shared_experts"`
	RoutedExpertHidden *int     `json:"routed_expert_hidden_size"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	QLoRARank          *int     `json:"q_lora_rank"`
	KVLoRARank         int      `json:"kv_lora_rank"`
	QKNopeHeadDim      int      `json:"qk_nope_head_dim"`
	QKRopeHeadDim      int      `json:"qk_rope_head_dim"`
	VHeadDim           int      `json:"v_head_dim"`
	MLAOutputGate      bool     `json:"mla_use_output_gate"`
	AttnResBlock       int      `json:"attn_res_block_size"`
	NumNextNPredict    int      `json:"num_nextn_predict_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
	Linear             *struct {
		FullAttnLayers []int `json:"full_attn_layers"`
		KDALayers      []int `json:"kda_layers"`
		HeadDim        int   `json:"head_dim"`
		NumHeads       int   `json:"num_heads"`
		ConvKernel     int   `json:"short_conv_kernel_size"`
		FullRankGate   bool  `json:"use_full_rank_gate"`
	} `json:"linear_attn_config"`
}

var kimiLinearRename = map[string]string{"num_experts_per_tok": "num_experts_per_token", "n_shared_experts": "num_shared_experts"}

// parseKimiLinear converts Kimi-Linear / Kimi-K3 as vLLM builds them
// (vllm-project/vllm @ 01d9958, vllm/model_executor/models/kimi_linear.py
// and layers/kda.py): the layers linear_attn_config.kda_layers lists
// (1-based) run KDA with num_heads heads of head_dim (q, k, v projections
// and short convs, low-rank decay and output gates of head_dim, or a
// full-rank decay gate with use_full_rank_gate; state heads x head_dim x
// head_dim in fp32); the full_attn_layers run MLA (q_lora_rank set: q_a /
// q_b as DeepSeek-V3; mla_use_output_gate adds a gate projection of heads
// x v_head_dim). Layers from first_k_dense_replace on are MoE: num_experts
// routed experts of moe_intermediate_size (in routed_expert_hidden_size
// when set, between latent projections) and num_shared_experts fused into
// one MLP.
func parseKimiLinear(d *doc) (*Config, error) {
	h, err := decodeFamily[hfKimiLinear](d, kimiLinearRename)
	if err != nil {
		return nil, err
	}
	if h.Linear == nil {
		return nil, d.keyErr("linear_attn_config", "missing: the KDA layers are listed there")
	}
	la := h.Linear
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "kimi_linear",
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		DenseInter:    h.IntermediateSize,
		DenseLayers:   h.FirstKDense,
		MoEStep:       1,
		MTPLayers:     h.NumNextNPredict,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn: Attention{Kind: MLA, Heads: h.NumAttentionHeads, KVHeads: h.NumAttentionHeads, KVLoRARank: h.KVLoRARank,
			QKNopeDim: h.QKNopeHeadDim, QKRopeDim: h.QKRopeHeadDim, VHeadDim: h.VHeadDim, OutputGate: h.MLAOutputGate},
	}
	if h.QLoRARank != nil {
		c.Attn.QLoRARank = *h.QLoRARank
	}
	shared := 0
	if h.NumSharedExperts != nil {
		shared = *h.NumSharedExperts
	}
	c.MoE = deepseekMoE(h.NumExperts, h.NumExpertsPerToken, shared, h.MoEIntermediate, true)
	if h.RoutedExpertHidden != nil && *h.RoutedExpertHidden > 0 && *h.RoutedExpertHidden != h.HiddenSize {
		c.MoE.Latent = *h.RoutedExpertHidden
	}
	step := 1
	if h.MoELayerFreq != nil && *h.MoELayerFreq > 0 {
		step = *h.MoELayerFreq
	}
	c.MoEStep = step
	if h.NumHiddenLayers > maxLayers || h.NumHiddenLayers < 0 {
		return nil, d.keyErr("num_hidden_layers", "%d is not a plausible layer count (limit %d)", h.NumHiddenLayers, maxLayers)
	}
	isKDA := make([]bool, h.NumHiddenLayers)
	for _, l := range la.KDALayers {
		if l < 1 || l > h.NumHiddenLayers {
			return nil, d.keyErr("linear_attn_config", "kda_layers entry %d is not a layer number in [1, %d]", l, h.NumHiddenLayers)
		}
		isKDA[l-1] = true
	}
	for _, l := range la.FullAttnLayers {
		if l < 1 || l > h.NumHiddenLayers || isKDA[l-1] {
			return nil, d.keyErr("linear_attn_config", "full_attn_layers entry %d is not a free layer number in [1, %d]", l, h.NumHiddenLayers)
		}
	}
	if len(la.KDALayers)+len(la.FullAttnLayers) != h.NumHiddenLayers {
		return nil, d.keyErr("linear_attn_config", "kda_layers (%d) and full_attn_layers (%d) do not cover the %d layers", len(la.KDALayers), len(la.FullAttnLayers), h.NumHiddenLayers)
	}
	rec := Recurrent{Heads: la.NumHeads, KHeads: la.NumHeads, KDim: la.HeadDim, VDim: la.HeadDim, Conv: la.ConvKernel, StateBytes: 4, GateRank: la.HeadDim}
	if la.FullRankGate {
		rec.GateRank = 0
	}
	var kb kindBuilder
	for i := range h.NumHiddenLayers {
		moe := i >= h.FirstKDense && i%step == 0
		k := LayerKind{Mixer: MixAttention, Attn: c.Attn, FFN: FFNDense, Inter: h.IntermediateSize, Name: "mla dense"}
		if moe {
			k.FFN, k.Inter, k.Name = FFNMoE, 0, "mla moe"
		}
		if isKDA[i] {
			k.Mixer, k.Attn, k.Rec, k.Name = MixKDA, Attention{}, rec, "kda"+k.Name[3:]
		}
		kb.add(k)
	}
	kb.set(c)
	c.Notes = append(c.Notes, fmt.Sprintf("%d KDA layers (%d heads x %d, conv %d): recurrent state %.1f MB per sequence (fp32), no KV cache; %d MLA layers",
		len(la.KDALayers), rec.Heads, rec.KDim, rec.Conv, c.RecurrentStateBytes()/1e6, len(la.FullAttnLayers)))
	if la.FullRankGate {
		c.Notes = append(c.Notes, "use_full_rank_gate: the KDA decay gate is counted as one full-rank projection hidden -> heads x head_dim")
	}
	if c.MoE.Latent > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("routed experts at width %d between latent projections (counted with the shared experts); the all-to-all is priced at the hidden width", c.MoE.Latent))
	}
	if h.AttnResBlock > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("attention residuals (attn_res_block_size %d) not modelled: their weights and cost are not counted", h.AttnResBlock))
	}
	c.Notes = append(c.Notes, "vision tower not counted (text decode never runs it)")
	noteMTP(c)
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		attn := mlaProjs
		if c.Attn.QLoRARank == 0 {
			attn = []string{"q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"}
		}
		return hfModules(c, attn, swigluProj, "block_sparse_moe.shared_experts", "block_sparse_moe.experts.0", swigluProj)
	})
}
