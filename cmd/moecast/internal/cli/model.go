package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
)

func newModelCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Inspect one model: dimensions and byte accounting",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return inputErrf("model: missing subcommand (want: moecast model show NAME|config.json)")
		},
	}
	cmd.AddCommand(newModelShowCmd(s))
	return cmd
}

// modelShowOptions are the inputs of `moecast model show`.
type modelShowOptions struct {
	Model  string // preset name or config.json path
	Layout model.Layout
	Format string // text | json
}

func newModelShowCmd(s *streams) *cobra.Command {
	opts := &modelShowOptions{}
	cmd := &cobra.Command{
		Use:   "show NAME|config.json",
		Short: "Show a model's dimensions, weight bytes per class and per GPU, and KV bytes per token",
		Long: `Show a model's dimensions and byte accounting: weight bytes per class
(routed experts with their group scales, shared expert, attention, dense
MLP, embedding, lm_head, router, norms, MTP layers) for the whole model and
for one GPU of the layout given by --tp/--ep/--dp, sharded as vLLM shards
them; KV-cache bytes per token in bf16 and fp8; and the approximations made
on import.

NAME is an embedded preset (see "moecast models") or the path of a Hugging
Face config.json.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Model = args[0]
			return runModelShow(s, opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Layout.TP, "tp", 1, "tensor-parallel size")
	f.IntVar(&opts.Layout.EP, "ep", 1, "expert-parallel size (1: experts split by TP x DP)")
	f.IntVar(&opts.Layout.DP, "dp", 1, "data-parallel size")
	f.BoolVar(&opts.Layout.DPAttention, "dp-attention", false, "attention data-parallel (attention weights whole on every GPU)")
	f.StringVar(&opts.Format, "format", formatText, "output format: text or json")
	return cmd
}

func runModelShow(s *streams, opts *modelShowOptions) error {
	if opts.Format != formatText && opts.Format != formatJSON {
		return inputErrf("--format: unknown format %q (want text or json)", opts.Format)
	}
	c, err := model.ResolveIn(opts.Model, s.In)
	if err != nil {
		return inputErr(err)
	}
	if err := c.CheckLayout(opts.Layout); err != nil {
		var le *model.LayoutError
		if errors.As(err, &le) {
			flag := "--" + strings.ToLower(le.Field)
			return inputErrf("%s: %s", flag, le.Msg)
		}
		return inputErr(err)
	}
	sh := newModelShow(c, opts.Layout)
	if opts.Format == formatJSON {
		return writeJSON(s.Out, sh)
	}
	return sh.text(s.Out)
}

// modelShow is `model show`'s JSON document; the text form prints the same.
// Sizes are in bytes.
type modelShow struct {
	Name              string          `json:"name"`
	Architecture      string          `json:"architecture"`
	ModelType         string          `json:"model_type"`
	Family            string          `json:"family"`
	Layers            int             `json:"layers"`
	DenseLayers       int             `json:"dense_layers"`
	MoELayers         int             `json:"moe_layers"`
	MTPLayers         int             `json:"mtp_layers"`
	Hidden            int             `json:"hidden"`
	Vocab             int             `json:"vocab"`
	DenseIntermediate int             `json:"dense_intermediate"`
	TieEmbeddings     bool            `json:"tie_word_embeddings"`
	Attention         attentionShow   `json:"attention"`
	MoE               moeShow         `json:"moe"`
	Quantization      string          `json:"quantization"`
	Params            paramsShow      `json:"params"`
	Layout            layoutShow      `json:"layout"`
	Weights           []weightRowShow `json:"weights"`
	// WeightsBytes and WeightsPerGPUBytes exclude the MTP layers (vLLM
	// loads them only for MTP speculative decoding); *_with_mtp include them.
	WeightsBytes              float64  `json:"weights_bytes"`
	WeightsPerGPUBytes        float64  `json:"weights_per_gpu_bytes"`
	WeightsBytesWithMTP       float64  `json:"weights_bytes_with_mtp"`
	WeightsPerGPUBytesWithMTP float64  `json:"weights_per_gpu_bytes_with_mtp"`
	KV                        []kvShow `json:"kv_cache"`
	// LayerKinds lists the groups of alike layers of a model whose layers
	// differ (hybrids, local/global attention, per-layer widths); absent
	// for a model of uniform layers.
	LayerKinds []layerKindShow `json:"layer_kinds,omitempty"`
	// RecurrentStateBytesPerSeq is the linear-attention / Mamba state one
	// sequence holds over the model (0 without recurrent layers).
	RecurrentStateBytesPerSeq float64  `json:"recurrent_state_bytes_per_seq,omitempty"`
	Notes                     []string `json:"notes"`
}

type layerKindShow struct {
	Name   string `json:"name"`
	Layers int    `json:"layers"`
	Mixer  string `json:"mixer"`
	// Attention: kind, heads/kv heads x head dim, window, sparse top-k.
	Attention string `json:"attention,omitempty"`
	FFN       string `json:"ffn"`
}

type attentionShow struct {
	Kind          string `json:"kind"`
	Heads         int    `json:"heads"`
	KVHeads       int    `json:"kv_heads"`
	HeadDim       int    `json:"head_dim,omitempty"`
	QLoRARank     int    `json:"q_lora_rank,omitempty"`
	KVLoRARank    int    `json:"kv_lora_rank,omitempty"`
	QKNopeDim     int    `json:"qk_nope_head_dim,omitempty"`
	QKRopeDim     int    `json:"qk_rope_head_dim,omitempty"`
	VHeadDim      int    `json:"v_head_dim,omitempty"`
	SlidingWindow int    `json:"sliding_window,omitempty"`
	SlidingLayers int    `json:"sliding_layers,omitempty"`
	IndexHeads    int    `json:"index_heads,omitempty"`
	IndexHeadDim  int    `json:"index_head_dim,omitempty"`
	IndexTopK     int    `json:"index_topk,omitempty"`
}

type moeShow struct {
	Experts            int `json:"experts"`
	TopK               int `json:"top_k"`
	Shared             int `json:"shared"`
	Intermediate       int `json:"intermediate"`
	SharedIntermediate int `json:"shared_intermediate"`
}

type paramsShow struct {
	Total  float64 `json:"total"`
	Active float64 `json:"active"`
	MTP    float64 `json:"mtp"`
}

type layoutShow struct {
	TP             int  `json:"tp"`
	EP             int  `json:"ep"`
	DP             int  `json:"dp"`
	DPAttention    bool `json:"dp_attention"`
	AttentionTP    int  `json:"attention_tp"`
	ExpertTP       int  `json:"expert_tp"`
	ExpertsPerRank int  `json:"experts_per_rank"`
}

type weightRowShow struct {
	Class       string  `json:"class"`
	Format      string  `json:"format"`
	Params      float64 `json:"params"`
	Bytes       float64 `json:"bytes"`
	PerGPUBytes float64 `json:"per_gpu_bytes"`
}

type kvShow struct {
	DType          string  `json:"dtype"`
	BytesPerToken  float64 `json:"bytes_per_token"`
	PerGPUPerToken float64 `json:"per_gpu_bytes_per_token"`
	// Checkpoint: the checkpoint declares this KV-cache dtype
	// (kv_cache_scheme / kv_cache_quant_algo), the scenario's default.
	Checkpoint bool `json:"from_checkpoint,omitempty"`
}

func newModelShow(c *model.Config, l model.Layout) *modelShow {
	a := c.Attn
	sh := &modelShow{
		Name: c.Name, Architecture: c.Architecture, ModelType: c.ModelType, Family: c.Family,
		Layers: c.Layers, DenseLayers: c.DenseLayerCount(), MoELayers: c.MoELayers(), MTPLayers: c.MTPLayers,
		Hidden: c.Hidden, Vocab: c.Vocab, DenseIntermediate: c.DenseInter, TieEmbeddings: c.TieEmbeddings,
		Attention: attentionShow{
			Kind: attentionName(c), Heads: a.Heads, KVHeads: a.KVHeads, HeadDim: a.HeadDim,
			QLoRARank: a.QLoRARank, KVLoRARank: a.KVLoRARank, QKNopeDim: a.QKNopeDim, QKRopeDim: a.QKRopeDim, VHeadDim: a.VHeadDim,
			SlidingWindow: a.SlidingWindow, SlidingLayers: a.SlidingLayers,
			IndexHeads: a.IndexHeads, IndexHeadDim: a.IndexHeadDim, IndexTopK: a.IndexTopK,
		},
		MoE:          moeShow{Experts: c.MoE.Experts, TopK: c.MoE.TopK, Shared: c.MoE.Shared, Intermediate: c.MoE.Inter, SharedIntermediate: c.MoE.SharedInter},
		Quantization: c.Quant.Method,
		Layout: layoutShow{TP: l.TP, EP: l.EP, DP: l.DP, DPAttention: l.DPAttention,
			AttentionTP: l.AttentionTP(), ExpertTP: l.ExpertTP(), ExpertsPerRank: l.ExpertsPerRank(c.MoE.Experts)},
		Notes: append([]string{}, c.Notes...),
	}
	if c.Kinds != nil {
		for _, k := range c.Kinds {
			sh.LayerKinds = append(sh.LayerKinds, layerKindOf(&k))
		}
	}
	sh.RecurrentStateBytesPerSeq = c.RecurrentStateBytes()
	p := c.Params()
	sh.Params = paramsShow{Total: p.Total, Active: p.Active, MTP: p.MTP}
	w := c.Weights(l)
	q := c.Quant
	formats := [model.NumClasses]string{
		model.ClassRoutedExperts: q.RoutedExperts.Name, model.ClassSharedExpert: q.SharedExpert.Name,
		model.ClassAttention: q.AttentionFormatName(), model.ClassDenseMLP: q.DenseMLP.Name,
		model.ClassEmbedding: q.Embedding.Name, model.ClassLMHead: q.LMHead.Name, model.ClassRouter: q.Router.Name,
		model.ClassNorm: q.Base.Name, model.ClassMTP: "as above",
	}
	for cls := range model.NumClasses {
		if w.Total[cls] == 0 {
			continue
		}
		sh.Weights = append(sh.Weights, weightRowShow{Class: cls.String(), Format: formats[cls], Params: p.PerClass[cls],
			Bytes: float64(w.Total[cls]), PerGPUBytes: float64(w.PerGPU[cls])})
	}
	sh.WeightsBytesWithMTP = float64(model.Sum(w.Total))
	sh.WeightsBytes = sh.WeightsBytesWithMTP - float64(w.Total[model.ClassMTP])
	sh.WeightsPerGPUBytes = float64(w.PerGPUTotal(false))
	sh.WeightsPerGPUBytesWithMTP = float64(w.PerGPUTotal(true))
	for _, kv := range []dtype.KVCache{dtype.KVBF16, dtype.KVFP8} {
		sh.KV = append(sh.KV, kvShow{DType: kv.String(), BytesPerToken: float64(c.KVBytesPerToken(kv)),
			PerGPUPerToken: float64(c.KVBytesPerTokenPerGPU(kv, l)), Checkpoint: q.KVCacheDeclared && q.KVCache == kv})
	}
	return sh
}

func (sh *modelShow) text(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("model         %s", sh.Name)
	p("architecture  %s (model_type %s)", sh.Architecture, sh.ModelType)
	p("layers        %d: %d dense, %d MoE; %d MTP", sh.Layers, sh.DenseLayers, sh.MoELayers, sh.MTPLayers)
	dense := ""
	if sh.DenseLayers > 0 {
		dense = fmt.Sprintf(", dense intermediate %d", sh.DenseIntermediate)
	}
	p("dims          hidden %d, vocab %d%s", sh.Hidden, sh.Vocab, dense)
	a := sh.Attention
	if strings.HasPrefix(a.Kind, "mla") {
		p("attention     %s: %d heads, q_lora %d, kv_lora %d, qk nope/rope %d/%d, v %d", a.Kind, a.Heads, a.QLoRARank, a.KVLoRARank, a.QKNopeDim, a.QKRopeDim, a.VHeadDim)
		if a.IndexHeads > 0 {
			p("              DSA indexer: %d heads x %d, top-%d tokens", a.IndexHeads, a.IndexHeadDim, a.IndexTopK)
		}
	} else {
		p("attention     %s: %d query heads, %d kv heads, head_dim %d", a.Kind, a.Heads, a.KVHeads, a.HeadDim)
		if a.SlidingLayers > 0 {
			p("              sliding window %d tokens on %d layers", a.SlidingWindow, a.SlidingLayers)
		}
	}
	for _, k := range sh.LayerKinds {
		a := ""
		if k.Attention != "" {
			a = " " + k.Attention
		}
		p("  kind        %3d x %-22s %s%s; ffn %s", k.Layers, k.Name, k.Mixer, a, k.FFN)
	}
	if sh.RecurrentStateBytesPerSeq > 0 {
		p("state         %s per sequence (recurrent layers, instead of KV)", unit.Bytes(sh.RecurrentStateBytesPerSeq))
	}
	m := sh.MoE
	shared := "no shared expert"
	if m.Shared > 0 {
		shared = fmt.Sprintf("%d shared (intermediate %d)", m.Shared, m.SharedIntermediate)
	}
	p("moe           %d routed experts, top-%d, intermediate %d; %s", m.Experts, m.TopK, m.Intermediate, shared)
	p("quantization  %s", sh.Quantization)
	p("params        %.2fB total, %.2fB active per token, %.2fB in MTP layers", sh.Params.Total/1e9, sh.Params.Active/1e9, sh.Params.MTP/1e9)
	l := sh.Layout
	dpa := ""
	if l.DPAttention {
		dpa = ", dp-attention"
	}
	p("layout        tp %d, ep %d, dp %d%s: attention-TP %d, expert-TP %d, %d experts per GPU", l.TP, l.EP, l.DP, dpa, l.AttentionTP, l.ExpertTP, l.ExpertsPerRank)
	p("")
	t := &table{Columns: []column{{Name: "class"}, {Name: "format"}, {Name: "params_b", Text: "%.3f"}, {Name: "total_gb", Text: "%.3f"}, {Name: "per_gpu_gb", Text: "%.3f"}}}
	for _, r := range sh.Weights {
		t.add(r.Class, r.Format, r.Params/1e9, r.Bytes/1e9, r.PerGPUBytes/1e9)
	}
	if sh.MTPLayers > 0 {
		t.add("sum (no mtp)", "", sh.Params.Total/1e9, sh.WeightsBytes/1e9, sh.WeightsPerGPUBytes/1e9)
		t.add("sum with mtp", "", (sh.Params.Total+sh.Params.MTP)/1e9, sh.WeightsBytesWithMTP/1e9, sh.WeightsPerGPUBytesWithMTP/1e9)
	} else {
		t.add("sum", "", sh.Params.Total/1e9, sh.WeightsBytes/1e9, sh.WeightsPerGPUBytes/1e9)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := t.render(w, formatText); err != nil {
		return err
	}
	b.Reset()
	p("")
	for _, kv := range sh.KV {
		from := ""
		if kv.Checkpoint {
			from = " (from checkpoint)"
		}
		p("kv cache %-4s %s per token, %s per token per GPU%s", kv.DType, unit.Bytes(kv.BytesPerToken), unit.Bytes(kv.PerGPUPerToken), from)
	}
	for _, n := range sh.Notes {
		p("note: %s", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// layerKindOf describes a layer kind for `model show`.
func layerKindOf(k *model.LayerKind) layerKindShow {
	out := layerKindShow{Name: k.Name, Layers: k.Count, Mixer: k.Mixer.String()}
	switch k.Mixer {
	case model.MixAttention:
		a := k.Attn
		switch a.Kind {
		case model.GQA:
			out.Attention = fmt.Sprintf("gqa %d/%d heads x %d", a.Heads, a.KVHeads, a.HeadDim)
			if a.VHeadDim > 0 && a.VHeadDim != a.HeadDim {
				out.Attention += fmt.Sprintf(" (v %d)", a.VHeadDim)
			}
		case model.MLA:
			out.Attention = fmt.Sprintf("mla %d heads, kv_lora %d", a.Heads, a.KVLoRARank)
		case model.DSV4:
			out.Attention = fmt.Sprintf("dsv4 %d heads x %d, compress %d", a.Heads, a.HeadDim, a.Compress)
		}
		if a.SlidingWindow > 0 && (k.SlideFrac > 0 || a.Kind == model.DSV4) {
			out.Attention += fmt.Sprintf(", window %d", a.SlidingWindow)
		}
		if a.IndexHeads > 0 && a.IndexTopK > 0 {
			out.Attention += fmt.Sprintf(", sparse top-%d", a.IndexTopK)
		}
	case model.MixGDN, model.MixKDA, model.MixMamba2:
		r := k.Rec
		out.Attention = fmt.Sprintf("%d heads, state %d x %d", r.Heads, r.KDim, r.VDim)
	}
	switch k.FFN {
	case model.FFNDense:
		out.FFN = fmt.Sprintf("dense %d", k.Inter)
	case model.FFNMoE:
		out.FFN = "moe"
	default:
		out.FFN = "none"
	}
	return out
}
