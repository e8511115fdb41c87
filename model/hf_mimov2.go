package model

import "fmt"

// hfMiMoV2 mirrors the config.json of MiMoV2FlashForCausalLM (MiMo-V2-Flash):
// global and sliding-window GQA layers (hybrid_layer_pattern) with q/k
// head dim unlike v, MoE layers per moe_layer_freq.
type hfMiMoV2 struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	MoEIntermediate    int      `json:"moe_intermediate_size"`
	NRoutedExperts     int      `json:"n_routed_experts"`
	NSharedExperts     *int     `json:"n_shared_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	MoELayerFreq       []int    `json:"moe_layer_freq"`
	TopKMethod         string   `json:"topk_method"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	VHeadDim           int      `json:"v_head_dim"`
	SWAHeads           int      `json:"swa_num_attention_heads"`
	SWAKVHeads         int      `json:"swa_num_key_value_heads"`
	SWAHeadDim         *int     `json:"swa_head_dim"`
	SWAVHeadDim        int      `json:"swa_v_head_dim"`
	SlidingWindow      *int     `json:"sliding_window"`
	HybridPattern      []int    `json:"hybrid_layer_pattern"`
	SWASinks           bool     `json:"add_swa_attention_sink_bias"`
	FullSinks          bool     `json:"add_full_attention_sink_bias"`
	AttentionBias      bool     `json:"attention_bias"`
	NumNextNPredict    int      `json:"num_nextn_predict_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

// parseMiMoV2 converts MiMo-V2-Flash as vLLM builds it (vllm-project/vllm
// @ 8744bb0, vllm/model_executor/models/mimo_v2_flash.py): layers with
// hybrid_layer_pattern 0 attend globally (num_attention_heads,
// num_key_value_heads, head_dim for q/k and v_head_dim for v), those with 1
// attend sliding_window tokens with the swa_* shapes and a learned sink per
// head; layers with moe_layer_freq 1 hold n_routed_experts routed experts
// (router with correction bias under noaux_tc), the others a dense MLP of
// intermediate_size.
func parseMiMoV2(d *doc) (*Config, error) {
	h, err := decodeFamily[hfMiMoV2](d, deepseekRename)
	if err != nil {
		return nil, err
	}
	if err := checkWindow(d, "sliding_window", h.SlidingWindow); err != nil {
		return nil, err
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "mimo_v2",
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		DenseInter:    h.IntermediateSize,
		MoEStep:       1,
		MTPLayers:     h.NumNextNPredict,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		MoE:           MoE{Experts: h.NRoutedExperts, TopK: h.NumExpertsPerTok, Inter: h.MoEIntermediate, RouterBias: h.TopKMethod == "noaux_tc"},
	}
	if h.NSharedExperts != nil && *h.NSharedExperts > 0 {
		c.MoE.Shared, c.MoE.SharedInter = *h.NSharedExperts, *h.NSharedExperts*h.MoEIntermediate
	}
	full := gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.HeadDim, h.HiddenSize)
	full.VHeadDim, full.QKVBias, full.Sinks = h.VHeadDim, h.AttentionBias, h.FullSinks
	swa := gqaAttention(h.SWAHeads, h.SWAKVHeads, h.SWAHeadDim, h.HiddenSize)
	swa.VHeadDim, swa.QKVBias, swa.Sinks = h.SWAVHeadDim, h.AttentionBias, h.SWASinks
	if h.SlidingWindow != nil {
		swa.SlidingWindow = *h.SlidingWindow
	}
	c.Attn = full
	if h.NumHiddenLayers > maxLayers || h.NumHiddenLayers < 0 {
		return nil, d.keyErr("num_hidden_layers", "%d is not a plausible layer count (limit %d)", h.NumHiddenLayers, maxLayers)
	}
	if len(h.HybridPattern) != h.NumHiddenLayers {
		return nil, d.keyErr("hybrid_layer_pattern", "has %d entries for %d layers", len(h.HybridPattern), h.NumHiddenLayers)
	}
	if len(h.MoELayerFreq) != h.NumHiddenLayers {
		return nil, d.keyErr("moe_layer_freq", "has %d entries for %d layers", len(h.MoELayerFreq), h.NumHiddenLayers)
	}
	var kb kindBuilder
	nSWA := 0
	for i := range h.NumHiddenLayers {
		k := LayerKind{Mixer: MixAttention, Attn: full, FFN: FFNDense, Inter: h.IntermediateSize, Name: "full dense"}
		if h.MoELayerFreq[i] != 0 {
			k.FFN, k.Inter, k.Name = FFNMoE, 0, "full moe"
		}
		if h.HybridPattern[i] != 0 {
			if swa.SlidingWindow <= 0 {
				return nil, d.keyErr("sliding_window", "sliding-window layers need a window > 0")
			}
			k.Attn, k.SlideFrac, k.Name = swa, 1, "swa"+k.Name[4:]
			nSWA++
		}
		kb.add(k)
	}
	kb.set(c)
	c.Notes = append(c.Notes, fmt.Sprintf("%d sliding-window layers (window %d, %d/%d heads, q/k %d, v %d) and %d global layers (%d/%d heads, q/k %d, v %d); the windowed KV is bounded at the window",
		nSWA, swa.SlidingWindow, swa.Heads, swa.KVHeads, swa.HeadDim, swa.VDim(), h.NumHiddenLayers-nSWA, full.Heads, full.KVHeads, full.HeadDim, full.VDim()))
	noteMTP(c)
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, swigluProj, "mlp.shared_experts", "mlp.experts.0", swigluProj)
	})
}
