package cli

import (
	"github.com/spf13/cobra"

	"github.com/moecast/moecast/report/view"
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
	t, err := view.ModelsTable()
	if err != nil {
		return err
	}
	return output{views: view.TableViews(t)}.write(s, opts.Format)
}
