package cli

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the real command.
func newModelsCmd(s *streams) *cobra.Command {
	return &cobra.Command{Use: "models", Hidden: true}
}
