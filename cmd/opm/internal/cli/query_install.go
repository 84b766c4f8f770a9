//go:build !opm_lean

package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/install"
)

func newQueryInstallCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		sub        install.Subscription
		catalogs   []string
		version    string
		all, every bool
		output     string
		cacheDir   string
		catCache   catalogCacheFlags
		olm        olmFlags
		channels   []string
	)
	cmd := &cobra.Command{
		Use:   "install INDEX... --package PACKAGE [--channel CHANNEL] [--version VERSION | --bundle BUNDLE] | --all [--every-bundle]",
		Short: "Show what OLM installs for a new Subscription, or why it cannot",
		Long: `Show the bundles OLM v0 installs for a new Subscription to a package: the
package's bundle (the channel head, or the starting bundle) and, for every
dependency, the bundle that provides it, as a tree of who pulls in what
through which property; or, when nothing can be installed, why, naming the
bundle and the requirement no candidate meets, and OLM's constraints that
cannot hold together.

Each INDEX is a catalog directory or catalog image, one CatalogSource; its
name is the directory's or image repository's last element. --catalog
NAME=REF[,priority=N] gives a catalog a name and a priority (higher is
preferred). The Subscription refers to the first catalog unless --source
names another; dependencies may come from any of them.

The rules are OLM v0's resolver's (operator-lifecycle-manager v0.46.0):
dependencies are olm.gvk.required, olm.package.required,
olm.label.required and olm.constraint properties (gvk, package, cel, all,
any, not), including those of a bundle's metadata/dependencies.yaml as
rendered; a dependency prefers bundles of the dependent's own catalog,
then of catalogs by priority and name; the default channel, then the
others by name; within a channel, the head first, and never a bundle that
another skips; at most one bundle per package and one provider per API.
Without --channel, every channel is a candidate, the default one first, as
for a Subscription without spec.channel.

--all answers for every package and channel of the catalog (--every-bundle
also for every bundle, as a starting bundle) in a table, or JSON.

Exit codes (docs/exit-codes.md): 0 when the Subscription is installable
(and always with --all), 1 when it is not, 2 when a catalog cannot be read
or is invalid, or the question or the command line is wrong (a package,
channel or bundle no catalog holds: the error names the nearest), or the
answer cannot be written.

--olm v1 answers with OLM v1's rules instead (operator-controller v1.11.0):
the one bundle a new ClusterExtension for the package resolves to (the
highest version of the channels given, or of every channel, in
--version-range, preferring bundles olm.deprecations does not deprecate,
across catalogs by priority), and whether OLM v1 can install it at all:
no dependencies, the AllNamespaces install mode (or --watch-namespace),
no API services, and the registry+v1 validators, in operator-controller's
words. --all answers for every package and channel of the catalog;
--olm both sets OLM v0's answers beside v1's.`,
		Example: `  opm alpha query install ./catalog --package etcd
  opm alpha query install ./community --catalog certified=quay.io/example/certified:v4.16,priority=10 --package foo --channel stable -o json
  opm alpha query install ./catalog --all
  opm alpha query install ./catalog ./other-catalog --all --every-bundle -o json
  opm alpha query install ./catalog --package etcd --olm v1
  opm alpha query install ./catalog --all --olm both`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			s, done := answerOut(s, 2)
			defer done(&err)
			if output != "text" && output != "json" {
				return &ExitError{Code: 2, Err: fmt.Errorf("invalid --output value %q, expected (text|json)", output)}
			}
			if err := olm.check(); err != nil {
				return &usageReport{err}
			}
			if len(channels) > 1 && olm.olm == "v0" {
				return &usageReport{errors.New("a Subscription has one channel: give several --channel only with --olm v1")}
			}
			if len(channels) == 1 {
				sub.Channel = channels[0]
			}
			switch {
			case olm.olm != "v0" && (every || version != "" || sub.StartingCSV != ""):
				return &usageReport{errors.New("--every-bundle, --version and --bundle are OLM v0 questions (a starting bundle); OLM v1 takes --version-range")}
			case every && !all:
				return &usageReport{errors.New("--every-bundle needs --all")}
			case all && (sub.Package != "" || sub.Channel != "" || sub.StartingCSV != "" || version != ""):
				return &usageReport{errors.New("--all asks about every package: give no --package, --channel, --version or --bundle")}
			case !all && sub.Package == "":
				return &usageReport{errors.New("--package is required (or --all)")}
			case version != "" && sub.StartingCSV != "":
				return &usageReport{errors.New("give at most one of --version and --bundle")}
			case len(args)+len(catalogs) == 0:
				return &usageReport{errors.New("give at least one catalog: INDEX or --catalog NAME=REF")}
			}
			var cats []action.InstallCatalog
			for _, ref := range args {
				cats = append(cats, action.InstallCatalog{Ref: ref})
			}
			for _, c := range catalogs {
				ic, err := action.ParseInstallCatalog(c)
				if err != nil {
					return &usageReport{err}
				}
				cats = append(cats, ic)
			}
			if olm.olm != "v0" {
				// OLM v1 reads more of each catalog than a snapshot holds
				// (bundle objects): the cache serves OLM v0 only. Set
				// from the environment, it is left unused; asked for
				// as none (empty, or with --no-catalog-cache), it is no
				// cache.
				if cmd.Flags().Changed("catalog-cache-dir") && catCache.dir != "" && !catCache.off {
					return &usageReport{errors.New("--catalog-cache-dir serves OLM v0's questions only: not with --olm " + olm.olm)}
				}
				return runInstallOLM(cmd, s, g, cacheDir, cats, &olm, sub, channels, all, output)
			}
			action.NameInstallCatalogs(cats)
			res := &action.Resolver{ImageOptions: g.imageOptions(cacheDir), MaxFileSize: g.maxFileSize.limit(),
				Allowed: action.RefCatalogDir | action.RefCatalogImage}
			cc, err := catCache.open(cmd)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			loaded, err := action.LoadInstallCatalogs(cmd.Context(), res, cats, g.maxFileSize.limit(), cc)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			r, err := install.NewResolver(loaded...)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			r.Budget, r.MaxTerms = olm.timeout, maxTerms(olm.terms)
			if sub.Catalog != "" && r.Catalog(sub.Catalog) == nil {
				return &ExitError{Code: 2, Err: fmt.Errorf("--source %q names none of the catalogs", sub.Catalog)}
			}
			if all {
				rep, err := r.All(cmd.Context(), sub.Catalog, every)
				if err != nil {
					return &ExitError{Code: 2, Err: err}
				}
				if output == "json" {
					err = encodeAnswer(s.Out, rep)
				} else {
					err = rep.WriteTable(s.Out)
				}
				if err != nil {
					return err
				}
				return undecidedExit(rep.Counts()[install.Undecided], olm.timeout)
			}
			// A package, channel or starting bundle the catalog does not
			// hold is a wrong question (a misspelt name), not OLM's "not
			// installable": exit 2, as for a wrong --version.
			if err := r.Unknown(sub); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			if version != "" {
				if sub.StartingCSV, err = r.BundleOfVersion(sub, version); err != nil {
					return &ExitError{Code: 2, Err: err}
				}
			}
			a, err := r.Resolve(cmd.Context(), sub)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			if output == "json" {
				err = encodeAnswer(s.Out, a)
			} else {
				err = a.WriteText(s.Out)
			}
			if err != nil {
				return err
			}
			switch a.Status {
			case install.Installable:
				return nil
			case install.Undecided:
				return &ExitError{Code: 2}
			}
			return &ExitError{Code: 1}
		},
	}
	f := cmd.Flags()
	f.StringVarP(&sub.Package, "package", "p", "", "the package the Subscription names")
	f.StringArrayVarP(&channels, "channel", "c", nil, "the Subscription's channel (default: none, every channel, the default one first); repeatable with --olm v1")
	f.StringVar(&version, "version", "", "the starting bundle, by version")
	f.StringVar(&sub.StartingCSV, "bundle", "", "the starting bundle (spec.startingCSV), by name")
	f.StringVar(&sub.Catalog, "source", "", "the catalog the Subscription names (default: the first)")
	f.StringArrayVar(&catalogs, "catalog", nil, "a catalog as NAME=REF[,priority=N] (repeatable)")
	f.BoolVar(&all, "all", false, "answer for every package and channel of the catalog")
	f.BoolVar(&every, "every-bundle", false, "with --all, answer for every bundle of each channel too")
	f.StringVarP(&output, "output", "o", "text", "Output format (text|json)")
	addOLMFlags(cmd, &olm)
	addTimeoutFlag(cmd, &olm.timeout, &olm.terms)
	addImageCacheFlag(cmd, &cacheDir)
	addCatalogCacheFlag(cmd, &catCache)
	return cmd
}
