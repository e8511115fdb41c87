package model

import "fmt"

// Steps shared by the family importers (hf_<family>.go). Each family keeps
// its own raw struct mirroring its config.json; these helpers hold the
// conversion steps whose logic is the same for all of them.

// decodeFamily sets the family's key renames on d (so that errors name the
// family's keys) and decodes d into the family's raw struct T.
func decodeFamily[T any](d *doc, rename map[string]string) (*T, error) {
	d.rename = rename
	var h T
	if err := d.decode(&h); err != nil {
		return nil, err
	}
	return &h, nil
}

// finishFamily ends every import: the checkpoint dtype (torch_dtype, or
// dtype), the dimension checks (errors positioned at the family's keys),
// then the storage formats from quantization_config q for the modules
// mods names. mods runs only once the dimensions are valid (it walks the
// layers).
func finishFamily(d *doc, c *Config, torchDtype, dtypeField string, q *hfQuant, mods func() modules) (*Config, error) {
	base, err := hfDtype(d, c, torchDtype, dtypeField)
	if err != nil {
		return nil, err
	}
	if err := c.validateDims(); err != nil {
		return nil, d.fieldErr(err)
	}
	if err := applyQuant(d.quantDoc(), c, q, mods(), base); err != nil {
		return nil, err
	}
	return c, nil
}

// localExpertsRename is the key spelling of the families with
// num_local_experts routed experts, each intermediate_size wide and no
// moe_intermediate_size key (Mixtral, gpt-oss).
var localExpertsRename = map[string]string{"num_experts": "num_local_experts", "moe_intermediate_size": "intermediate_size"}

// deepseekMoE is DeepSeek-style MoE, as DeepSeek-V3, GLM-5 and GLM-4.5
// spell it: experts routed experts (n_routed_experts), topK per token
// (num_experts_per_tok), each inter wide (moe_intermediate_size); the
// shared experts (n_shared_experts) are fused into one MLP of width
// shared x inter (vLLM DeepseekV2MoE). routerBias: the router has a
// score-correction bias.
func deepseekMoE(experts, topK, shared, inter int, routerBias bool) MoE {
	return MoE{Experts: experts, TopK: topK, Shared: shared, Inter: inter, SharedInter: shared * inter, RouterBias: routerBias}
}

// noteMTP notes the num_nextn_predict_layers MTP layers, when there are any
// (DeepSeek-V3, GLM-4.5, GLM-5).
func noteMTP(c *Config) {
	if c.MTPLayers > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d MTP layer(s) counted in class mtp (one MoE decoder layer + eh_proj + 3 norms each; embedding and lm_head shared); loaded by vLLM only for MTP speculative decoding", c.MTPLayers))
	}
}

// gqaAttention is grouped-query attention with num_attention_heads heads,
// num_key_value_heads KV heads and head_dim (see gqaHeadDim); the family
// sets its biases, norms and sinks.
func gqaAttention(heads, kvHeads int, headDim *int, hidden int) Attention {
	return Attention{Kind: GQA, Heads: heads, KVHeads: kvHeads, HeadDim: gqaHeadDim(headDim, hidden, heads)}
}

// gqaHeadDim is head_dim as given (Validate rejects a value <= 0), or
// hidden_size / num_attention_heads when the config leaves it out or sets
// it to null (HF's default); 0 when that is not usable either (Validate
// then names head_dim).
func gqaHeadDim(headDim *int, hidden, heads int) int {
	if headDim != nil {
		return *headDim
	}
	if heads > 0 && hidden > 0 && hidden%heads == 0 {
		return hidden / heads
	}
	return 0
}

// checkWindow rejects a negative sliding-window size (key sliding_window,
// or attention_chunk_size); 0, null or absent means no window.
func checkWindow(d *doc, key string, v *int) error {
	if v != nil && *v < 0 {
		return d.keyErr(key, "must be >= 0 (0, null or absent: no window), got %d", *v)
	}
	return nil
}
