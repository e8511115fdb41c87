package model

import (
	"fmt"
	"strings"
)

// hfNemotronH mirrors the config.json of NemotronHForCausalLM (Nemotron-H,
// Nemotron-3 Nano/Super/Ultra, Nemotron-3.5): a stack of single-mixer
// blocks, each a norm, one mixer and the residual: Mamba-2 ("M", "mamba"),
// attention ("*", "attention"), a relu2 MLP ("-", "mlp") or an MoE block
// ("E", "moe"), as hybrid_override_pattern or layers_block_type lists them.
type hfNemotronH struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    *int     `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	Pattern            string   `json:"hybrid_override_pattern"`
	BlockTypes         []string `json:"layers_block_type"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	AttentionHeadDim   *int     `json:"attention_head_dim"`
	AttentionBias      bool     `json:"attention_bias"`
	MambaNumHeads      int      `json:"mamba_num_heads"`
	MambaHeadDim       int      `json:"mamba_head_dim"`
	SSMStateSize       int      `json:"ssm_state_size"`
	NGroups            int      `json:"n_groups"`
	ConvKernel         int      `json:"conv_kernel"`
	ChunkSize          int      `json:"chunk_size"`
	MambaSSMCacheDtype string   `json:"mamba_ssm_cache_dtype"`
	NRoutedExperts     int      `json:"n_routed_experts"`
	NSharedExperts     int      `json:"n_shared_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	MoEIntermediate    int      `json:"moe_intermediate_size"`
	SharedIntermediate int      `json:"moe_shared_expert_intermediate_size"`
	MoELatentSize      *int     `json:"moe_latent_size"`
	NumNextNPredict    int      `json:"num_nextn_predict_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
}

var nemotronHRename = map[string]string{"num_experts": "n_routed_experts", "n_shared_experts": "moe_shared_expert_intermediate_size",
	"num_hidden_layers": "hybrid_override_pattern"}

