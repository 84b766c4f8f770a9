package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/graph"
	"github.com/fastopm/fastopm/pkg/progress"
)

// renderGraphFormats are the values of render-graph's --output.
var renderGraphFormats = []string{action.GraphMermaid, action.GraphDOT, action.GraphSVG}

// renderGraphExample is upstream's example text, byte for byte.
const renderGraphExample = `
#
# Output channel graph of a catalog in mermaid format
#
$ opm alpha render-graph quay.io/operatorhubio/catalog:latest

#
# Output channel graph of a catalog and generate a scaled vector graphic (SVG) representation
#
$ opm alpha render-graph quay.io/operatorhubio/catalog:latest | \
    docker run --rm -i -v "$PWD":/data ghcr.io/mermaid-js/mermaid-cli/mermaid-cli -o /data/operatorhubio-catalog.svg

# Note:  mermaid has a default maxTextSize of 30 000 characters.  To override this, generate a JSON-formatted initialization file for
# mermaid like this (using 300 000 for the limit):
$ cat << EOF > ./mermaid.json
{ "maxTextSize": 300000 }
EOF
# and then pass the file for initialization configuration, via the '-c' option, like:
$ opm alpha render-graph quay.io/operatorhubio/catalog:latest | \
    docker run --rm -i -v "$PWD":/data ghcr.io/mermaid-js/mermaid-cli/mermaid-cli -c /data/mermaid.json -o /data/operatorhubio-catalog.svg


		`

// newRenderGraphCmd is `opm alpha render-graph`: upstream's mermaid text of
// the upgrade graph of catalog directories and images.
func newRenderGraphCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		opts   graph.MermaidOptions
		output string
	)
	cmd := &cobra.Command{
		Use:     "render-graph [index-image | fbc-dir]",
		Short:   "Generate mermaid-formatted view of upgrade graph of operators in an index",
		Long:    `Generate mermaid-formatted view of upgrade graphs of operators in an index`,
		Args:    cobra.MinimumNArgs(1),
		Example: renderGraphExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Upstream reports every error through Go's standard logger.
			if !slices.Contains(renderGraphFormats, output) {
				return &stdLogError{fmt.Errorf("invalid --output value %q, expected (%s)", output, strings.Join(renderGraphFormats, "|"))}
			}
			opts.Warn = func(msg string) { fmt.Fprintln(s.Err, msg) }
			r := action.RenderGraph{
				Refs: args,
				Sources: &action.Resolver{
					ImageOptions: g.imageOptions(""),
					Allowed:      action.RefCatalogDir | action.RefCatalogImage,
				},
				MaxFileSize: g.maxFileSize.limit(),
				Options:     opts,
				Format:      output,
				Progress:    progress.New(s.Err, s.Terminal),
			}
			if err := r.Run(cmd.Context(), s.Out); err != nil {
				return &stdLogError{err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.MinEdge, "minimum-edge", "", "the channel edge to be used as the lower bound of the set of edges composing the upgrade graph; default is to include all edges")
	f.StringVarP(&opts.Package, "package-name", "p", "", "a specific package name to filter output; default is to include all packages in reference")
	f.BoolVar(&opts.V0Semantics, "draw-v0-semantics", false, "whether to indicate OLMv0 semantics in the output; default is to simply represent the upgrade graph")
	f.StringVarP(&output, "output", "o", "mermaid", "Output format of the graph (mermaid|dot|svg): dot is Graphviz's language, svg a picture drawn in process (no container, no browser), with channel heads, skipped and deprecated bundles marked and a legend")
	return cmd
}
