// Package model describes MoE transformer architectures as the cost model
// needs them: dimensions, layer kinds, attention variant, expert layout,
// weight storage formats, and the byte accounting that follows (weights per
// weight class, KV bytes per token, both per GPU for a parallel layout).
//
// Sources of a Config: Load/LoadFile/Parse import a Hugging Face
// config.json (hf.go reads `architectures` first, then the family's raw
// struct in hf_<family>.go, converted once; quant.go reads
// quantization_config); Preset returns one of the embedded copies of the
// aiconfigurator config.json files (presets/README.md); Resolve takes either.
//
// The weight matrices of each layer kind are listed once (linears.go:
// AttentionLinears, DenseMLPLinears, SharedExpertLinears, ExpertLinears,
// RouterLinear, EmbeddingLinear, LMHeadLinear, MTPLinears); the byte
// accounting (weights.go) and the cost model (package sim) both read them.
// Models whose layers differ (hybrid linear-attention / Mamba-2 mixers,
// local and global attention with their own shapes, per-layer widths)
// list their layer kinds in Config.Kinds (layers.go); each kind is priced
// as its own block by sim.
// Sharding follows vLLM: ColumnParallel/RowParallel/QKVParallel linears
// split over TP, ReplicatedLinear (MLA q_a/kv_a, router) whole on every
// rank, vocabularies padded to 64 and split, routed experts placed
// ceil(E/EP) per rank and split over TP*DP/EP, attention whole on every rank
// with DP attention. Approximations made on import are listed in
// Config.Notes.
//
// Units: dimensions are element counts; sizes are unit.Bytes (decimal GB
// when printed); parameter counts are plain float64 counts.
package model

import (
	"github.com/moecast/moecast/internal/dtype"
)

// AttentionKind is the attention variant of a model.
type AttentionKind uint8

const (
	GQA  AttentionKind = iota // grouped-query attention (MHA and MQA are special cases)
	MLA                       // DeepSeek multi-head latent attention
	DSV4                      // DeepSeek-V4 compressed (sparse) attention over one shared K=V head (hf_deepseekv4.go)
)

func (k AttentionKind) String() string {
	switch k {
	case MLA:
		return "mla"
	case DSV4:
		return "dsv4"
	}
	return "gqa"
}

// Attention holds the attention dimensions.
type Attention struct {
	Kind    AttentionKind
	Heads   int // query heads (num_attention_heads)
	KVHeads int // key/value heads (GQA); equals Heads for MLA
	HeadDim int // per-head dim for GQA

	// MLA only.
	QLoRARank  int // 0 means q is projected directly (no q_a/q_b)
	KVLoRARank int // latent width cached per token (512 for DeepSeek-V3)
	QKNopeDim  int
	QKRopeDim  int // rope part, cached per token next to the latent
	// VHeadDim is MLA's value head dim; for GQA the value head dim when it
	// differs from HeadDim (MiMo-V2-Flash: 192 for q/k, 128 for v), else 0.
	VHeadDim int

	// SlidingWindow > 0 with SlidingLayers > 0: that many layers attend to
	// at most SlidingWindow tokens (gpt-oss alternates). Approximation: the
	// cost model reads min(context, window) tokens of KV on those layers and
	// does not model the window's memory saving in the paged cache.
	SlidingWindow int
	SlidingLayers int

	// DSA indexer (GLM-5): lightning indexer heads; attention reads IndexTopK
	// tokens when the context is longer. 0 when absent.
	IndexHeads   int
	IndexHeadDim int
	IndexTopK    int

	// QKNorm: per-head RMSNorm on q and k (Qwen3, GLM-4.5 use_qk_norm),
	// HeadDim weights each.
	QKNorm bool
	// QKNormTP: the q/k norms span the layer's whole q and k width, not
	// each head (MiniMax-M2's qk_norm_type "per_layer"): with the heads
	// split over TP, vLLM all-reduces the norms' variances across the
	// attention TP ranks, one all-reduce of two fp32 per token per layer
	// (MiniMaxText01RMSNormTP.forward_qk,
	// vllm/model_executor/layers/mamba/linear_attn.py @ d29a69a).
	QKNormTP bool
	// QKVBias: the q/k/v projections carry a bias (attention_bias).
	// OBias: o_proj carries one too (gpt-oss).
	QKVBias bool
	OBias   bool
	// Sinks: one learned attention-sink logit per head (gpt-oss).
	Sinks bool
	// OutputGate: a sigmoid gate on the attention output, projected from
	// the hidden state (Qwen3.5 attn_output_gate: q_proj emits Heads x
	// HeadDim more).
	OutputGate bool
	// KEqV: keys double as values (Gemma-4 attention_k_eq_v on global
	// layers): no v_proj, and the cache holds K only.
	KEqV bool

	// DeepSeek-V4 (Kind DSV4): Compress is the layer's compression ratio
	// of the cached K=V head (4: compressed sparse attention with the
	// indexer; 128: heavily compressed; 0 or 1: sliding window only);
	// OLoRARank and OGroups shape the grouped low-rank output projection.
	Compress  int
	OLoRARank int
	OGroups   int
}

