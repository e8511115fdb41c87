package cli

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the real command.
func newGPUsCmd(s *streams) *cobra.Command {
	return &cobra.Command{Use: "gpus", Hidden: true}
}
