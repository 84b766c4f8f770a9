//go:build !opm_lean

package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/blang/semver/v4"
	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/alpha/olmv1"
)

// olmFlags are the flags `query updates` and `query install` share for
// OLM v1's answers (alpha/olmv1).
type olmFlags struct {
	olm              string
	versionRange     string
	policy           string
	selector         string
	installedVersion string
	releaseSupport   bool
	watchNamespace   string
	installNamespace string
	pullBundles      bool
	// timeout is each OLM v0 install question's budget (--timeout), terms
	// the size of its problem (--max-terms).
	timeout time.Duration
	terms   int
}

// addTimeoutFlag adds --timeout, each question's budget, and
// --max-terms, the size of its problem.
func addTimeoutFlag(cmd *cobra.Command, d *time.Duration, terms *int) {
	cmd.Flags().DurationVar(d, "timeout", install.DefaultBudget,
		"the time each question may take; past it the answer is undecided (exit 2), never a hang (0: no limit, as in OLM)")
	cmd.Flags().IntVar(terms, "max-terms", install.DefaultMaxTerms,
		"the size each question's problem may reach (the candidates of its bundles' dependencies, about 500 bytes each); past it the answer is undecided (exit 2) (0: no limit, as in OLM)")
}

// maxTerms is --max-terms for install.Resolver.MaxTerms.
func maxTerms(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// undecidedExit exits 2 when n questions of a report were left
// undecided, the report written.
func undecidedExit(n int, budget time.Duration) error {
	if n == 0 {
		return nil
	}
	what := "question was"
	if n > 1 {
		what = "questions were"
	}
	return &ExitError{Code: 2, Err: fmt.Errorf("%d %s left undecided within %v (--timeout)", n, what, budget)}
}

func addOLMFlags(cmd *cobra.Command, o *olmFlags) {
	f := cmd.Flags()
	f.StringVar(&o.olm, "olm", "v0", "whose answer: v0 (OLM v0's resolver), v1 (OLM v1's operator-controller) or both, side by side")
	f.StringVar(&o.versionRange, "version-range", "", "OLM v1: the ClusterExtension's version range (spec.source.catalog.version), e.g. \">=1.0.0 <2.0.0\"")
	f.StringVar(&o.policy, "upgrade-constraint-policy", olmv1.CatalogProvided, "OLM v1: CatalogProvided (follow the catalog's upgrade edges) or SelfCertified (any version in range)")
	f.StringVar(&o.selector, "selector", "", "OLM v1: the ClusterExtension's catalog selector, as a label selector (a catalog's label "+olmv1.NameLabel+" is its name)")
	f.BoolVar(&o.releaseSupport, "bundle-release-support", false, "OLM v1: as with operator-controller's BundleReleaseSupport feature gate (the olm.package release field counts)")
	f.StringVar(&o.watchNamespace, "watch-namespace", "", "OLM v1: the ClusterExtension's watchNamespace (assumes the SingleOwnNamespaceInstallSupport feature gate)")
	f.StringVar(&o.installNamespace, "install-namespace", "", "OLM v1: the ClusterExtension's namespace (read by the watchNamespace checks)")
	f.BoolVar(&o.pullBundles, "pull-bundles", false, "OLM v1: pull the bundle images whose objects the catalog does not carry, to check them")
}

func (o *olmFlags) check() error {
	switch o.olm {
	case "v0", "v1", "both":
	default:
		return fmt.Errorf("invalid --olm value %q, expected (v0|v1|both)", o.olm)
	}
	if o.olm == "v0" {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--version-range", o.versionRange != ""}, {"--upgrade-constraint-policy", o.policy != olmv1.CatalogProvided},
			{"--selector", o.selector != ""}, {"--bundle-release-support", o.releaseSupport}, {"--watch-namespace", o.watchNamespace != ""},
			{"--install-namespace", o.installNamespace != ""}, {"--pull-bundles", o.pullBundles}, {"--installed-version", o.installedVersion != ""}} {
			if f.set {
				return fmt.Errorf("%s is an OLM v1 question: add --olm v1 or --olm both", f.name)
			}
		}
	}
	if o.policy != olmv1.CatalogProvided && o.policy != olmv1.SelfCertified {
		return fmt.Errorf("invalid --upgrade-constraint-policy %q, expected (%s|%s)", o.policy, olmv1.CatalogProvided, olmv1.SelfCertified)
	}
	return nil
}

func (o *olmFlags) options() olmv1.Options {
	return olmv1.Options{BundleReleaseSupport: o.releaseSupport, Install: olmv1.Config{
		InstallNamespace: o.installNamespace, WatchNamespace: o.watchNamespace, SingleOwnNamespace: o.watchNamespace != "",
	}}
}

func (o *olmFlags) spec(pkg string, channels []string) olmv1.Spec {
	return olmv1.Spec{Package: pkg, Channels: channels, Version: o.versionRange, UpgradeConstraintPolicy: o.policy, Selector: o.selector}
}

