//go:build !opm_lean

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/progress"
)

// newFilterCmd is `opm alpha filter`.
func newFilterCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		configFile, output, cacheDir string
	)
	cmd := &cobra.Command{
		Use:   filterCommand.use,
		Short: filterCommand.short,
		Long: `Keep the packages, channels and bundle versions a configuration selects,
and write them as a valid catalog: on standard output as "opm render"
writes it, or, given OUTPUT_DIR (missing or empty), one directory per
package as "opm migrate" writes. -o is the format, json or yaml, as for
render and migrate.

The configuration (YAML or JSON) follows oc-mirror v2's operator filtering:

  schema: olm.filter.v1  # optional
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
dropped.

Exit codes: 0 when the catalog was written, 2 when the command line, the
configuration or the catalog is wrong, or the result could not be
written (nothing is written then).`,
		Example: `  opm alpha filter quay.io/example/catalog:latest ./filtered --config filter.yaml
  opm alpha filter ./catalog --config filter.yaml -o yaml > filtered.yaml`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "json" && output != "yaml" {
				return &usageReport{fmt.Errorf("invalid --output value %q, expected (json|yaml): -o is the format, as in opm render; the output directory is the argument after INDEX", output)}
			}
			if configFile == "" {
				return &usageReport{fmt.Errorf("--config is required")}
			}
			rep := progress.New(s.Err, s.Terminal)
			f := action.Filter{Ref: args[0], MaxFileSize: g.maxFileSize.limit(), Format: declcfg.Format(output), Out: s.Out, Progress: rep,
				Sources: &action.Resolver{ImageOptions: g.imageOptions(cacheDir), MaxFileSize: g.maxFileSize.limit(),
					Allowed: action.RefCatalogDir | action.RefCatalogImage}}
			sum, err := runFilter(cmd.Context(), &f, configFile, args[1:])
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			rep.Printf("%s", sum)
			return nil
		},
	}
	cmd.Flags().StringVarP(&configFile, "config", "c", "", "the filter configuration (YAML or JSON)")
	cmd.Flags().StringVarP(&output, "output", "o", "json", "Output format (json|yaml)")
	addImageCacheFlag(cmd, &cacheDir)
	return questionCommand(cmd)
}

// runFilter reads the configuration and runs f, into the directory dir[0]
// when given.
func runFilter(ctx context.Context, f *action.Filter, configFile string, dir []string) (action.FilterSummary, error) {
	data, err := os.ReadFile(configFile)
	if err != nil {
		return action.FilterSummary{}, err
	}
	if f.Config, err = action.ParseFilterConfig(data); err != nil {
		return action.FilterSummary{}, nameConfig(err, configFile)
	}
	if len(dir) > 0 {
		f.OutputDir = dir[0]
		if st, err := os.Stat(f.OutputDir); err == nil && !st.IsDir() {
			return action.FilterSummary{}, fmt.Errorf("output directory %q is a file, not a directory", f.OutputDir)
		}
		if entries, err := os.ReadDir(f.OutputDir); err == nil && len(entries) > 0 {
			return action.FilterSummary{}, fmt.Errorf("output directory %q must be missing or empty", f.OutputDir)
		}
	}
	sum, err := f.Run(ctx)
	return sum, nameConfig(err, configFile)
}

// nameConfig puts the configuration file's name in front of its errors.
func nameConfig(err error, file string) error {
	var ce *action.FilterConfigError
	if errors.As(err, &ce) {
		ce.File = file
	}
	return err
}
