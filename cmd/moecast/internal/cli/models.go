package cli

import (
	"github.com/spf13/cobra"

	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/report"
)

// modelsOptions are the inputs of `moecast models`.
type modelsOptions struct {
	Format string // text | json | csv
}

func newModelsCmd(s *streams, runF func(*modelsOptions) error) *cobra.Command {
	opts := &modelsOptions{}
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the embedded model presets",
		Long: `List the embedded model presets (HF config.json files from
ai-dynamo/aiconfigurator @ 095f58a, Apache-2.0) with their dimensions,
storage formats, parameter counts and weight bytes.

params_b counts the main model (MTP layers not included); active_b is what
one token reads (all but the routed experts, plus top-k of them);
weights_gb is the checkpoint as vLLM loads it for serving without MTP,
group scales included (GB = 1e9 bytes). "moecast model show NAME" gives the
byte accounting per weight class and per GPU.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runModels(s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	return cmd
}

func runModels(s *streams, opts *modelsOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	t := &report.Table{Columns: []report.Column{
		{Name: "name"}, {Name: "architecture"}, {Name: "layers"}, {Name: "hidden"},
		{Name: "experts"}, {Name: "top_k"}, {Name: "shared"}, {Name: "attention"},
		{Name: "expert_format"}, {Name: "other_format"},
		{Name: "params_b", Text: "%.1f"}, {Name: "active_b", Text: "%.1f"}, {Name: "weights_gb", Text: "%.1f"},
	}}
	for _, n := range model.PresetNames() {
		c, err := model.Preset(n)
		if err != nil {
			return err // an embedded preset that does not import is a bug, not bad input
		}
		p := c.Params()
		w := c.Weights(model.Layout{TP: 1, EP: 1, DP: 1})
		t.Add(n, c.Architecture, c.Layers, c.Hidden, c.MoE.Experts, c.MoE.TopK, c.MoE.Shared, attentionName(c),
			c.Quant.RoutedExperts.Name, c.Quant.Attention.Name,
			p.Total/1e9, p.Active/1e9, w.PerGPUTotal(false).GB())
	}
	return t.Render(s.Out, report.Format(opts.Format))
}

// attentionName is "mla", "mla+dsa" or "gqa" (with "+swa" when some layers
// use a sliding window).
func attentionName(c *model.Config) string {
	n := c.Attn.Kind.String()
	if c.Attn.IndexHeads > 0 {
		n += "+dsa"
	}
	if c.Attn.SlidingLayers > 0 {
		n += "+swa"
	}
	return n
}
