package model

import "fmt"

// hfLlama4 mirrors the text_config of Llama4ForConditionalGeneration
// (Llama-4 Scout and Maverick; the text model is Llama4ForCausalLM).
type hfLlama4 struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	IntermediateMLP    int      `json:"intermediate_size_mlp"`
	InterleaveMoEStep  *int     `json:"interleave_moe_layer_step"`
	NumLocalExperts    int      `json:"num_local_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	AttentionBias      bool     `json:"attention_bias"`
	AttentionChunkSize int      `json:"attention_chunk_size"`
	NoRopeLayers       []int    `json:"no_rope_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

var llama4Rename = map[string]string{
	"num_experts": "num_local_experts", "moe_intermediate_size": "intermediate_size",
	"intermediate_size": "intermediate_size_mlp", "moe_layer_freq": "interleave_moe_layer_step",
	"n_shared_experts": "intermediate_size",
}

// parseLlama4 converts Llama-4: layer i is MoE when
// (i+1) % interleave_moe_layer_step == 0 (HF Llama4TextModel); MoE layers
// hold num_local_experts routed experts and one shared expert, all of width
// intermediate_size; dense layers an MLP of intermediate_size_mlp. GQA; the
// layers with rope use chunked attention over attention_chunk_size tokens,
// modelled as a sliding window of that size (a token reads up to the chunk
// size, fewer early in a chunk: an upper bound). Every fourth layer (NoPE)
// attends globally, as HF's default no_rope_layers gives. The vision tower
// is not counted.
func parseLlama4(d *doc) (*Config, error) {
	h, err := decodeFamily[hfLlama4](d, llama4Rename)
	if err != nil {
		return nil, err
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "llama4",
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		DenseInter:    h.IntermediateMLP,
		MoEStep:       1,
		MoEPhase:      1,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn:          gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.HeadDim, h.HiddenSize),
		MoE:           MoE{Experts: h.NumLocalExperts, TopK: h.NumExpertsPerTok, Shared: 1, Inter: h.IntermediateSize, SharedInter: h.IntermediateSize},
	}
	c.Attn.QKVBias, c.Attn.OBias = h.AttentionBias, h.AttentionBias
	if h.InterleaveMoEStep != nil {
		c.MoEStep = *h.InterleaveMoEStep
	}
	if err := checkWindow(d, "attention_chunk_size", &h.AttentionChunkSize); err != nil {
		return nil, err
	}
	if h.AttentionChunkSize > 0 {
		chunked := 0
		if h.NoRopeLayers != nil {
			// HF: no_rope_layers[i] == 1 means layer i uses rope (and chunked attention).
			for _, v := range h.NoRopeLayers {
				if v != 0 {
					chunked++
				}
			}
		} else {
			chunked = h.NumHiddenLayers - h.NumHiddenLayers/4
		}
		c.Attn.SlidingWindow, c.Attn.SlidingLayers = h.AttentionChunkSize, min(chunked, max(h.NumHiddenLayers, 0))
		c.Notes = append(c.Notes, fmt.Sprintf("chunked attention (%d tokens) on %d of %d layers modelled as a sliding window of %d (upper bound on tokens read and on their KV, which vLLM's chunked-local manager frees)",
			h.AttentionChunkSize, c.Attn.SlidingLayers, h.NumHiddenLayers, h.AttentionChunkSize))
	}
	c.Notes = append(c.Notes, "vision tower and projector not counted")
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModulesAt(c, gqaProjs, "feed_forward", swigluProj, "feed_forward.shared_expert", "feed_forward.experts", []string{"gate_up_proj", "down_proj"})
	})
}
