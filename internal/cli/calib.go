package cli

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the real command.
func newCalibCmd(s *streams) *cobra.Command {
	return &cobra.Command{Use: "calib", Hidden: true}
}