// query is the question to OLM v1 (and with --olm both, to OLM v0 too)
// about the catalogs cats.
func (o *olmFlags) query(g *globalOptions, cacheDir string, cats []action.InstallCatalog) *action.QueryOLM {
	q := &action.QueryOLM{Catalogs: cats, MaxFileSize: g.maxFileSize.limit(), Options: o.options(), Both: o.olm == "both", Budget: o.timeout, MaxTerms: maxTerms(o.terms), RefuseUnknown: true,
		Sources: &action.Resolver{ImageOptions: g.imageOptions(cacheDir), MaxFileSize: g.maxFileSize.limit(),
			Allowed: action.RefCatalogDir | action.RefCatalogImage}}
	if o.pullBundles {
		q.BundleImages = &action.Resolver{ImageOptions: g.imageOptions(cacheDir), Allowed: action.RefBundleImage}
	}
	return q
}

// runUpdatesOLM answers `query updates` with --olm v1 or both.
func runUpdatesOLM(cmd *cobra.Command, s Streams, g *globalOptions, cacheDir string, args, catalogs []string, o *olmFlags, pkg string, channels []string, from string, all bool, output string) error {
	if all {
		return &usageReport{errors.New("--all is an OLM v0 question (every bundle of a channel); with --olm v1 ask --from one bundle, or use `query install --olm v1 --all`")}
	}
	if o.olm == "both" && len(channels) > 1 {
		return &usageReport{errors.New("OLM v0 follows one channel: give at most one --channel with --olm both")}
	}
	if o.olm == "both" && from == "" {
		return &usageReport{errors.New("--olm both compares updates: give --from")}
	}
	if o.installedVersion != "" && from == "" {
		return &usageReport{errors.New("--installed-version is the installed bundle's version: give --from")}
	}
	if o.installedVersion != "" {
		if _, err := semver.ParseTolerant(o.installedVersion); err != nil {
			return &usageReport{fmt.Errorf("--installed-version %q is not a version: %w", o.installedVersion, err)}
		}
	}
	cats := []action.InstallCatalog{{Ref: args[0]}}
	for _, c := range catalogs {
		ic, err := action.ParseInstallCatalog(c)
		if err != nil {
			return &usageReport{err}
		}
		cats = append(cats, ic)
	}
	u, err := o.query(g, cacheDir, cats).Updates(cmd.Context(), o.spec(pkg, channels), from, o.installedVersion)
	if vc := (*olmv1.VersionConflictError)(nil); errors.As(err, &vc) {
		return fmt.Errorf("--installed-version %s disagrees with the catalog: bundle %q has version %s in catalog %q; give --installed-version only for a bundle no catalog holds",
			vc.Given, vc.Bundle, vc.Version, vc.Catalog)
	}
	if err != nil {
		return err
	}
	if o.olm == "v1" {
		if output == "json" {
			err = encodeAnswer(s.Out, u.OnlyV1())
		} else if err = u.V1.WriteText(s.Out); err == nil {
			err = writeV1Path(s.Out, u.V1Path, u.V1End)
		}
		if err != nil {
			return err
		}
		return v1Resolves(u.V1)
	}
	if output == "json" {
		if err := encodeAnswer(s.Out, u); err != nil {
			return err
		}
		return neitherAnswers(u)
	}
	fmt.Fprintf(s.Out, "== OLM v0 (catalog %s)\n", u.Catalog)
	if u.V0Error != "" {
		fmt.Fprintf(s.Out, "Error: %s\n", u.V0Error)
	} else if err := u.V0.WriteText(s.Out); err != nil {
		return err
	}
	fmt.Fprintln(s.Out, "\n== OLM v1")
	if err := u.V1.WriteText(s.Out); err != nil {
		return err
	}
	if err := writeV1Path(s.Out, u.V1Path, u.V1End); err != nil {
		return err
	}
	if err := writeDifferences(s.Out, u.Differences, u.Neither(), "answers"); err != nil {
		return err
	}
	return neitherAnswers(u)
}

// v1Resolves exits 1 with operator-controller's error when the
// ClusterExtension does not resolve (a package or channel not found,
// nothing matching, a tie between catalogs, a bundle with dependencies),
// as OLM v0 alone exits 1 on a question it cannot answer; the answer,
// which says so too, is written first.
func v1Resolves(a *olmv1.Answer) error {
	if a == nil || a.Resolved {
		return nil
	}
	return &ExitError{Code: 1, Err: errors.New(a.Error)}
}

// neitherAnswers exits 1 when neither OLM answers (OLM v0 alone exits 1
// on a question it cannot answer: a package or channel not found).
func neitherAnswers(u *action.OLMUpdates) error {
	if u.Neither() {
		return &ExitError{Code: 1}
	}
	return nil
}

func writeV1Path(w io.Writer, path []olmv1.Step, endErr string) error {
	if len(path) == 0 {
		return nil
	}
	fmt.Fprintln(w, "path (OLM v1 resolves again after each install):")
	for _, st := range path {
		fmt.Fprintf(w, "  %s -> %s (%s)  %s\n", st.From, st.To, st.Version, strings.Join(st.By, "; "))
	}
	if endErr != "" {
		fmt.Fprintf(w, "  then: %s\n", endErr)
	}
	return nil
}

