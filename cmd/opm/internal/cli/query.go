//go:build !opm_lean

package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/alpha/updates"
)

// newQueryCmd is `opm alpha query`: questions about a catalog that
// upstream opm does not answer. Each question is a subcommand; their
// errors print as "Error: ...".
func newQueryCmd(s Streams, g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   queryCommand.use,
		Short: queryCommand.short,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newQueryUpdatesCmd(s, g))
	cmd.AddCommand(newQueryInstallCmd(s, g))
	cmd.AddCommand(newQueryClusterCmd(s, g))
	return questionCommand(cmd)
}

func newQueryUpdatesCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		q        action.QueryUpdates
		all      bool
		output   string
		cacheDir string
		olm      olmFlags
		channels []string
		catalogs []string
	)
	cmd := &cobra.Command{
		Use:   "updates INDEX --package PACKAGE (--from BUNDLE|VERSION | --all)",
		Short: "Show where OLM moves an installed bundle, and its path to the channel head",
		Long: `Show the bundle OLM v0 updates an installed bundle to next, and the whole
path from there to the channel head, each step with the channel edge that
allows it (replaces, skips or skipRange).

INDEX is a catalog directory or a catalog image. The channel is the
package's default channel unless --channel names one. --from names the
installed bundle by name or by version; a bundle the catalog does not hold
(a "virtual" node) is answered too, its version read from its name
(name.vX.Y.Z) so that skipRange edges can cover it. --all answers for every
bundle of the channel, so that the ones that cannot reach the head stand
out: its next update, the number of steps to the end of its path, and
whether that is the head (with -o json, each bundle's next step and step
count; its path is its next step followed by the next bundle's path).

The rules are OLM v0's resolver's (operator-lifecycle-manager v0.46.0):
the channel's entries are ordered along the replaces chain from the head,
leaving out entries another entry skips (those are never installed); the
update is the first entry in that order whose skipRange includes the
installed version or whose replaces or skips name the installed bundle,
passing over entries with the olm.deprecated property (OLM never installs
them). So the head wins when its skipRange covers the installed version,
and an installed bundle whose own entry comes first stays where it is. A
channel without a single replaces chain has no answer: OLM refuses to
resolve in it, and so does this command, naming the heads.

Each step's CRDs are compared (the old bundle's with the new one's, as the
catalog's olm.bundle.object properties carry them): the changes OLM v1's
CRD upgrade-safety preflight refuses, and those OLM v0 refuses (a stored
version removed; a schema that existing custom resources may no longer
satisfy), are listed under "crds:" (with --all, those of each bundle's
next step, below the table); -o json gives them for every step.

--olm v1 answers with OLM v1's rules instead (operator-controller v1.11.0):
the bundle a ClusterExtension resolves to from the installed bundle, among
the bundles of every channel (or of each --channel given) and of every
catalog (INDEX and each --catalog), in --version-range, that replace, skip
or skipRange-cover the installed bundle (or any, with
--upgrade-constraint-policy SelfCertified): the highest version, preferring
bundles olm.deprecations does not deprecate; and whether OLM v1 can
install it. --olm both shows OLM v0's and v1's answers side by side and
where they differ.

Exit codes (docs/exit-codes.md): 0 whenever the question was answered, a
bundle that cannot reach the head included (use "opm alpha diff --check"
to fail a CI job on those); 1 when the answer is no: OLM v0 resolves no
update in the channel (several heads, or none it installs); with --olm v1,
the ClusterExtension does not resolve (operator-controller's error after
the answer); with --olm both, neither OLM answers; 2 when the question,
a flag or the input is wrong (a package or channel no catalog holds, a
catalog that cannot be read), or the answer cannot be written (a full
disk) or was undecided within --timeout.`,
		Example: `  opm alpha query updates ./catalog --package etcd --from etcdoperator.v0.9.0
  opm alpha query updates quay.io/example/catalog:latest --package etcd --channel alpha --from 0.9.2 -o json
  opm alpha query updates ./catalog --package etcd --all
  opm alpha query updates ./catalog --package etcd --from etcdoperator.v0.9.0 --olm both
  opm alpha query updates ./catalog --package etcd --from 0.9.0 --olm v1 --version-range "<0.9.4"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			s, done := answerOut(s, 2)
			defer done(&err)
			if output != "text" && output != "json" {
				return fmt.Errorf("invalid --output value %q, expected (text|json)", output)
			}
			if q.Package == "" {
				return &usageReport{fmt.Errorf("--package is required")}
			}
			if err := olm.check(); err != nil {
				return &usageReport{err}
			}
			if olm.olm != "v0" {
				return runUpdatesOLM(cmd, s, g, cacheDir, args, catalogs, &olm, q.Package, channels, q.From, all, output)
			}
			switch {
			case len(channels) > 1:
				return &usageReport{fmt.Errorf("OLM v0 follows one channel: give several --channel only with --olm v1")}
			case len(catalogs) > 0:
				return &usageReport{fmt.Errorf("--catalog adds OLM v1 catalogs: add --olm v1 or --olm both")}
			case len(channels) == 1:
				q.Channel = channels[0]
			}
			if all == (q.From != "") {
				return &usageReport{fmt.Errorf("give exactly one of --from and --all")}
			}
			res := &action.Resolver{ImageOptions: g.imageOptions(cacheDir), MaxFileSize: g.maxFileSize.limit(),
				Allowed: action.RefCatalogDir | action.RefCatalogImage}
			cat, err := action.OpenModel(cmd.Context(), res, args[0], g.maxFileSize.limit())
			if err != nil {
				return err
			}
			defer cat.Close()
			q.Model = cat.Model
			// The question's budget bounds the comparisons of CRDs.
			ctx, cancel := budget(cmd.Context(), olm.timeout)
			defer cancel()
			ix, err := cat.CRDs(ctx, func(pkg, _ string) bool { return pkg == q.Package })
			if err == nil {
				q.CRDs, err = action.CompareCRDs(ctx, ix)
			}
			if err := undecided(cmd.Context(), ctx, olm.timeout); err != nil {
				return err
			}
			if err != nil {
				return err
			}
			if all {
				as, err := q.RunAll()
				if err := undecided(cmd.Context(), ctx, olm.timeout); err != nil {
					return err
				}
				if err == nil {
					err = cmd.Context().Err() // the comparisons of CRDs were stopped
				}
				if err != nil {
					return noUpdateAnswer(err)
				}
				if output == "json" {
					return encodeAnswer(s.Out, as)
				}
				return action.WriteUpdatesTable(s.Out, as)
			}
			a, err := q.Run()
			if err := undecided(cmd.Context(), ctx, olm.timeout); err != nil {
				return err
			}
			if err == nil {
				err = cmd.Context().Err() // the comparisons of CRDs were stopped
			}
			if err != nil {
				return noUpdateAnswer(err)
			}
			if output == "json" {
				return encodeAnswer(s.Out, a)
			}
			return a.WriteText(s.Out)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&q.Package, "package", "p", "", "the package")
	f.StringArrayVarP(&channels, "channel", "c", nil, "the channel (default: the package's default channel; with --olm v1, every channel); repeatable with --olm v1")
	f.StringVar(&q.From, "from", "", "the installed bundle: a bundle name or a version")
	f.BoolVar(&all, "all", false, "answer for every bundle of the channel")
	f.StringVarP(&output, "output", "o", "text", "Output format (text|json)")
	f.StringArrayVar(&catalogs, "catalog", nil, "OLM v1: another catalog as NAME=REF[,priority=N] (repeatable)")
	f.StringVar(&olm.installedVersion, "installed-version", "", "OLM v1: the installed bundle's version, when --from names a bundle the catalogs do not hold (for one they hold, only its catalog version is accepted)")
	addOLMFlags(cmd, &olm)
	cmd.Flags().DurationVar(&olm.timeout, "timeout", install.DefaultBudget,
		"the time the question may take (its CRD comparisons); past it the answer is undecided (exit 2), never a hang (0: no limit)")
	addImageCacheFlag(cmd, &cacheDir)
	return cmd
}

// noUpdateAnswer is err, exit 1 when it is OLM v0's answer that it
// resolves no update in the channel (several heads, or none OLM
// installs): the answer is no. Any other error is a wrong question (a
// package, channel or version not found: exit 2).
func noUpdateAnswer(err error) error {
	var ce *updates.ChainError
	var ne *updates.NoInstallableError
	if errors.As(err, &ce) || errors.As(err, &ne) {
		return &ExitError{Code: 1, Err: err}
	}
	return err
}

// errBudget ends a question's context when its budget (--timeout) is
// spent.
var errBudget = errors.New("the question's budget is spent")

// budget returns ctx bounded by d (none when d is 0).
func budget(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, errBudget)
}

// undecided is the error of a question stopped by its budget: exit 2,
// saying so. It is nil when the question's context (qctx, made by budget
// from ctx) did not end for its budget.
func undecided(ctx, qctx context.Context, d time.Duration) error {
	if ctx.Err() == nil && errors.Is(context.Cause(qctx), errBudget) {
		return &ExitError{Code: 2, Err: fmt.Errorf("undecided within %v (--timeout): the question's CRD comparisons take longer", d)}
	}
	return nil
}
