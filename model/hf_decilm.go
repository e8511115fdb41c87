package model

import (
	"fmt"
	"math"
)

// hfDeciLM mirrors the config.json of DeciLMForCausalLM (NVIDIA's
// Llama-Nemotron NAS models: Llama-3.3-Nemotron-Super-49B, Ultra-253B):
// Llama layers whose attention and FFN each vary per layer (block_configs).
type hfDeciLM struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	HeadDim            *int     `json:"head_dim"`
	AttentionBias      bool     `json:"attention_bias"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
	BlockConfigs       []struct {
		Attention struct {
			NoOp              bool  `json:"no_op"`
			ReplaceWithLinear bool  `json:"replace_with_linear"`
			NHeadsInGroup     *int  `json:"n_heads_in_group"`
			WindowLength      *int  `json:"window_length"`
			Sparsify          *bool `json:"sparsify"`
		} `json:"attention"`
		FFN struct {
			NoOp              bool     `json:"no_op"`
			ReplaceWithLinear bool     `json:"replace_with_linear"`
			FFNMult           *float64 `json:"ffn_mult"`
		} `json:"ffn"`
	} `json:"block_configs"`
}

var deciRename = map[string]string{"num_hidden_layers": "block_configs", "num_key_value_heads": "block_configs", "intermediate_size": "block_configs"}

// deciFFNWidth is DeciLM's FFN width for ffn_mult: 2/3 x ffn_mult x hidden,
// truncated, rounded up to a multiple of 256 (vllm-project/vllm @ 8744bb0,
// vllm/model_executor/models/nemotron_nas.py _ffn_mult_to_intermediate_size).
func deciFFNWidth(mult float64, hidden int) int {
	w := int(2 * mult * float64(hidden) / 3)
	return (w + 255) / 256 * 256
}

// parseDeciLM converts DeciLM as vLLM's DeciLMForCausalLM builds it: each
// layer's attention is GQA with num_attention_heads / n_heads_in_group kv
// heads, or absent (no_op); each FFN a SwiGLU MLP of the width ffn_mult
// gives, or absent. replace_with_linear blocks (a single hidden x hidden
// linear) and windowed attention are refused: no shipped config uses them.
func parseDeciLM(d *doc) (*Config, error) {
	h, err := decodeFamily[hfDeciLM](d, deciRename)
	if err != nil {
		return nil, err
	}
	n := len(h.BlockConfigs)
	if n != h.NumHiddenLayers {
		return nil, d.keyErr("block_configs", "has %d entries for num_hidden_layers %d", n, h.NumHiddenLayers)
	}
	if n > maxLayers {
		return nil, d.keyErr("block_configs", "%d layers is implausibly many (limit %d)", n, maxLayers)
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "decilm",
		DenseModel:    true,
		Hidden:        h.HiddenSize,
		Layers:        n,
		Vocab:         h.VocabSize,
		MoEStep:       1,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
	}
	var kb kindBuilder
	noAttn, noFFN := 0, 0
	for i, b := range h.BlockConfigs {
		a, f := b.Attention, b.FFN
		if a.ReplaceWithLinear || f.ReplaceWithLinear {
			return nil, d.keyErr("block_configs", "entry %d: replace_with_linear blocks are not modelled", i)
		}
		if a.WindowLength != nil && *a.WindowLength > 0 {
			return nil, d.keyErr("block_configs", "entry %d: windowed attention (window_length %d) is not modelled", i, *a.WindowLength)
		}
		k := LayerKind{Mixer: MixAttention, FFN: FFNDense}
		if a.NoOp {
			k.Mixer = MixNone
			noAttn++
		} else {
			if a.NHeadsInGroup == nil || *a.NHeadsInGroup <= 0 || h.NumAttentionHeads%*a.NHeadsInGroup != 0 {
				return nil, d.keyErr("block_configs", "entry %d: n_heads_in_group must divide num_attention_heads %d", i, h.NumAttentionHeads)
			}
			k.Attn = gqaAttention(h.NumAttentionHeads, h.NumAttentionHeads / *a.NHeadsInGroup, h.HeadDim, h.HiddenSize)
			k.Attn.QKVBias = h.AttentionBias
		}
		if f.NoOp {
			k.FFN = FFNNone
			noFFN++
		} else {
			if f.FFNMult == nil || !(*f.FFNMult > 0) || *f.FFNMult > 64 || math.IsInf(*f.FFNMult, 0) {
				return nil, d.keyErr("block_configs", "entry %d: ffn_mult must be in (0, 64]", i)
			}
			k.Inter = deciFFNWidth(*f.FFNMult, h.HiddenSize)
		}
		switch {
		case k.Mixer == MixNone && k.FFN == FFNNone:
			k.Name = "no-op"
		case k.Mixer == MixNone:
			k.Name = fmt.Sprintf("ffn %d", k.Inter)
		case k.FFN == FFNNone:
			k.Name = fmt.Sprintf("attn kv%d", k.Attn.KVHeads)
		default:
			k.Name = fmt.Sprintf("attn kv%d + ffn %d", k.Attn.KVHeads, k.Inter)
		}
		if c.Attn.Heads == 0 && k.Mixer == MixAttention {
			c.Attn = k.Attn
		}
		if k.FFN == FFNDense && k.Inter > c.DenseInter {
			c.DenseInter = k.Inter
		}
		kb.add(k)
	}
	if c.Attn.Heads == 0 {
		return nil, d.keyErr("block_configs", "no layer has attention")
	}
	kb.set(c)
	c.Notes = append(c.Notes, fmt.Sprintf("%d layer kinds from block_configs: %d layers without attention, %d without FFN; FFN widths from ffn_mult (2/3 x mult x hidden, rounded up to 256)",
		len(c.Kinds), noAttn, noFFN))
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, swigluProj, "", "", nil)
	})
}
