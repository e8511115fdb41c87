package model

import "fmt"

// hfMiniMax mirrors the config.json (or text_config) of MiniMaxM2ForCausalLM
// (MiniMax-M2, M2.5, M2.7) and MiniMaxM3ForCausalLM /
// MiniMaxM3SparseForCausalLM (MiniMax-M3): GQA with q/k RMSNorm, sigmoid
// router with a correction bias, and for M3 leading dense layers, a shared
// expert and MiniMax Sparse Attention on the layers sparse_attention_freq
// marks.
type hfMiniMax struct {
	ModelType          string   `json:"model_type"`
	HiddenSize         int      `json:"hidden_size"`
	NumHiddenLayers    int      `json:"num_hidden_layers"`
	VocabSize          int      `json:"vocab_size"`
	IntermediateSize   int      `json:"intermediate_size"`
	MoEIntermediate    *int     `json:"moe_intermediate_size"`
	DenseIntermediate  int      `json:"dense_intermediate_size"`
	SharedIntermediate int      `json:"shared_intermediate_size"`
	NSharedExperts     *int     `json:"n_shared_experts"`
	NumLocalExperts    int      `json:"num_local_experts"`
	NumExpertsPerTok   int      `json:"num_experts_per_tok"`
	FirstKDense        int      `json:"first_k_dense_replace"`
	MoELayerFreq       []int    `json:"moe_layer_freq"`
	NumAttentionHeads  int      `json:"num_attention_heads"`
	NumKeyValueHeads   int      `json:"num_key_value_heads"`
	HeadDim            *int     `json:"head_dim"`
	UseQKNorm          bool     `json:"use_qk_norm"`
	QKNormType         string   `json:"qk_norm_type"`
	AttentionOutGate   bool     `json:"attention_output_gate"`
	UseRoutingBias     bool     `json:"use_routing_bias"`
	NumMTPModules      int      `json:"num_mtp_modules"`
	MTPTransformer     int      `json:"mtp_transformer_layers"`
	NumNextNPredict    int      `json:"num_nextn_predict_layers"`
	TieWordEmbeddings  bool     `json:"tie_word_embeddings"`
	MaxPosition        int      `json:"max_position_embeddings"`
	TorchDtype         string   `json:"torch_dtype"`
	Dtype              string   `json:"dtype"`
	QuantizationConfig *hfQuant `json:"quantization_config"`
	Sparse             *struct {
		Use        bool  `json:"use_sparse_attention"`
		IndexDim   int   `json:"sparse_index_dim"`
		IndexHeads int   `json:"sparse_num_index_heads"`
		TopKBlocks int   `json:"sparse_topk_blocks"`
		BlockSize  int   `json:"sparse_block_size"`
		InitBlock  int   `json:"sparse_init_block"`
		LocalBlock int   `json:"sparse_local_block"`
		Freq       []int `json:"sparse_attention_freq"`
	} `json:"sparse_attention_config"`
}

var minimaxRename = map[string]string{"num_experts": "num_local_experts", "intermediate_size": "dense_intermediate_size"}

