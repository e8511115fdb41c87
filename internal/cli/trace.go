package cli

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the real command.
func newTraceCmd(s *streams) *cobra.Command {
	return &cobra.Command{Use: "trace", Hidden: true}
}
