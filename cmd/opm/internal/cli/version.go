package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/pkg/version"
)

func newVersionCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the opm version",
		Args:  cobra.ArbitraryArgs, // upstream ignores arguments
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(s.Out, version.String())
			return err
		},
	}
}