// parseMiniMax converts MiniMax-M2/M3 as vLLM builds them (vllm-project/vllm
// @ 8744bb0, vllm/model_executor/models/minimax_m2.py): every layer GQA
// with q/k norms; MoE layers with num_local_experts experts of
// moe_intermediate_size (M2: intermediate_size), a router with
// e_score_correction_bias (use_routing_bias), and for M3 one shared expert
// of shared_intermediate_size; M3's leading layers (moe_layer_freq 0) have
// a dense MLP of dense_intermediate_size. MTP modules (num_mtp_modules x
// mtp_transformer_layers) are counted as MoE decoder layers. MiniMax
// Sparse Attention (M3): each sparse layer's index projection (Hidden ->
// index heads x sparse_index_dim, column) and single index key (Hidden ->
// sparse_index_dim, replicated) score the context's 128-token blocks; the
// attention reads sparse_topk_blocks + sparse_local_block + sparse_init_block
// blocks (MiniMax-M3: 17 x 128 = 2,176 tokens).
func parseMiniMax(d *doc) (*Config, error) {
	h, err := decodeFamily[hfMiniMax](d, minimaxRename)
	if err != nil {
		return nil, err
	}
	inter := h.IntermediateSize
	if h.MoEIntermediate != nil {
		inter = *h.MoEIntermediate
	}
	c := &Config{
		ModelType:     h.ModelType,
		Family:        "minimax",
		Hidden:        h.HiddenSize,
		Layers:        h.NumHiddenLayers,
		Vocab:         h.VocabSize,
		DenseInter:    h.DenseIntermediate,
		DenseLayers:   h.FirstKDense,
		MoEStep:       1,
		MaxPosition:   h.MaxPosition,
		TieEmbeddings: h.TieWordEmbeddings,
		Attn:          gqaAttention(h.NumAttentionHeads, h.NumKeyValueHeads, h.HeadDim, h.HiddenSize),
		MoE:           MoE{Experts: h.NumLocalExperts, TopK: h.NumExpertsPerTok, Inter: inter, RouterBias: h.UseRoutingBias},
	}
	c.Attn.QKNorm, c.Attn.OutputGate = h.UseQKNorm, h.AttentionOutGate
	c.Attn.QKNormTP = h.UseQKNorm && h.QKNormType == "per_layer"
	if h.NSharedExperts != nil && *h.NSharedExperts > 0 && h.SharedIntermediate > 0 {
		c.MoE.Shared, c.MoE.SharedInter = *h.NSharedExperts, *h.NSharedExperts*h.SharedIntermediate
	}
	switch {
	case h.NumMTPModules > 0:
		c.MTPLayers = h.NumMTPModules * max(h.MTPTransformer, 1)
	default:
		c.MTPLayers = h.NumNextNPredict
	}
	if h.NumHiddenLayers > maxLayers || h.NumHiddenLayers < 0 {
		return nil, d.keyErr("num_hidden_layers", "%d is not a plausible layer count (limit %d)", h.NumHiddenLayers, maxLayers)
	}
	moeAt := func(i int) bool { return i >= h.FirstKDense }
	if h.MoELayerFreq != nil {
		if len(h.MoELayerFreq) != h.NumHiddenLayers {
			return nil, d.keyErr("moe_layer_freq", "has %d entries for %d layers", len(h.MoELayerFreq), h.NumHiddenLayers)
		}
		moeAt = func(i int) bool { return h.MoELayerFreq[i] != 0 }
	}
	var sparse []int
	sa := c.Attn
	if sp := h.Sparse; sp != nil && sp.Use {
		if len(sp.Freq) != h.NumHiddenLayers {
			return nil, d.keyErr("sparse_attention_config", "sparse_attention_freq has %d entries for %d layers", len(sp.Freq), h.NumHiddenLayers)
		}
		if sp.IndexHeads <= 0 || sp.IndexDim <= 0 || sp.TopKBlocks <= 0 || sp.BlockSize <= 0 {
			return nil, d.keyErr("sparse_attention_config", "sparse_num_index_heads, sparse_index_dim, sparse_topk_blocks and sparse_block_size must be > 0")
		}
		sparse = sp.Freq
		sa.IndexHeads, sa.IndexHeadDim = sp.IndexHeads, sp.IndexDim
		sa.IndexTopK = (sp.TopKBlocks + sp.LocalBlock + sp.InitBlock) * sp.BlockSize
	}
	var kb kindBuilder
	nSparse := 0
	for i := range h.NumHiddenLayers {
		k := LayerKind{Mixer: MixAttention, Attn: c.Attn, FFN: FFNDense, Inter: h.DenseIntermediate, Name: "dense"}
		if moeAt(i) {
			k.FFN, k.Inter, k.Name = FFNMoE, 0, "moe"
		}
		if sparse != nil && sparse[i] != 0 {
			k.Attn, k.Name = sa, "sparse "+k.Name
			nSparse++
		}
		kb.add(k)
	}
	kb.set(c)
	if nSparse > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("MiniMax Sparse Attention on %d of %d layers: %d index heads x %d score every token's index key; attention reads at most %d tokens there; "+
			"the index key cache is counted at %d B/token/layer (the DeepSeek-V3.2 fp8 layout, an assumption)",
			nSparse, h.NumHiddenLayers, sa.IndexHeads, sa.IndexHeadDim, sa.IndexTopK, sa.IndexHeadDim+4*ceilDiv(sa.IndexHeadDim, 128)))
	}
	if h.UseQKNorm {
		c.Notes = append(c.Notes, "q/k norms counted as per-head vectors (head_dim each); MiniMax-M2's per-layer norms hold (heads + kv heads) x head_dim, under 0.01% of the weights")
	}
	noteMTP(c)
	return finishFamily(d, c, h.TorchDtype, h.Dtype, h.QuantizationConfig, func() modules {
		return hfModules(c, gqaProjs, swigluProj, "block_sparse_moe.shared_experts", "block_sparse_moe.experts.0", []string{"w1", "w3", "w2"})
	})
}
