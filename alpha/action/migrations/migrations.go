// Package migrations holds the named, ordered schema migrations that
// `opm render --migrate-level` and `opm migrate --migrate-level` apply to
// rendered catalogs, with upstream opm's names, order and help text.
//
// A level names the last migration to run: every migration up to and
// including it runs, in order. "none" runs nothing; "all" runs every
// migration (what the deprecated --migrate flag asks for).
package migrations

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/bundle"
)

// Level names of special meaning.
const (
	// None is the first migration: it changes nothing.
	None = "none"
	// All selects every migration.
	All = "all"
	// BundleObjectToCSVMetadata replaces each bundle's olm.bundle.object
	// properties with one olm.csv.metadata property.
	BundleObjectToCSVMetadata = "bundle-object-to-csv-metadata"
)

// Migration is one step: a name, a line of help and the change it makes.
type Migration struct {
	Name    string
	Help    string
	Migrate func(*declcfg.DeclarativeConfig) error
}

// all lists every migration in the order they run. The order and the
// names are an interface: --migrate-level selects a prefix of this list.
var all = []Migration{
	{Name: None, Help: "do nothing", Migrate: func(*declcfg.DeclarativeConfig) error { return nil }},
	{Name: BundleObjectToCSVMetadata, Help: `migrates bundles' "olm.bundle.object" to "olm.csv.metadata"`, Migrate: bundleObjectToCSVMetadata},
}

// Migrations is the sequence of migrations a level selects.
type Migrations struct {
	steps []Migration
}

// New returns the migrations up to and including level, or all of them
// for "all". An unknown level is an error that names it.
func New(level string) (*Migrations, error) {
	if level == All {
		return &Migrations{steps: append([]Migration(nil), all...)}, nil
	}
	for i, m := range all {
		if m.Name == level {
			return &Migrations{steps: append([]Migration(nil), all[:i+1]...)}, nil
		}
	}
	return nil, fmt.Errorf("unknown migration level %q", level)
}

// Names lists the names of the selected migrations, in order.
func (m *Migrations) Names() []string {
	names := make([]string, len(m.steps))
	for i, s := range m.steps {
		names[i] = s.Name
	}
	return names
}

// Migrate applies the selected migrations to cfg, in order. It stops at
// the first error, which names the migration.
func (m *Migrations) Migrate(cfg *declcfg.DeclarativeConfig) error {
	if m == nil {
		return nil
	}
	for _, s := range m.steps {
		if err := s.Migrate(cfg); err != nil {
			return fmt.Errorf("migration %s: %w", s.Name, err)
		}
	}
	return nil
}

// HelpText is the list of migrations that --migrate-level's help shows,
// formatted as upstream opm formats it.
func HelpText() string {
	var b strings.Builder
	b.WriteString("\nThe migrator will run all migrations up to and including the selected level.\n\n")
	b.WriteString("Available migrators:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	for _, m := range all {
		fmt.Fprintf(tw, "  - %s\t: %s\n", m.Name, m.Help)
	}
	_ = tw.Flush() // writes to a strings.Builder cannot fail
	return b.String()
}

// bundleObjectToCSVMetadata applies bundle.MigrateBundleObjectToCSVMetadata
// to every bundle. Bundles need CsvJSON: bundles rendered from bundle
// directories and images carry it; for catalog sources the caller fills it
// from the olm.bundle.object properties (see action.LoadBundleObjects).
func bundleObjectToCSVMetadata(cfg *declcfg.DeclarativeConfig) error {
	for i := range cfg.Bundles {
		if err := bundle.MigrateBundleObjectToCSVMetadata(&cfg.Bundles[i]); err != nil {
			return err
		}
	}
	return nil
}
