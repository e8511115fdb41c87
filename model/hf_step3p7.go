package model

import "fmt"

// hfStep3p7 mirrors the config.json of Step3p7FlashForCausalLM (Step-3.7
// Flash, the Step-3.5 language backbone): full and sliding-window GQA
// layers (layer_types), leading dense layers, MoE with one shared expert
// and a router bias, MTP layers.
type hfStep3p7 struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	MoEIntermediate    int      `json:"moe_intermediate_size"`
	ShareExpertDim     int      `json:"share_expert_dim"`
	NSharedExperts     int      `json:"n_shared_experts"`
	NumExperts         int      `json:"num_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	FirstKDense        int      `json:"first_k_dense_replace"`
	UseRouterBias      bool     `json:"use_moe_router_bias"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	AttentionBias      bool     `json:"attention_bias"`
	LayerTypes         []string `json:"layer_types"`
	SlidingWindow      *int     `json:"sliding_window"`
	NumNextNPredict    int      `json:"num_nextn_predict_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

var step3p7Rename = map[string]string{"n_shared_experts": "share_expert_dim", "num_hidden_layers": "layer_types"}

// parseStep3p7 converts Step-3.7 Flash (vLLM serves its language model as
// Step-3.5's, vllm-project/vllm @ 8744bb0 step3p5.py): GQA on every layer,
// the layers layer_types marks sliding_attention attending sliding_window
// tokens with the same head shapes; the first first_k_dense_replace layers
// a dense MLP of intermediate_size, the others num_experts routed experts
// of moe_intermediate_size plus n_shared_experts of share_expert_dim.
func parseStep3p7(d *doc) (*Config, error) {
	h, err := decodeFamily[hfStep3p7](d, step3p7Rename)
	if err != nil {
		return nil, err
	}
	if err := checkWindow(d, "sliding_window", h.SlidingWindow); err != nil {
		return nil, err
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "step3p7",
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
		MoE:           MoE{Experts: h.NumExperts, TopK: h.NumExpertsPerTok, Inter: h.MoEIntermediate, RouterBias: h.UseRouterBias},
	}
	c.Attn.QKVBias = h.AttentionBias
	if h.NSharedExperts > 0 && h.ShareExpertDim > 0 {
		c.MoE.Shared, c.MoE.SharedInter = h.NSharedExperts, h.NSharedExperts*h.ShareExpertDim
	}
	if h.NumHiddenLayers > maxLayers || h.NumHiddenLayers < 0 {
		return nil, d.keyErr("num_hidden_layers", "%d is not a plausible layer count (limit %d)", h.NumHiddenLayers, maxLayers)
	}
	kindOf, err := layerTypes(d, "layer_types", h.LayerTypes, h.NumHiddenLayers, "full_attention", "sliding_attention")
	if err != nil {
		return nil, err
	}
	swa := c.Attn
	if h.SlidingWindow != nil {
		swa.SlidingWindow = *h.SlidingWindow
	}
	var kb kindBuilder
	nSWA := 0
	for i, t := range kindOf {
		k := LayerKind{Mixer: MixAttention, Attn: c.Attn, FFN: FFNDense, Inter: h.IntermediateSize, Name: "full dense"}
		if i >= h.FirstKDense {
			k.FFN, k.Inter, k.Name = FFNMoE, 0, "full moe"
		}
		if t == 1 {
			if swa.SlidingWindow <= 0 {
				return nil, d.keyErr("sliding_window", "sliding_attention layers need a window > 0")
			}
			k.Attn, k.SlideFrac, k.Name = swa, 1, "swa"+k.Name[4:]
			nSWA++
		}
		kb.add(k)
	}
	kb.set(c)
	c.Notes = append(c.Notes, fmt.Sprintf("%d of %d layers attend a sliding window of %d tokens; their KV is bounded at the window", nSWA, h.NumHiddenLayers, swa.SlidingWindow))
	noteMTP(c)
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, swigluProj, "moe.share_expert", "moe.experts.0", swigluProj)
	})
}
