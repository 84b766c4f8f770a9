package cli

import (
	"bufio"
	"fmt"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/action/migrations"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/progress"
)

func newRenderCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		output           string
		migrateLevel     string
		migrateAll       bool
		imageRefTemplate string
		strict           bool
		cacheDir         string
	)
	cmd := &cobra.Command{
		Use:   "render [catalog-image | catalog-directory | bundle-image | bundle-directory]...",
		Short: "Generate a stream of file-based catalog objects from catalogs and bundles",
		Long: `Generate a stream of file-based catalog objects to stdout from the provided
catalog images, file-based catalog directories, bundle images, and bundle directories.
The objects of all references compose into one stream, in upstream opm's order.

A reference that names an existing directory is a bundle directory when it
holds manifests/ and metadata/, else a catalog directory. Any other reference
is an image: a catalog image (label operators.operatorframework.io.index.configs.v1)
or a bundle image (label operators.operatorframework.io.bundle.package.v1).
Credentials come from $REGISTRY_AUTH_FILE, the Docker configuration and
podman's auth.json.

Bundles are rendered as upstream opm renders them; registry+v1 rules that
upstream does not check at render time (a channel in the annotations, one
named CSV, owned CRD versions served) are reported as warnings on stderr,
or as errors with --strict.

If rendering sources that do not carry bundle image reference information
(e.g. bundle directories), the --alpha-image-ref-template flag can be used to
generate image references for the rendered file-based catalog objects.
This is useful when generating a catalog with image references prior to
those images actually existing. Available template variables are:
  - {{.Package}} : the package name the bundle belongs to
  - {{.Name}}    : the name of the bundle (for registry+v1 bundles, this is the CSV name)
  - {{.Version}} : the version of the bundle`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			// Upstream's render reports every error through Go's standard
			// logger.
			defer func() {
				if err != nil {
					err = &stdLogError{err}
				}
			}()
			format, err := declcfg.ParseFormat(output)
			if err != nil {
				return fmt.Errorf("invalid --output value %q, expected (json|yaml)", output)
			}
			var m *migrations.Migrations
			switch {
			case migrateAll:
				m, err = migrations.New(migrations.All)
			case migrateLevel != "":
				m, err = migrations.New(migrateLevel)
			}
			if err != nil {
				return err
			}
			var tmpl *template.Template
			if imageRefTemplate != "" {
				if tmpl, err = template.New("image-ref-template").Parse(imageRefTemplate); err != nil {
					return fmt.Errorf("invalid image reference template: %w", err)
				}
			}
			res := &action.Resolver{
				ImageRefTemplate: tmpl,
				StrictBundles:    strict,
				Warn:             func(msg string) { logLine(s.Err, "warning", msg) },
				ImageOptions:     g.imageOptions(cacheDir),
				Migrations:       m,
				Progress:         action.NewPullProgress(progress.New(s.Err, s.Terminal)),
			}
			out := bufio.NewWriterSize(s.Out, 1<<20)
			res.MaxFileSize = g.maxFileSize.limit()
			r := action.Render{Refs: args, Format: format, Sources: res, MaxFileSize: g.maxFileSize.limit(),
				Warn: func(msg string) { logLine(s.Err, "warning", msg) }}
			if err := r.Run(cmd.Context(), out); err != nil {
				return err
			}
			return out.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "json", "Output format of the streamed file-based catalog objects (json|yaml)")
	f.StringVar(&migrateLevel, "migrate-level", "", "Name of the last migration to run (default: none)\n"+migrations.HelpText())
	f.BoolVar(&migrateAll, "migrate", false, "Perform all available schema migrations on the rendered FBC")
	cmd.MarkFlagsMutuallyExclusive("migrate", "migrate-level")
	f.StringVar(&imageRefTemplate, "alpha-image-ref-template", "", "When bundle image reference information is unavailable, populate it with this template")
	f.BoolVar(&strict, "strict", false, "Fail on bundle problems that upstream opm renders without complaint (no channel, several CSVs, an owned CRD version not served, ...)")
	addImageCacheFlag(cmd, &cacheDir)
	return cmd
}
