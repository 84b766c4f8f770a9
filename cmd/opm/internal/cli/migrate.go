package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/action/migrations"
	"github.com/fastopm/fastopm/alpha/declcfg"
)

func newMigrateCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		output       string
		migrateLevel string
		cacheDir     string
	)
	cmd := &cobra.Command{
		Use:   "migrate <catalogRef> <outputDir>",
		Short: "Migrate a file-based catalog to a new file-based catalog applying optional migrations",
		Long: `Migrate a file-based catalog image or directory to a new file-based catalog,
optionally applying migrations.

The input catalogRef may be a container image reference or a local directory
containing a file-based catalog. The output directory must be missing or
empty; it receives one directory per package holding catalog.json (or
catalog.yaml), and nothing at all if the migration fails.

NOTE: the --output=json format produces streamable, concatenated JSON files.
These are suitable to opm and jq, but may not be supported by arbitrary JSON
parsers that assume that a file contains exactly one valid JSON object.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			m := action.Migrate{CatalogRef: args[0], OutputDir: args[1]}
			switch output {
			case "json", "yaml":
				m.Format = declcfg.Format(output)
			default:
				return &stdLogError{fmt.Errorf("invalid --output value %q, expected (json|yaml)", output)}
			}
			if migrateLevel != "" {
				mig, err := migrations.New(migrateLevel)
				if err != nil {
					return &stdLogError{err}
				}
				m.Migrations = mig
			}
			m.Sources = &action.Resolver{ImageOptions: g.imageOptions(cacheDir), MaxFileSize: g.maxFileSize.limit()}
			// Upstream's log lines, word for word (the second with its newline).
			logLine(s.Err, "info", fmt.Sprintf("rendering index %q as file-based catalog", m.CatalogRef))
			if err := m.Run(cmd.Context()); err != nil {
				return err
			}
			logLine(s.Err, "info", fmt.Sprintf("wrote rendered file-based catalog to %q\n", m.OutputDir))
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "json", "Output format (json|yaml)")
	cmd.Flags().StringVar(&migrateLevel, "migrate-level", "", "Name of the last migration to run (default: none)\n"+migrations.HelpText())
	addImageCacheFlag(cmd, &cacheDir)
	return cmd
}