// MoE holds the expert dimensions.
type MoE struct {
	Experts int // routed experts per MoE layer
	TopK    int // experts per token
	Shared  int // shared experts per MoE layer (always active)
	Inter   int // moe_intermediate_size: per-expert FFN width
	// SharedInter is the shared expert's FFN width (Shared x Inter for the
	// DeepSeek family, where n_shared_experts experts are fused into one MLP).
	SharedInter int
	// RouterBias: the router has a bias vector of Experts values (gpt-oss
	// router bias; DeepSeek e_score_correction_bias).
	RouterBias bool
	// ExpertBias: each routed expert's gate_up and down carry biases (gpt-oss).
	ExpertBias bool
	// Ungated: experts and shared expert are up -> act -> down without a
	// gate (Nemotron-H relu2).
	Ungated bool
	// Latent > 0: the experts work in a latent width (Nemotron-3
	// moe_latent_size): fc1_latent_proj Hidden -> Latent before them and
	// fc2_latent_proj Latent -> Hidden after; the router and the shared
	// expert see the hidden state.
	Latent int
}

// Quant gives the storage format of each weight class.
type Quant struct {
	RoutedExperts dtype.Format
	SharedExpert  dtype.Format
	Attention     dtype.Format
	DenseMLP      dtype.Format
	Embedding     dtype.Format
	LMHead        dtype.Format
	Router        dtype.Format
	// Base is the checkpoint dtype of unquantized tensors (torch_dtype):
	// norms, biases, and every class the quantization leaves alone.
	Base   dtype.Format
	Method string // e.g. "compressed-tensors pack-quantized", "fp8 block [128,128]", "mxfp4", "none"
	// Block is the weight-scale block [out, in] of block-quantized formats
	// (fp8 weight_block_size); zero when not block-quantized. vLLM requires
	// every per-rank output/input size of a quantized linear to be a
	// multiple of it (CheckLayout).
	Block [2]int
	// KVCache is the KV-cache dtype the checkpoint declares
	// (kv_cache_scheme, kv_cache_quant_algo) when KVCacheDeclared; vLLM's
	// --kv-cache-dtype auto resolves to it (vllm/utils/torch_utils.py
	// resolve_kv_cache_dtype_string). KVCacheFrom names the key.
	// AttentionLinear overrides Attention for the projections named
	// (o_proj, q_a_proj, ...) when the checkpoint stores them in different
	// formats (nvidia's DeepSeek-V3.1-NVFP4: o_proj nvfp4, the MLA
	// down/up projections bf16); nil otherwise.
	AttentionLinear map[string]dtype.Format
	// MixerLinear overrides Attention for the recurrent mixers'
	// projections named (in_proj_qkvz, in_proj_ba, out_proj) when the
	// checkpoint stores them in a format of their own (Qwen3.5-397B-A17B-FP8
	// keeps in_proj_a and in_proj_b, fused into in_proj_ba, in bf16); nil
	// otherwise.
	MixerLinear     map[string]dtype.Format
	KVCache         dtype.KVCache
	KVCacheDeclared bool
	KVCacheFrom     string
}

// Config is one model architecture.
type Config struct {
	Name         string // preset name or the file it came from
	Architecture string // HF architectures[0] of the text model, e.g. "DeepseekV3ForCausalLM"
	ModelType    string // HF model_type, e.g. "kimi_k2"
	Family       string // "deepseek_v3", "qwen3_moe", "mixtral", "gpt_oss", "glm4_moe", "glm_moe_dsa"

	Hidden     int
	Layers     int // num_hidden_layers (MTP layers not included)
	Vocab      int
	DenseInter int // FFN width of dense layers (intermediate_size)
	// DenseLayers is the number of leading dense layers (first_k_dense_replace).
	DenseLayers int
	// MoEStep and MoEPhase: layer i >= DenseLayers is MoE when
	// (i + MoEPhase) % MoEStep == 0. DeepSeek moe_layer_freq: phase 0;
	// Qwen3 decoder_sparse_step and Llama-4 interleave_moe_layer_step:
	// phase 1 (HF tests (i+1) % step == 0). MoEStep 1 makes every layer MoE.
	MoEStep  int
	MoEPhase int
	// DenseOnly lists layers forced dense (Qwen3 mlp_only_layers).
	DenseOnly []int
	// MTPLayers is num_nextn_predict_layers (DeepSeek-style multi-token prediction).
	MTPLayers int

	// MaxPosition is max_position_embeddings (informational).
	MaxPosition int

	TieEmbeddings bool
	Attn          Attention
	MoE           MoE
	Quant         Quant
	Notes         []string // approximations made on import, printed by `model show`

	// Kinds lists the layer kinds of a model whose layers differ (hybrid
	// mixers, per-layer attention shapes or widths; layers.go), KindOf
	// each layer's index in Kinds. Nil for a model of uniform layers
	// (dense and MoE layers with Attn): LayerKinds derives its kinds.
	// With Kinds, Attn is the attention of the full-attention layers (and
	// of the MTP layers).
	Kinds  []LayerKind
	KindOf []int
	// DenseModel: the architecture has no MoE block (Llama, Qwen3 dense,
	// DeciLM); Validate does not ask it for experts.
	DenseModel bool
	// HCMult is the hyper-connection width (DeepSeek-V4 hc_mult): the
	// residual stream holds HCMult copies of the hidden state, mixed before
	// and after each block; 0 without hyper-connections.
	HCMult int
	// Vision is the vision tower of a multimodal wrapper, as its
	// vision_config gives it (zero for a text-only model). moecast does
	// not price it; an engine's memory share can depend on it (SGLang's
	// adjust_mem_fraction_for_vlm).
	Vision Vision
}

// Vision is a multimodal model's vision tower as read from vision_config.
type Vision struct {
	Present bool // the config has a vision_config
	// Layers and Hidden are its num_hidden_layers and hidden_size keys
	// (0 where the config names them otherwise: Qwen3.5's depth,
	// MoonViT's vt_ keys).
	Layers, Hidden int
}
