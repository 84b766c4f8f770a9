package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/action/migrations"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/graph"
	alphatemplate "github.com/fastopm/fastopm/alpha/template"
	"github.com/fastopm/fastopm/pkg/progress"
)

func newRenderTemplateCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		output       string
		migrateLevel string
		cacheDir     string
	)
	reg := alphatemplate.NewRegistry()
	cmd := &cobra.Command{
		Use:   "render-template [TYPE] [FILE]",
		Short: "Render a catalog template (auto-detects type from schema if TYPE not specified)",
		Long: `Render a catalog template with optional type specification.

If TYPE is specified, it must be one of: ` + reg.HelpText() + `
If TYPE is not specified, the template type will be auto-detected from the schema field in the input file.

When FILE is '-' or not provided, the template is read from standard input.
FILE must not match a supported TYPE name when TYPE is not provided, to avoid ambiguity.

Examples:
  opm alpha render-template basic template.yaml
  opm alpha render-template semver template.yaml  
  opm alpha render-template template.yaml  # auto-detect type
  opm alpha render-template < template.yaml  # auto-detect from stdin`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Upstream returns every error to cobra, which prints it with
			// the usage.
			if err := runRenderTemplate(cmd, s, g, reg, args, output, migrateLevel, cacheDir); err != nil {
				return &usageReport{err}
			}
			return nil
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVarP(&output, "output", "o", "json", "Output format (json|yaml|mermaid)")
	pf.StringVar(&migrateLevel, "migrate-level", "", "Name of the last migration to run (default: none)\n"+migrations.HelpText())
	addImageCacheFlag(cmd, &cacheDir)
	return cmd
}

func runRenderTemplate(cmd *cobra.Command, s Streams, g *globalOptions, reg *alphatemplate.Registry, args []string, output, migrateLevel, cacheDir string) error {
	var typeName, file string
	switch len(args) {
	case 0:
		file = "-"
	case 1:
		// A type name reads standard input: a file named like a type
		// cannot be given alone.
		if reg.HasType(args[0]) {
			typeName, file = args[0], "-"
		} else {
			file = args[0]
		}
	case 2:
		typeName, file = args[0], args[1]
		if !reg.HasType(typeName) {
			return fmt.Errorf("invalid template type %q, must be one of: %s", typeName, reg.TypeNames())
		}
	}

	in, source, err := openFileOrStdin(s, file)
	if err != nil {
		return fmt.Errorf("unable to open %q: %v", source, err)
	}
	defer in.Close()

	var format declcfg.Format
	switch output {
	case "json":
		format = declcfg.FormatJSON
	case "yaml":
		format = declcfg.FormatYAML
	case "mermaid":
	default:
		return fmt.Errorf("invalid --output value %q, expected (json|yaml|mermaid)", output)
	}

	var m *migrations.Migrations
	if migrateLevel != "" {
		if m, err = migrations.New(migrateLevel); err != nil {
			return err
		}
	}
	renderer := &action.TemplateBundleRenderer{Resolver: &action.Resolver{
		ImageOptions: g.imageOptions(cacheDir),
		Migrations:   m,
		Progress:     action.NewPullProgress(progress.New(s.Err, s.Terminal)),
		// Upstream's template rendering discards its bundle loader's
		// logs; so are the bundle warnings here.
	}}

	var (
		t      alphatemplate.Type
		reader io.Reader = in
	)
	if typeName != "" {
		t, _ = reg.ByName(typeName)
	} else if t, reader, err = reg.Detect(in); err != nil {
		return fmt.Errorf("auto-detecting template type: %v", err)
	}
	cfg, err := t.Render(cmd.Context(), reader, renderer.Render)
	renderer.Resolver.Finish()
	if err != nil {
		return fmt.Errorf("rendering template: %v", err)
	}
	var buf bytes.Buffer
	if output == "mermaid" {
		// Upstream draws the rendered catalog's channels with
		// render-graph's writer and its default options.
		bld := graph.NewBuilder()
		bld.AddConfig(cfg)
		gr, err := bld.Build()
		if err == nil {
			err = gr.WriteMermaid(&buf, graph.MermaidOptions{})
		}
		if err != nil {
			return fmt.Errorf("writing output: %v", err)
		}
	} else if err := cfg.WriteTo(&buf, format); err != nil {
		return fmt.Errorf("writing output: %v", err)
	}
	if _, err := s.Out.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing output: %v", err)
	}
	return nil
}

// openFileOrStdin opens file, or returns standard input for "-", with the
// name upstream's messages use for it.
func openFileOrStdin(s Streams, file string) (io.ReadCloser, string, error) {
	if file == "" || file == "-" {
		return io.NopCloser(s.In), "stdin", nil
	}
	f, err := os.Open(file)
	return f, file, err
}
