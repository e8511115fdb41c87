package cli

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the real command.
func newModelCmd(s *streams) *cobra.Command {
	return &cobra.Command{Use: "model", Hidden: true}
}
