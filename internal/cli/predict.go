package cli

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the real command.
func newPredictCmd(s *streams) *cobra.Command {
	return &cobra.Command{Use: "predict", Hidden: true}
}
