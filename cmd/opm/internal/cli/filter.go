package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/declcfg"
)

// newFilterCmd is `opm alpha filter`.
func newFilterCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		configFile, outDir, format, cacheDir string
	)
	cmd := &cobra.Command{
		Use:   "filter INDEX --config FILE [-o DIR|-]",
		Short: "Keep part of a catalog (packages, channels, versions) as a catalog that still validates",
		Long: `Keep the packages, channels and bundle versions a configuration selects,
and write them as a valid catalog: one directory per package as
"opm migrate" writes (-o DIR), or a stream on standard output (-o -, the
default).

The configuration (YAML or JSON) follows oc-mirror v2's operator filtering:

  full: false            # true: every bundle of the selected channels
  packages:              # none: every package
    - name: etcd         # no channels: the default channel
      minVersion: 0.9.2  # bounds on the default channel (inclusive)
      maxVersion: 0.9.4
    - name: other
      defaultChannel: fast   # required when the default channel is left out
      channels:
        - name: fast         # no bounds: the head only (unless full)
        - name: stable
          minVersion: 1.2.0  # from 1.2.0 up to the head

The result is a catalog "opm validate" accepts, checked before anything is
written: replaces edges are re-pointed to the nearest kept bundle down the
chain, skips of removed bundles are dropped, a kept bundle whose only way to
the head went through removed bundles is skipped by the new head (so it
still updates to it), deprecations of removed bundles and channels are
dropped.`,
		Example: `  opm alpha filter quay.io/example/catalog:latest --config filter.yaml -o ./filtered
  opm alpha filter ./catalog --config filter.yaml --format yaml > filtered.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "json" && format != "yaml" {
				return fmt.Errorf("invalid --format value %q, expected (json|yaml)", format)
			}
			if configFile == "" {
				return &usageReport{fmt.Errorf("--config is required")}
			}
			data, err := os.ReadFile(configFile)
			if err != nil {
				return err
			}
			conf, err := action.ParseFilterConfig(data)
			if err != nil {
				return fmt.Errorf("%s: %w", configFile, err)
			}
			f := action.Filter{Ref: args[0], Config: conf, MaxFileSize: g.maxFileSize.limit(), Format: declcfg.Format(format), Out: s.Out,
				Sources: &action.Resolver{ImageOptions: g.imageOptions(cacheDir), MaxFileSize: g.maxFileSize.limit(),
					Allowed: action.RefCatalogDir | action.RefCatalogImage}}
			if outDir != "-" {
				f.OutputDir = outDir
				if entries, err := os.ReadDir(outDir); err == nil && len(entries) > 0 {
					return fmt.Errorf("output dir %q must be empty", outDir)
				}
			}
			return f.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&configFile, "config", "c", "", "the filter configuration (YAML or JSON)")
	cmd.Flags().StringVarP(&outDir, "output", "o", "-", "output directory (missing or empty), or - for a stream on standard output")
	cmd.Flags().StringVar(&format, "format", "json", "Output format (json|yaml)")
	addImageCacheFlag(cmd, &cacheDir)
	return cmd
}
