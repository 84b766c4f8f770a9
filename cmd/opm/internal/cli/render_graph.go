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

// renderGraphLong is the command's description: upstream's, which speaks
// of mermaid only, with the formats and catalogs it takes here.
const renderGraphLong = `Generate a view of the upgrade graphs of the operators in one or more
indexes: catalog images or file-based catalog directories, several drawn
as one catalog (their channels and bundles together).

The output is mermaid flowchart text by default, as upstream opm prints
it; -o dot prints Graphviz's DOT language; -o svg draws an SVG picture in
process (Graphviz in WebAssembly: no container, no browser), with channel
heads, skipped and deprecated bundles marked and a legend.

-p draws one package: a package no index has is an error, with the
nearest names; --minimum-edge draws from a bundle on.`

// renderGraphExample shows each format; the last is upstream's own
// example of mermaid's renderer.
const renderGraphExample = `  # mermaid text, as upstream opm prints it
  opm alpha render-graph quay.io/operatorhubio/catalog:latest

  # an SVG picture of one package, drawn in process
  opm alpha render-graph ./catalog -p etcd -o svg > etcd.svg

  # several catalogs drawn as one, as DOT for Graphviz's tools
  opm alpha render-graph ./community ./certified -p etcd -o dot | dot -Tpng > etcd.png

  # mermaid's renderer on the mermaid text (mermaid's maxTextSize, 30 000
  # characters by default, is raised with a configuration file and -c)
  echo '{ "maxTextSize": 300000 }' > mermaid.json
  opm alpha render-graph quay.io/operatorhubio/catalog:latest | \
      docker run --rm -i -v "$PWD":/data ghcr.io/mermaid-js/mermaid-cli/mermaid-cli -c /data/mermaid.json -o /data/catalog.svg`

// newRenderGraphCmd is `opm alpha render-graph`: upstream's mermaid text of
// the upgrade graph of catalog directories and images, or DOT, or SVG.
func newRenderGraphCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		opts   graph.MermaidOptions
		output string
	)
	cmd := &cobra.Command{
		Use:     "render-graph [index-image | fbc-dir]",
		Short:   "Generate mermaid-formatted view of upgrade graph of operators in an index",
		Long:    renderGraphLong,
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
