package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/report/view"
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
	cmd.AddCommand(newModelShowCmd(s, nil))
	return cmd
}

// modelShowOptions are the inputs of `moecast model show`.
type modelShowOptions struct {
	Model  string // preset name or config.json path
	Layout model.Layout
	Format string // text | json
}

func newModelShowCmd(s *streams, runF func(*modelShowOptions) error) *cobra.Command {
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
			if runF != nil {
				return runF(opts)
			}
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
		return err // a *model.ResolveError
	}
	if err := c.CheckLayout(opts.Layout); err != nil {
		var le *model.LayoutError
		if errors.As(err, &le) {
			// Named by the flag that set the field: "--tp: ...".
			return &model.LayoutError{Field: "--" + strings.ToLower(le.Field), Msg: le.Msg}
		}
		return err
	}
	return output{views: newModelShow(c, opts.Layout).Views()}.write(s, opts.Format)
}

func newModelShow(c *model.Config, l model.Layout) *view.ModelShow {
	a := c.Attn
	sh := &view.ModelShow{
		Name: c.Name, Architecture: c.Architecture, ModelType: c.ModelType, Family: c.Family,
		Layers: c.Layers, DenseLayers: c.DenseLayerCount(), MoELayers: c.MoELayers(), MTPLayers: c.MTPLayers,
		Hidden: c.Hidden, Vocab: c.Vocab, DenseIntermediate: c.DenseInter, TieEmbeddings: c.TieEmbeddings,
		Attention: view.AttentionShow{
			Kind: view.AttentionName(c), Heads: a.Heads, KVHeads: a.KVHeads, HeadDim: a.HeadDim,
			QLoRARank: a.QLoRARank, KVLoRARank: a.KVLoRARank, QKNopeDim: a.QKNopeDim, QKRopeDim: a.QKRopeDim, VHeadDim: a.VHeadDim,
			SlidingWindow: a.SlidingWindow, SlidingLayers: a.SlidingLayers,
			IndexHeads: a.IndexHeads, IndexHeadDim: a.IndexHeadDim, IndexTopK: a.IndexTopK,
		},
		MoE:          view.MoEShow{Experts: c.MoE.Experts, TopK: c.MoE.TopK, Shared: c.MoE.Shared, Intermediate: c.MoE.Inter, SharedIntermediate: c.MoE.SharedInter},
		Quantization: c.Quant.Method,
		Layout: view.LayoutShow{TP: l.TP, EP: l.EP, DP: l.DP, DPAttention: l.DPAttention,
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
	sh.Params = view.ParamsShow{Total: p.Total, Active: p.Active, MTP: p.MTP}
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
		sh.Weights = append(sh.Weights, view.WeightRowShow{Class: cls.String(), Format: formats[cls], Params: p.PerClass[cls],
			Bytes: float64(w.Total[cls]), PerGPUBytes: float64(w.PerGPU[cls])})
	}
	sh.WeightsBytesWithMTP = float64(model.Sum(w.Total))
	sh.WeightsBytes = sh.WeightsBytesWithMTP - float64(w.Total[model.ClassMTP])
	sh.WeightsPerGPUBytes = float64(w.PerGPUTotal(false))
	sh.WeightsPerGPUBytesWithMTP = float64(w.PerGPUTotal(true))
	for _, kv := range []dtype.KVCache{dtype.KVBF16, dtype.KVFP8} {
		sh.KV = append(sh.KV, view.KVShow{DType: kv.String(), BytesPerToken: float64(c.KVBytesPerToken(kv)),
			PerGPUPerToken: float64(c.KVBytesPerTokenPerGPU(kv, l)), Checkpoint: q.KVCacheDeclared && q.KVCache == kv})
	}
	return sh
}

// layerKindOf describes a layer kind for `model show`.
func layerKindOf(k *model.LayerKind) view.LayerKindShow {
	out := view.LayerKindShow{Name: k.Name, Layers: k.Count, Mixer: k.Mixer.String()}
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