// parseNemotronH converts Nemotron-H as vLLM builds it (vllm-project/vllm
// @ 8744bb0, vllm/model_executor/models/nemotron_h.py): Mamba-2 mixers of
// mamba_num_heads heads of mamba_head_dim, n_groups groups of
// ssm_state_size, conv_kernel taps (state in mamba_ssm_cache_dtype, else
// bf16); GQA attention without rope; relu2 MLPs and experts without a
// gate; the MoE block's shared expert and, with moe_latent_size, its
// latent projections around the routed experts (NemotronHMoE). MTP layers
// (num_nextn_predict_layers) are one attention and one MoE block each,
// counted as one MoE decoder layer.
func parseNemotronH(d *doc) (*Config, error) {
	h, err := decodeFamily[hfNemotronH](d, nemotronHRename)
	if err != nil {
		return nil, err
	}
	var types []string
	key := "hybrid_override_pattern"
	switch {
	case h.BlockTypes != nil:
		key = "layers_block_type"
		types = h.BlockTypes
	case h.Pattern != "":
		for _, r := range h.Pattern {
			types = append(types, string(r))
		}
	default:
		return nil, d.keyErr("hybrid_override_pattern", "missing (nor layers_block_type): the layer pattern is needed")
	}
	if len(types) > maxLayers {
		return nil, d.keyErr(key, "%d layers is implausibly many (limit %d)", len(types), maxLayers)
	}
	n := len(types)
	if h.NumHiddenLayers != nil && *h.NumHiddenLayers != n {
		return nil, d.keyErr("num_hidden_layers", "is %d but %s lists %d layers", *h.NumHiddenLayers, key, n)
	}
	headDim := h.HeadDim
	if headDim == nil {
		headDim = h.AttentionHeadDim
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "nemotron_h",
		DenseModel:    h.NRoutedExperts == 0,
		Hidden:        h.HiddenSize,
		Layers:        n,
		Vocab:         h.VocabSize,
		DenseInter:    h.IntermediateSize,
		MoEStep:       1,
		MTPLayers:     h.NumNextNPredict,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn:          gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, headDim, h.HiddenSize),
	}
	c.Attn.QKVBias, c.Attn.OBias = h.AttentionBias, h.AttentionBias
	if h.NRoutedExperts > 0 {
		c.MoE = MoE{Experts: h.NRoutedExperts, TopK: h.NumExpertsPerTok, Inter: h.MoEIntermediate, RouterBias: true, Ungated: true}
		if h.NSharedExperts > 0 && h.SharedIntermediate > 0 {
			c.MoE.Shared, c.MoE.SharedInter = h.NSharedExperts, h.SharedIntermediate
		}
		if h.MoELatentSize != nil {
			c.MoE.Latent = *h.MoELatentSize
		}
	}
	stateBytes, err := ssmDtype(d, "mamba_ssm_cache_dtype", h.MambaSSMCacheDtype)
	if err != nil {
		return nil, err
	}
	rec := Recurrent{Heads: h.MambaNumHeads, KDim: h.SSMStateSize, VDim: h.MambaHeadDim, Groups: h.NGroups, Conv: h.ConvKernel,
		Chunk: h.ChunkSize, StateBytes: stateBytes}
	var kb kindBuilder
	counts := map[string]int{}
	for i, t := range types {
		var k LayerKind
		switch strings.ToLower(t) {
		case "m", "mamba", "mamba2":
			k = LayerKind{Name: "mamba2", Mixer: MixMamba2, Rec: rec, FFN: FFNNone}
		case "*", "attention", "full_attention":
			k = LayerKind{Name: "attention", Mixer: MixAttention, Attn: c.Attn, FFN: FFNNone}
		case "-", "mlp":
			k = LayerKind{Name: "mlp", Mixer: MixNone, FFN: FFNDense, Inter: h.IntermediateSize, UngatedMLP: true}
		case "e", "moe":
			k = LayerKind{Name: "moe", Mixer: MixNone, FFN: FFNMoE}
		default:
			return nil, d.keyErr(key, "entry %d: unknown block %q (want M, *, - or E; mamba, attention, mlp or moe)", i, t)
		}
		counts[k.Name]++
		kb.add(k)
	}
	kb.set(c)
	if counts["moe"] > 0 && c.MoE.Experts == 0 {
		return nil, d.keyErr("n_routed_experts", "must be > 0 with %d MoE blocks", counts["moe"])
	}
	c.Notes = append(c.Notes, fmt.Sprintf("%d blocks: %d Mamba-2, %d attention, %d MLP, %d MoE, each one norm + one mixer; Mamba-2 state %.1f MB per sequence (ssm state %s), no KV cache there",
		n, counts["mamba2"], counts["attention"], counts["mlp"], counts["moe"], c.RecurrentStateBytes()/1e6, bytesName(stateBytes)))
	if c.MoE.Latent > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("latent MoE: experts work at width %d between fc1/fc2_latent_proj (counted with the shared expert); the all-to-all is priced at the hidden width", c.MoE.Latent))
	}
	noteMTP(c)
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return nemotronHModules(c, types)
	})
}

// nemotronHModules names the first block of each kind as the checkpoint
// does (backbone.layers.N.mixer...).
func nemotronHModules(c *Config, types []string) modules {
	var m modules
	first := func(names ...string) int {
		for i, t := range types {
			for _, n := range names {
				if strings.EqualFold(t, n) {
					return i
				}
			}
		}
		return -1
	}
	if i := first("*", "attention"); i >= 0 {
		for _, p := range gqaProjs {
			m.attention = append(m.attention, fmt.Sprintf("backbone.layers.%d.mixer.%s", i, p))
		}
	}
	if i := first("-", "mlp"); i >= 0 {
		m.dense = []string{fmt.Sprintf("backbone.layers.%d.mixer.up_proj", i), fmt.Sprintf("backbone.layers.%d.mixer.down_proj", i)}
	}
	if i := first("e", "moe"); i >= 0 {
		m.shared = []string{fmt.Sprintf("backbone.layers.%d.mixer.shared_experts.up_proj", i), fmt.Sprintf("backbone.layers.%d.mixer.shared_experts.down_proj", i)}
		m.routed = []string{fmt.Sprintf("backbone.layers.%d.mixer.experts.0.up_proj", i), fmt.Sprintf("backbone.layers.%d.mixer.experts.0.down_proj", i)}
	}
	return m
}
