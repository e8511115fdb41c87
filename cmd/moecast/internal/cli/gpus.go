package cli

import (
	"github.com/spf13/cobra"

	"github.com/moecast/moecast/report/view"
)

// gpusOptions are the flags of `moecast gpus`.
type gpusOptions struct {
	Format string // text | json | csv
}

func newGPUsCmd(s *streams, runF func(*gpusOptions) error) *cobra.Command {
	opts := &gpusOptions{}
	cmd := &cobra.Command{
		Use:   "gpus",
		Short: "List the GPU and fabric presets with their figures",
		Long: `List the GPU presets (memory, DRAM bandwidth, dense tensor-core peaks, L2,
architecture) and the intra-node fabric presets (bandwidth per direction,
hop latency, P2P, and the collective bandwidths the cost model uses) that
a scenario can name in [hardware].

JSON output is {"gpus": [...], "fabrics": [...]}; CSV output is the GPU
table, an empty line, then the fabric table.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runGPUs(s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	return cmd
}

func runGPUs(s *streams, opts *gpusOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	return output{views: view.GPUsViews()}.write(s, opts.Format)
}
