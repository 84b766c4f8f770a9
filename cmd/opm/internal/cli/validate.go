package cli

import "github.com/spf13/cobra"

func newValidateCmd(_ Streams) *cobra.Command {
	return &cobra.Command{Use: "validate <directory>", Hidden: true}
}
