package cli

import (
	"bufio"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/declcfg"
)

func newRenderCmd(s Streams, _ *globalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "render [catalog-image | catalog-directory | bundle-image | bundle-directory]...",
		Short: "Generate a stream of file-based catalog objects from catalogs and bundles",
		Long: `Generate a stream of file-based catalog objects to stdout from the provided
catalog images, file-based catalog directories, bundle images, and bundle directories.
The objects of all references compose into one stream, in upstream opm's order.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := declcfg.ParseFormat(output)
			if err != nil {
				return err
			}
			out := bufio.NewWriterSize(s.Out, 1<<20)
			r := action.Render{Refs: args, Format: format}
			if err := r.Run(cmd.Context(), out); err != nil {
				return err
			}
			return out.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "json", "Output format of the streamed file-based catalog objects (json|yaml)")
	return cmd
}
