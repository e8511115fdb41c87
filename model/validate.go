package model

import (
	"fmt"
	"strings"
)

// FieldError is a value at fault named by its field: moecast's one error
// type for it. Model validation names the HF config.json key in its common
// spelling (num_experts, moe_intermediate_size, ...; the importer renames it
// to the family's own key and adds the file position); sim names a
// sim.Config field or Step's argument ("Layout.TP", "batch"), serve a
// serve.Config field by its Go path ("Workload.MaxConcurrency"); scenarios
// maps the latter two to the scenario key that sets them.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// LayoutError is a parallel layout the model cannot run with. Field is
// the Layout field at fault ("TP", "EP", "DP"); a caller that knows where
// the layout came from (a scenario key, a flag) names it there.
type LayoutError struct {
	Field string
	Msg   string
}

func (e *LayoutError) Error() string { return e.Field + ": " + e.Msg }

// ResolveError is a model Resolve cannot find or read: no such preset or
// file, a directory, an unreadable or malformed config.json. Name is what
// was asked for; the text is the wrapped error's.
type ResolveError struct {
	Name string
	Err  error
}

func (e *ResolveError) Error() string { return e.Err.Error() }
func (e *ResolveError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Plausibility limits: a config.json beyond them is refused as a typo or as
// hostile input rather than priced (a 1e12-wide model would print a
// plausible-looking prediction of astronomical size). Each is several times
// the largest value of a published model, given in the comment; maxDim also
// keeps the integer arithmetic exact and the per-layer loops short.
const (
	maxDim       = 1 << 24 // any other width or count (sliding_window in tokens)
	maxLayers    = 1 << 10 // num_hidden_layers (Llama-3.1-405B: 126)
	maxHidden    = 1 << 16 // hidden_size and the MLA LoRA ranks (Llama-3.1-405B: 16384)
	maxInter     = 1 << 18 // intermediate_size, moe_intermediate_size (Llama-3.1-405B: 53248)
	maxVocab     = 1 << 21 // vocab_size (Gemma 3: 262208)
	maxHeads     = 1 << 10 // attention, KV and indexer heads (DeepSeek-V3: 128)
	maxHeadDim   = 1 << 12 // head_dim, qk/v head dims (Gemma 2: 256; DeepSeek-V3 qk: 192)
	maxExperts   = 1 << 14 // routed experts (Qwen3-Next: 512; Kimi-K2: 384)
	maxShared    = 1 << 6  // n_shared_experts (Qwen1.5-MoE-A2.7B fuses 4; DeepSeek-V3: 1)
	maxMTPLayers = 1 << 6  // num_nextn_predict_layers (DeepSeek-V3, GLM-4.5: 1)
	maxParams    = 1e14    // total parameters with MTP layers (Kimi-K2: 1.04e12)
)

// Validate checks that the dimensions describe a model the byte accounting
// and the cost model can use, and that every weight class has a storage
// format. The first problem found is returned as a *FieldError naming the
// config.json key.
func (c *Config) Validate() error {
	if err := c.validateDims(); err != nil {
		return err
	}
	for _, f := range []struct {
		k string
		v float64
	}{{"quantization_config", c.Quant.RoutedExperts.Bits}, {"quantization_config", c.Quant.Attention.Bits},
		{"quantization_config", c.Quant.SharedExpert.Bits}, {"quantization_config", c.Quant.DenseMLP.Bits},
		{"quantization_config", c.Quant.Embedding.Bits}, {"quantization_config", c.Quant.LMHead.Bits},
		{"quantization_config", c.Quant.Router.Bits}, {"torch_dtype", c.Quant.Base.Bits}} {
		if f.v <= 0 {
			return fieldErr(f.k, "a weight class has no storage format")
		}
	}
	return nil
}

// validateDims is Validate without the storage formats (the importers check
// dimensions before reading quantization_config).
func (c *Config) validateDims() error {
	pos := func(field string, v int) error {
		if v <= 0 {
			return fieldErr(field, "must be > 0, got %d", v)
		}
		return nil
	}
	for _, f := range []struct {
		k     string
		v     int
		limit int
	}{
		{"num_hidden_layers", c.Layers, maxLayers}, {"first_k_dense_replace", len(c.DenseOnly), maxLayers},
		{"hidden_size", c.Hidden, maxHidden}, {"vocab_size", c.Vocab, maxVocab},
		{"intermediate_size", c.DenseInter, maxInter}, {"moe_intermediate_size", c.MoE.Inter, maxInter},
		{"num_experts", c.MoE.Experts, maxExperts}, {"num_experts_per_tok", c.MoE.TopK, maxExperts},
		{"n_shared_experts", c.MoE.Shared, maxShared}, {"n_shared_experts", c.MoE.SharedInter, maxShared * maxInter},
		{"num_attention_heads", c.Attn.Heads, maxHeads}, {"num_key_value_heads", c.Attn.KVHeads, maxHeads},
		{"head_dim", c.Attn.HeadDim, maxHeadDim}, {"q_lora_rank", c.Attn.QLoRARank, maxHidden},
		{"kv_lora_rank", c.Attn.KVLoRARank, maxHidden}, {"qk_rope_head_dim", c.Attn.QKRopeDim, maxHeadDim},
		{"qk_nope_head_dim", c.Attn.QKNopeDim, maxHeadDim}, {"v_head_dim", c.Attn.VHeadDim, maxHeadDim},
		{"index_n_heads", c.Attn.IndexHeads, maxHeads}, {"index_head_dim", c.Attn.IndexHeadDim, maxHeadDim},
		{"index_topk", c.Attn.IndexTopK, maxDim}, {"num_nextn_predict_layers", c.MTPLayers, maxMTPLayers},
		{"first_k_dense_replace", c.DenseLayers, maxLayers}, {"moe_layer_freq", c.MoEStep, maxLayers},
		{"sliding_window", c.Attn.SlidingWindow, maxDim}, {"max_position_embeddings", c.MaxPosition, maxDim},
	} {
		if f.v > f.limit {
			return fieldErr(f.k, "%d is implausibly large (limit %d)", f.v, f.limit)
		}
	}
	if c.MaxPosition < 0 {
		return fieldErr("max_position_embeddings", "must be >= 0 (0 or absent: not given), got %d", c.MaxPosition)
	}
	for _, f := range []struct {
		k string
		v int
	}{{"hidden_size", c.Hidden}, {"num_hidden_layers", c.Layers}, {"vocab_size", c.Vocab}, {"num_attention_heads", c.Attn.Heads}} {
		if err := pos(f.k, f.v); err != nil {
			return err
		}
	}
	a := &c.Attn
	switch a.Kind {
	case MLA:
		for _, f := range []struct {
			k string
			v int
		}{{"kv_lora_rank", a.KVLoRARank}, {"qk_rope_head_dim", a.QKRopeDim}, {"qk_nope_head_dim", a.QKNopeDim}, {"v_head_dim", a.VHeadDim}} {
			if err := pos(f.k, f.v); err != nil {
				return err
			}
		}
		if a.QLoRARank < 0 {
			return fieldErr("q_lora_rank", "must be >= 0, got %d", a.QLoRARank)
		}
		if a.IndexHeads < 0 || a.IndexHeadDim < 0 || a.IndexTopK < 0 {
			return fieldErr("index_n_heads", "DSA indexer dimensions must be >= 0")
		}
		if (a.IndexHeads > 0) != (a.IndexHeadDim > 0) {
			return fieldErr("index_head_dim", "index_n_heads (%d) and index_head_dim (%d) must both be set", a.IndexHeads, a.IndexHeadDim)
		}
	default:
		if err := pos("num_key_value_heads", a.KVHeads); err != nil {
			return err
		}
		if a.Heads%a.KVHeads != 0 {
			return fieldErr("num_key_value_heads", "num_attention_heads (%d) is not a multiple of num_key_value_heads (%d)", a.Heads, a.KVHeads)
		}
		if err := pos("head_dim", a.HeadDim); err != nil {
			return err
		}
	}
	if a.SlidingWindow < 0 || a.SlidingLayers < 0 || a.SlidingLayers > c.Layers {
		return fieldErr("sliding_window", "window %d on %d of %d layers is not valid", a.SlidingWindow, a.SlidingLayers, c.Layers)
	}
	if c.DenseLayers < 0 || c.DenseLayers > c.Layers {
		return fieldErr("first_k_dense_replace", "must be in [0, num_hidden_layers=%d], got %d", c.Layers, c.DenseLayers)
	}
	for i, l := range c.DenseOnly {
		if l < 0 || l >= c.Layers {
			return fieldErr("mlp_only_layers", "entry %d is %d, not a layer index in [0, num_hidden_layers=%d)", i, l, c.Layers)
		}
	}
	if c.MoEStep < 1 {
		return fieldErr("moe_layer_freq", "must be >= 1, got %d", c.MoEStep)
	}
	if c.MTPLayers < 0 {
		return fieldErr("num_nextn_predict_layers", "must be >= 0, got %d", c.MTPLayers)
	}
	m := &c.MoE
	if !c.DenseModel || m.Experts != 0 || c.MoELayers() > 0 {
		if err := pos("num_experts", m.Experts); err != nil {
			return err
		}
		if m.TopK < 1 || m.TopK > m.Experts {
			return fieldErr("num_experts_per_tok", "must be in [1, num_experts=%d], got %d", m.Experts, m.TopK)
		}
		if err := pos("moe_intermediate_size", m.Inter); err != nil {
			return err
		}
		if m.Shared < 0 || m.SharedInter < 0 || (m.Shared > 0) != (m.SharedInter > 0) {
			return fieldErr("n_shared_experts", "%d shared experts of width %d is not valid", m.Shared, m.SharedInter)
		}
		if c.MoELayers() == 0 {
			return fieldErr("num_hidden_layers", "%d routed experts but no MoE layer among %d layers", m.Experts, c.Layers)
		}
	}
	if err := c.validateKinds(); err != nil {
		return err
	}
	if c.Kinds == nil && c.DenseLayerCount() > 0 && c.DenseInter <= 0 {
		return fieldErr("intermediate_size", "must be > 0 with %d dense layers, got %d", c.DenseLayerCount(), c.DenseInter)
	}
	return c.checkParams()
}

// checkParams refuses dimensions that are each plausible but together give
// an implausibly large model. The key named is the one that scales the
// largest weight class.
func (c *Config) checkParams() error {
	p := c.Params()
	total := p.Total + p.MTP
	if total <= maxParams {
		return nil
	}
	big := ClassRoutedExperts
	for cls := range NumClasses {
		if p.PerClass[cls] > p.PerClass[big] {
			big = cls
		}
	}
	key := map[Class]string{ClassRoutedExperts: "num_experts", ClassSharedExpert: "n_shared_experts", ClassAttention: "num_attention_heads",
		ClassDenseMLP: "intermediate_size", ClassEmbedding: "vocab_size", ClassLMHead: "vocab_size", ClassRouter: "num_experts",
		ClassMTP: "num_nextn_predict_layers"}[big]
	if key == "" {
		key = "hidden_size"
	}
	return fieldErr(key, "the dimensions give %.3gT parameters (%.3gT in %s), implausibly many (limit %gT)", total/1e12, p.PerClass[big]/1e12, big, maxParams/1e12)
}

// CheckLayout checks that layout l can shard the model as vLLM would. It
// returns a *LayoutError naming the Layout field:
//
//   - TP, EP, DP: each must be >= 1;
//   - TP: without DPAttention, TP must divide the attention heads
//     and, for GQA, TP and the kv heads must divide one another (vLLM's
//     QKVParallelLinear); each per-rank slice of a block-quantized linear
//     must be a multiple of the block, and the per-rank input of an
//     int-group-quantized row-parallel linear a multiple of the group
//     (Marlin); vLLM pads mxfp4 experts instead, so they are not checked;
//   - EP: EP must divide the routed experts and TP*DP.
func (c *Config) CheckLayout(l Layout) error {
	if l.TP < 1 {
		return &LayoutError{"TP", fmt.Sprintf("must be >= 1, got %d", l.TP)}
	}
	if l.EP < 1 {
		return &LayoutError{"EP", fmt.Sprintf("must be >= 1, got %d", l.EP)}
	}
	if l.DP < 1 {
		return &LayoutError{"DP", fmt.Sprintf("must be >= 1, got %d", l.DP)}
	}
	a := &c.Attn
	if tp := l.AttentionTP(); tp > 1 {
		if a.Heads%tp != 0 {
			return &LayoutError{"TP", fmt.Sprintf("tp=%d does not divide the %d attention heads of %s", tp, a.Heads, c.Name)}
		}
		if a.Kind == GQA && a.KVHeads%tp != 0 && tp%a.KVHeads != 0 {
			return &LayoutError{"TP", fmt.Sprintf("tp=%d and the %d kv heads of %s do not divide one another", tp, a.KVHeads, c.Name)}
		}
	}
	for _, k := range c.Kinds {
		tp := l.AttentionTP()
		if tp <= 1 {
			break
		}
		switch {
		case k.Mixer == MixAttention && k.Attn.Kind == GQA && (k.Attn.Heads%tp != 0 || (k.Attn.KVHeads%tp != 0 && tp%k.Attn.KVHeads != 0)):
			return &LayoutError{"TP", fmt.Sprintf("tp=%d does not fit the %d heads and %d kv heads of the %s layers of %s", tp, k.Attn.Heads, k.Attn.KVHeads, k.Name, c.Name)}
		case k.Mixer == MixAttention && k.Attn.Kind == DSV4 && (k.Attn.Heads%tp != 0 || k.Attn.OGroups%tp != 0):
			return &LayoutError{"TP", fmt.Sprintf("tp=%d does not divide the %d heads and %d output groups of the %s layers of %s", tp, k.Attn.Heads, k.Attn.OGroups, k.Name, c.Name)}
		case k.Mixer.Recurrent() && (k.Rec.Heads%tp != 0 || (k.Rec.KHeads > 0 && k.Rec.KHeads%tp != 0)):
			return &LayoutError{"TP", fmt.Sprintf("tp=%d does not divide the %d heads of the %s layers of %s", tp, k.Rec.Heads, k.Name, c.Name)}
		}
	}
	if c.MoE.Experts == 0 && l.EP > 1 {
		return &LayoutError{"EP", fmt.Sprintf("ep=%d: %s is a dense model (no routed experts)", l.EP, c.Name)}
	}
	if c.MoE.Experts%l.EP != 0 {
		return &LayoutError{"EP", fmt.Sprintf("ep=%d does not divide the %d routed experts of %s", l.EP, c.MoE.Experts, c.Name)}
	}
	if (l.TP*l.DP)%l.EP != 0 {
		return &LayoutError{"EP", fmt.Sprintf("ep=%d does not divide tp x dp = %d", l.EP, l.TP*l.DP)}
	}
	if err := c.checkQuantShards(l); err != nil {
		return err
	}
	return nil
}

// checkQuantShards applies vLLM's alignment rules to the quantized linears:
// fp8 block [bn, bk] needs each rank's output slice (Column) or input slice
// (Row) to be a multiple of bn or bk; group-quantized routed experts need
// the per-rank down_proj input a multiple of the group size.
func (c *Config) checkQuantShards(l Layout) error {
	bn, bk := c.Quant.Block[0], c.Quant.Block[1]
	check := func(ls []Linear, tp int, key string) error {
		for _, lin := range ls {
			if tp <= 1 || lin.Format.Bits >= 16 {
				continue
			}
			in, out := lin.ShardDims(tp)
			name := lin.Class.String() + " " + lin.Name
			if bn > 0 && lin.Split == Column && out%bn != 0 {
				return &LayoutError{key, fmt.Sprintf("%s of %s: %d output columns per rank at %d-way split are not a multiple of the fp8 block %d", name, c.Name, out, tp, bn)}
			}
			if bk > 0 && lin.Split == Row && in%bk != 0 {
				return &LayoutError{key, fmt.Sprintf("%s of %s: %d input rows per rank at %d-way split are not a multiple of the fp8 block %d", name, c.Name, in, tp, bk)}
			}
			if g := lin.Format.GroupSize; bn == 0 && g > 0 && strings.HasPrefix(lin.Format.Name, "int") && lin.Split == Row && in%g != 0 {
				return &LayoutError{key, fmt.Sprintf("%s of %s: %d input rows per rank at %d-way split are not a multiple of the quantization group %d", name, c.Name, in, tp, g)}
			}
		}
		return nil
	}
	etpKey := "TP"
	if l.EP > 1 {
		etpKey = "EP"
	}
	if err := check(c.ExpertLinears(), l.ExpertTP(), etpKey); err != nil {
		return err
	}
	if err := check(c.SharedExpertLinears(), l.TP, "TP"); err != nil {
		return err
	}
	if err := check(c.DenseMLPLinears(), l.TP, "TP"); err != nil {
		return err
	}
	return check(c.AttentionLinears(), l.AttentionTP(), "TP")
}