// writeDifferences lists where the two answers differ; where neither OLM
// has an answer, it says so rather than that they agree.
func writeDifferences(w io.Writer, diffs []string, neither bool, what string) error {
	if len(diffs) == 0 && neither {
		_, err := fmt.Fprintf(w, "\n== Neither OLM v0 nor OLM v1 %s\n", what)
		return err
	}
	if len(diffs) == 0 {
		_, err := fmt.Fprintln(w, "\n== OLM v0 and v1 agree")
		return err
	}
	fmt.Fprintln(w, "\n== Where OLM v0 and v1 differ")
	for _, d := range diffs {
		if _, err := fmt.Fprintf(w, "  - %s\n", d); err != nil {
			return err
		}
	}
	return nil
}

// runInstallOLM answers `query install` with --olm v1 or both.
func runInstallOLM(cmd *cobra.Command, s Streams, g *globalOptions, cacheDir string, cats []action.InstallCatalog, o *olmFlags, sub install.Subscription, channels []string, all bool, output string) error {
	if o.olm == "both" && len(channels) > 1 {
		return &usageReport{errors.New("an OLM v0 Subscription has one channel: give at most one --channel with --olm both")}
	}
	q := o.query(g, cacheDir, cats)
	if all {
		rep, err := q.InstallAll(cmd.Context(), sub.Catalog)
		if err != nil {
			return &ExitError{Code: 2, Err: err}
		}
		switch {
		case o.olm == "both" && output == "json":
			return encodeAnswer(s.Out, rep)
		case o.olm == "both":
			return writeAllBoth(s.Out, rep)
		case output == "json":
			return encodeAnswer(s.Out, rep.V1)
		}
		return rep.V1.WriteTable(s.Out)
	}
	a, err := q.Install(cmd.Context(), o.spec(sub.Package, channels), sub.Catalog)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	if o.olm == "v1" {
		if output == "json" {
			err = encodeAnswer(s.Out, a.V1)
		} else {
			err = a.V1.WriteText(s.Out)
		}
		if err != nil {
			return err
		}
		if !a.V1Installs() {
			return &ExitError{Code: 1}
		}
		return nil
	}
	if output == "json" {
		err = encodeAnswer(s.Out, a)
	} else {
		fmt.Fprintln(s.Out, "== OLM v0")
		if err := a.V0.WriteText(s.Out); err != nil {
			return err
		}
		fmt.Fprintln(s.Out, "\n== OLM v1")
		if err := a.V1.WriteText(s.Out); err != nil {
			return err
		}
		err = writeDifferences(s.Out, a.Differences, a.Neither(), "installs anything")
	}
	if err != nil {
		return err
	}
	// As for one OLM: 0 only when both install it; 2 when OLM v0's
	// question is undecided.
	if a.V0 != nil && a.V0.Status == install.Undecided {
		return &ExitError{Code: 2}
	}
	if a.V0 == nil || a.V0.Status != install.Installable || !a.V1Installs() {
		return &ExitError{Code: 1}
	}
	return nil
}

// writeAllBoth writes `query install --olm both --all` as a table.
func writeAllBoth(w io.Writer, rep *action.OLMInstallAll) error {
	var b strings.Builder
	b.WriteString("PACKAGE\tCHANNEL\tOLM V0\tOLM V1\tDIFFER\tOLM V1: WHY NOT\n")
	for _, r := range rep.Rows {
		v0 := r.V0Status
		if r.V0Bundle != "" {
			v0 = r.V0Bundle
		}
		v1 := r.V1Status
		if r.V1Bundle != "" && r.V1Status != olmv1.StatusNoResolution {
			v1 = r.V1Bundle + " (" + r.V1Status + ")"
		}
		d := ""
		if r.Differ {
			d = "yes"
		}
		var why []string
		switch {
		case r.V1Status == string(olmv1.Unknown) && len(r.V1Reasons) == 0:
			why = []string{olmv1.WhyUnknown(r.V1Checked, r.V1Notes)}
		case r.V1Status != string(olmv1.Installable):
			why = r.V1Reasons
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Package, r.Channel, v0, v1, d, strings.Join(why[:min(1, len(why))], ""))
		// Every further reason on a line of its own, under the first.
		for _, more := range why[min(1, len(why)):] {
			fmt.Fprintf(&b, "\t\t\t\t\t%s\n", more)
		}
	}
	if err := writeTabbed(w, b.String()); err != nil {
		return err
	}
	channels := "channels"
	if len(rep.Rows) == 1 {
		channels = "channel"
	}
	_, err := fmt.Fprintf(w, "\n%d %s: OLM v0 and v1 differ on %d\n", len(rep.Rows), channels, rep.Differ())
	return err
}

func writeTabbed(w io.Writer, text string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if _, err := io.WriteString(tw, text); err != nil {
		return err
	}
	return tw.Flush()
}
