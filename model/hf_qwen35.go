package model

import "fmt"

// hfQwen35 mirrors the text_config of Qwen3_5ForConditionalGeneration and
// Qwen3_5MoeForConditionalGeneration (Qwen3.5, Qwen3.6): Gated DeltaNet
// linear-attention layers beside gated full-attention layers (layer_types),
// a dense SwiGLU MLP or Qwen3-Next MoE (routed experts plus one gated shared
// expert) in every layer, and MTP layers (mtp_num_hidden_layers).
type hfQwen35 struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	MoEIntermediate    int      `json:"moe_intermediate_size"`
	SharedIntermediate int      `json:"shared_expert_intermediate_size"`
	NumExperts         int      `json:"num_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	MLPOnlyLayers      []int    `json:"mlp_only_layers"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	AttentionBias      bool     `json:"attention_bias"`
	AttnOutputGate     *bool    `json:"attn_output_gate"`
	LayerTypes         []string `json:"layer_types"`
	FullAttnInterval   int      `json:"full_attention_interval"`
	LinearConvKernel   int      `json:"linear_conv_kernel_dim"`
	LinearKeyHeadDim   int      `json:"linear_key_head_dim"`
	LinearNumKeyHeads  int      `json:"linear_num_key_heads"`
	LinearNumValHeads  int      `json:"linear_num_value_heads"`
	LinearValueHeadDim int      `json:"linear_value_head_dim"`
	MambaSSMDtype      string   `json:"mamba_ssm_dtype"`
	MTPLayers          int      `json:"mtp_num_hidden_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

var qwen35Rename = map[string]string{"n_shared_experts": "shared_expert_intermediate_size", "first_k_dense_replace": "mlp_only_layers",
	"num_hidden_layers": "layer_types"}

func parseQwen35(d *doc) (*Config, error)    { return parseQwen35Family(d, false) }
func parseQwen35Moe(d *doc) (*Config, error) { return parseQwen35Family(d, true) }

// parseQwen35Family converts Qwen3.5 as vLLM builds it (vllm-project/vllm
// @ 8744bb0, vllm/model_executor/models/qwen3_5.py and qwen3_next.py):
//
//   - full-attention layers: GQA with per-head q/k RMSNorm and, with
//     attn_output_gate (default true), q_proj emitting a sigmoid gate of
//     Heads x head_dim beside the queries;
//   - linear_attention layers: Gated DeltaNet with linear_num_key_heads key
//     heads of linear_key_head_dim, linear_num_value_heads value heads of
//     linear_value_head_dim, a causal conv of linear_conv_kernel_dim taps;
//     recurrent state value heads x key dim x value dim in mamba_ssm_dtype
//     (float32 in the shipped configs) per sequence;
//   - layer_types absent: every full_attention_interval-th layer is full;
//   - MoE: routed experts plus one shared expert of
//     shared_expert_intermediate_size (its hidden -> 1 sigmoid gate, under
//     0.001% of the weights, not counted).
func parseQwen35Family(d *doc, moe bool) (*Config, error) {
	h, err := decodeFamily[hfQwen35](d, qwen35Rename)
	if err != nil {
		return nil, err
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "qwen3_5",
		DenseModel:    !moe,
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		DenseInter:    h.IntermediateSize,
		MoEStep:       1,
		MoEPhase:      1,
		DenseOnly:     h.MLPOnlyLayers,
		MTPLayers:     h.MTPLayers,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn:          gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.HeadDim, h.HiddenSize),
	}
	c.Attn.QKNorm, c.Attn.QKVBias = true, h.AttentionBias
	c.Attn.OutputGate = h.AttnOutputGate == nil || *h.AttnOutputGate
	if moe {
		c.Family = "qwen3_5_moe"
		c.MoE = MoE{Experts: h.NumExperts, TopK: h.NumExpertsPerTok, Inter: h.MoEIntermediate}
		if h.SharedIntermediate > 0 {
			c.MoE.Shared, c.MoE.SharedInter = 1, h.SharedIntermediate
		}
	}
	types := h.LayerTypes
	if types == nil && h.FullAttnInterval > 0 && h.NumHiddenLayers > 0 && h.NumHiddenLayers <= maxLayers {
		for i := range h.NumHiddenLayers {
			t := "linear_attention"
			if (i+1)%h.FullAttnInterval == 0 {
				t = "full_attention"
			}
			types = append(types, t)
		}
	}
	if h.NumHiddenLayers > maxLayers {
		return nil, d.keyErr("num_hidden_layers", "%d is implausibly large (limit %d)", h.NumHiddenLayers, maxLayers)
	}
	kindOf, err := layerTypes(d, "layer_types", types, h.NumHiddenLayers, "full_attention", "linear_attention")
	if err != nil {
		return nil, err
	}
	stateBytes, err := ssmDtype(d, "mamba_ssm_dtype", h.MambaSSMDtype)
	if err != nil {
		return nil, err
	}
	rec := Recurrent{Heads: h.LinearNumValHeads, KHeads: h.LinearNumKeyHeads, KDim: h.LinearKeyHeadDim, VDim: h.LinearValueHeadDim,
		Conv: h.LinearConvKernel, StateBytes: stateBytes}
	if rec.KHeads <= 0 || rec.Heads%rec.KHeads != 0 {
		return nil, d.keyErr("linear_num_value_heads", "must be a positive multiple of linear_num_key_heads (%d), got %d", rec.KHeads, rec.Heads)
	}
	var kb kindBuilder
	linear := 0
	for i, t := range kindOf {
		ffn, fname := FFNDense, "dense"
		if moe && !containsInt(h.MLPOnlyLayers, i) {
			ffn, fname = FFNMoE, "moe"
		}
		k := LayerKind{FFN: ffn}
		if ffn == FFNDense {
			k.Inter = h.IntermediateSize
		}
		if t == 0 {
			k.Name, k.Mixer, k.Attn = "full "+fname, MixAttention, c.Attn
		} else {
			k.Name, k.Mixer, k.Rec = "gdn "+fname, MixGDN, rec
			linear++
		}
		kb.add(k)
	}
	kb.set(c)
	c.Notes = append(c.Notes, fmt.Sprintf("%d of %d layers Gated DeltaNet (%d key heads x %d, %d value heads x %d, conv %d): recurrent state of %.1f MB per sequence (state %s), no KV cache",
		linear, h.NumHiddenLayers, rec.KHeads, rec.KDim, rec.Heads, rec.VDim, rec.Conv, c.RecurrentStateBytes()/1e6, bytesName(stateBytes)))
	if c.Attn.OutputGate {
		c.Notes = append(c.Notes, "full-attention layers: attn_output_gate, q_proj emits a sigmoid gate of heads x head_dim (counted as the q_proj gate)")
	}
	noteMTP(c)
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return qwen35Modules(c)
	})
}

// qwen35Modules names Qwen3.5's modules as moecast names them
// ("model.layers.N..."; the quantization readers strip the wrapper's
// "model.language_model." prefix from the checkpoint's names).
// The attention class takes the format of the first full-attention
// layer's self_attn projections. The Gated DeltaNet projections take the
// format of the first GDN layer's linear_attn modules, fused as SGLang and
// vLLM fuse them (sgl-project/sglang @ 005fa71
// python/sglang/srt/models/qwen3_5.py packed_modules_mapping: in_proj_qkvz
// = in_proj_qkv + in_proj_z, in_proj_ba = in_proj_b + in_proj_a); where
// they match the attention class they share its format.
func qwen35Modules(c *Config) modules {
	m := hfModules(c, gqaProjs, swigluProj, "mlp.shared_expert", "mlp.experts.0", swigluProj)
	for i := range c.Layers {
		if k, ok := c.kindAt(i); ok && k.Mixer == MixAttention {
			for j, p := range gqaProjs {
				m.attention[j] = fmt.Sprintf("model.layers.%d.self_attn.%s", i, p)
			}
			break
		}
	}
	for i := range c.Layers {
		if k, ok := c.kindAt(i); ok && k.Mixer == MixGDN {
			at := func(p string) string { return fmt.Sprintf("model.layers.%d.linear_attn.%s", i, p) }
			m.mixer = map[string][]string{
				"in_proj_qkvz": {at("in_proj_qkv"), at("in_proj_z")},
				"in_proj_ba":   {at("in_proj_b"), at("in_proj_a")},
				"out_proj":     {at("out_proj")},
			}
			break
		}
	}
	return m
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ssmDtype reads a recurrent-state dtype key (mamba_ssm_dtype,
// mamba_ssm_cache_dtype): float32 is 4 bytes, bfloat16/float16 2; absent
// means the checkpoint dtype, taken as 2 (bf16).
func ssmDtype(d *doc, key, v string) (int, error) {
	switch v {
	case "float32":
		return 4, nil
	case "", "bfloat16", "float16", "auto":
		return 2, nil
	}
	return 0, d.keyErr(key, "unsupported dtype %q (want float32, bfloat16 or float16)", v)
}

func bytesName(b int) string {
	if b == 4 {
		return "fp32"
	}
	return "bf16"
}
