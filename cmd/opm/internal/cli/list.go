package cli

import (
	"bufio"
	"context"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
)

// listNote ends the long help of every list command, as upstream's.
const listNote = `NOTE: This is meant to be used for convenience and human-readability only. The
CLI and output format are subject to change, so it is not recommended to depend
on the output in any programs or scripts. Use the "render" subcommand to do
more complex processing and automation.`

// newListCmd is `opm alpha list`: packages, channels and bundles of a
// catalog directory or image, in upstream's tables. Like upstream's, the
// parent command only prints its help, whatever its arguments.
func newListCmd(s Streams, g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List contents of an index",
		Long: `The list subcommands print the contents of an index.

` + listNote,
	}
	cmd.AddCommand(
		newListSubCmd(s, g, "packages <indexRef>", "List packages in an index",
			// Upstream's words, "channels" included.
			`The "channels" command lists the channels from the specified index.`,
			cobra.ExactArgs(1), func(ctx context.Context, l action.List, out *bufio.Writer) error {
				rows, err := l.Packages(ctx)
				if err != nil {
					return err
				}
				return action.WritePackages(out, rows)
			}),
		newListSubCmd(s, g, "channels <indexRef> [packageName]", "List package channels in an index",
			`The "channels" command lists the channels from the specified index and package.`,
			cobra.RangeArgs(1, 2), func(ctx context.Context, l action.List, out *bufio.Writer) error {
				rows, err := l.Channels(ctx)
				if err != nil {
					return err
				}
				return action.WriteChannels(out, rows)
			}),
		newListSubCmd(s, g, "bundles <indexRef> <packageName>", "List package bundles in an index",
			`The "bundles" command lists the bundles from the specified index and package.
Bundles that exist in multiple channels are duplicated in the output (one
for each channel in which the bundle is present).`,
			cobra.RangeArgs(1, 2), func(ctx context.Context, l action.List, out *bufio.Writer) error {
				rows, err := l.Bundles(ctx)
				if err != nil {
					return err
				}
				return action.WriteBundles(out, rows)
			}),
	)
	return cmd
}

// newListSubCmd is one list command. Errors are logrus fatal lines, as
// upstream reports them; the table is written only once it is complete.
func newListSubCmd(s Streams, g *globalOptions, use, short, long string, args cobra.PositionalArgs,
	run func(context.Context, action.List, *bufio.Writer) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long + "\n\n" + listNote,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			l := action.List{
				Ref: args[0],
				Sources: &action.Resolver{
					ImageOptions: g.imageOptions(""),
					Allowed:      action.RefCatalogDir | action.RefCatalogImage,
				},
				MaxFileSize: g.maxFileSize.limit(),
			}
			if len(args) > 1 {
				l.Package = args[1]
			}
			out := bufio.NewWriterSize(s.Out, 1<<16)
			if err := run(cmd.Context(), l, out); err != nil {
				return err
			}
			return out.Flush()
		},
	}
}
