package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/alpha/olmv1"
	"github.com/fastopm/fastopm/alpha/updates"
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

// loadOLMCatalogs loads the catalogs once for both OLMs and makes OLM
// v1's resolver; with --pull-bundles, check pulls bundle images.
func loadOLMCatalogs(ctx context.Context, g *globalOptions, cacheDir string, cats []action.InstallCatalog, o *olmFlags) (*action.Catalogs, *olmv1.Resolver, func(*olmv1.Bundle) *olmv1.Installability, error) {
	action.NameInstallCatalogs(cats)
	res := &action.Resolver{ImageOptions: g.imageOptions(cacheDir), MaxFileSize: g.maxFileSize.limit(),
		Allowed: action.RefCatalogDir | action.RefCatalogImage}
	loaded, err := action.LoadCatalogs(ctx, res, cats, g.maxFileSize.limit())
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := olmv1.NewResolver(o.options(), loaded.V1...)
	if err != nil {
		loaded.Close() //nolint:errcheck // the resolver's error is the one to report
		return nil, nil, nil, err
	}
	var check func(*olmv1.Bundle) *olmv1.Installability
	if o.pullBundles {
		bc := &action.BundleImageChecker{Config: o.options().Install, Sources: &action.Resolver{
			ImageOptions: g.imageOptions(cacheDir), Allowed: action.RefBundleImage}}
		check = func(b *olmv1.Bundle) *olmv1.Installability { return bc.Check(ctx, b) }
	}
	return loaded, r, check, nil
}

// recheck replaces the answer's installability from the bundle image
// when the catalog carries no objects and --pull-bundles asks.
func recheck(a *olmv1.Answer, check func(*olmv1.Bundle) *olmv1.Installability) {
	if check != nil && a.Bundle != nil && a.Installable != nil && !a.Bundle.Bundle().HasObjects() {
		a.Installable = check(a.Bundle.Bundle())
	}
}

func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	return enc
}

// updatesBoth is `query updates --olm both` as JSON.
type updatesBoth struct {
	V0          *updates.Answer `json:"v0"`
	V0Error     string          `json:"v0Error,omitempty"`
	V1          *olmv1.Answer   `json:"v1"`
	V1Path      []olmv1.Step    `json:"v1Path"`
	V1End       string          `json:"v1End,omitempty"`
	Differences []string        `json:"differences"`
}

// updatesV1 is `query updates --olm v1` as JSON.
type updatesV1 struct {
	*olmv1.Answer
	Path []olmv1.Step `json:"path"`
	End  string       `json:"end,omitempty"`
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
	cats := []action.InstallCatalog{{Ref: args[0]}}
	for _, c := range catalogs {
		ic, err := action.ParseInstallCatalog(c)
		if err != nil {
			return &usageReport{err}
		}
		cats = append(cats, ic)
	}
	loaded, r, check, err := loadOLMCatalogs(cmd.Context(), g, cacheDir, cats, o)
	if err != nil {
		return err
	}
	defer loaded.Close() //nolint:errcheck // removal of an image's unpacked tree, after the last answer
	spec := o.spec(pkg, channels)
	var installed *olmv1.Installed
	if from != "" {
		if installed, err = r.FindInstalled(pkg, from, o.installedVersion); err != nil {
			return err
		}
	}
	a, err := r.Resolve(spec, installed)
	if err != nil {
		return err
	}
	recheck(a, check)
	var path []olmv1.Step
	var end *olmv1.Answer
	if installed != nil {
		if path, end, err = r.Path(spec, *installed); err != nil {
			return err
		}
	}
	endErr := ""
	if end != nil && len(path) > 0 {
		endErr = end.Error
	}
	enc := jsonEncoder(s.Out)
	if o.olm == "v1" {
		if output == "json" {
			return enc.Encode(updatesV1{Answer: a, Path: path, End: endErr})
		}
		if err := a.WriteText(s.Out); err != nil {
			return err
		}
		return writeV1Path(s.Out, path, endErr)
	}

	// Both: OLM v0 on the first catalog, with its channel.
	q := action.QueryUpdates{Model: loaded.Models[0], Package: pkg, From: from}
	if len(channels) == 1 {
		q.Channel = channels[0]
	}
	v0, v0err := q.Run()
	both := updatesBoth{V0: v0, V1: a, V1Path: path, V1End: endErr}
	if v0err != nil {
		both.V0Error = v0err.Error()
	}
	nch := 0
	if mp := loaded.Models[0][pkg]; mp != nil {
		nch = len(mp.Channels)
	}
	both.Differences = updatesDifferences(both, channels, nch, r)
	if output == "json" {
		return enc.Encode(both)
	}
	fmt.Fprintf(s.Out, "== OLM v0 (catalog %s)\n", cats[0].Name)
	if v0err != nil {
		fmt.Fprintf(s.Out, "Error: %v\n", v0err)
	} else if err := v0.WriteText(s.Out); err != nil {
		return err
	}
	fmt.Fprintln(s.Out, "\n== OLM v1")
	if err := a.WriteText(s.Out); err != nil {
		return err
	}
	if err := writeV1Path(s.Out, path, endErr); err != nil {
		return err
	}
	return writeDifferences(s.Out, both.Differences)
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

func writeDifferences(w io.Writer, diffs []string) error {
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

// updatesDifferences says where the two answers differ: the next bundle,
// where the updates end, and the channels each follows.
func updatesDifferences(b updatesBoth, channels []string, nch int, r *olmv1.Resolver) []string {
	var out []string
	if len(channels) == 0 && b.V0 != nil && nch > 1 {
		out = append(out, fmt.Sprintf("channels: OLM v0 follows the default channel %s; a ClusterExtension without channels takes bundles from every channel", b.V0.Channel))
	}
	v0next, v0end := "", ""
	if b.V0 != nil {
		v0end = b.V0.Installed.Name
		if b.V0.Next != nil {
			v0next = b.V0.Next.To.Name
		}
		if n := len(b.V0.Path); n > 0 {
			v0end = b.V0.Path[n-1].To.Name
		}
	}
	v1next, v1end := "", ""
	if b.V1 != nil && b.V1.Resolved {
		v1next = b.V1.Bundle.Name
		if b.V1.Installed != nil && v1next == b.V1.Installed.Name {
			v1next = ""
		}
		v1end = b.V1.Bundle.Name
		if n := len(b.V1Path); n > 0 {
			v1end = b.V1Path[n-1].To
		}
	}
	name := func(s string) string {
		if s == "" {
			return "no update"
		}
		return s
	}
	switch {
	case b.V0Error != "" && b.V1 != nil && b.V1.Resolved:
		out = append(out, fmt.Sprintf("OLM v0 has no answer (%s); OLM v1 moves to %s", b.V0Error, name(v1next)))
	case b.V1 != nil && !b.V1.Resolved && b.V0Error == "":
		out = append(out, fmt.Sprintf("OLM v1 does not resolve (%s); OLM v0 moves to %s", b.V1.Error, name(v0next)))
	case b.V0Error == "" && v0next != v1next:
		out = append(out, fmt.Sprintf("next: OLM v0 moves to %s, OLM v1 to %s", name(v0next), name(v1next)))
	}
	if b.V0Error == "" && b.V1 != nil && b.V1.Resolved && v0end != v1end {
		out = append(out, fmt.Sprintf("in the end: OLM v0 reaches %s, OLM v1 %s", v0end, v1end))
	}
	if len(out) > 0 && b.V1 != nil {
		out = append(out, deprecationNotes(r, b.V1.Spec.Package, v0next, v0end, v1next, v1end)...)
	}
	return out
}

// deprecationNotes explains the two kinds of deprecation that OLM v0 and
// v1 read differently, for the bundles either answer names.
func deprecationNotes(r *olmv1.Resolver, pkg string, names ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		for _, c := range r.Catalogs() {
			b := c.Bundle(pkg, n)
			if b == nil {
				continue
			}
			if b.LegacyDeprecated {
				out = append(out, fmt.Sprintf("%s has the olm.deprecated property: OLM v0 never installs it; OLM v1 ignores the property", n))
			}
			if b.Deprecated() {
				out = append(out, fmt.Sprintf("%s is deprecated by olm.deprecations: OLM v1 prefers any bundle that is not; OLM v0 only reports it", n))
			}
			break
		}
	}
	return out
}

// installBoth is `query install --olm both` as JSON.
type installBoth struct {
	V0          *install.Answer `json:"v0"`
	V1          *olmv1.Answer   `json:"v1"`
	Differences []string        `json:"differences"`
}

// runInstallOLM answers `query install` with --olm v1 or both.
func runInstallOLM(cmd *cobra.Command, s Streams, g *globalOptions, cacheDir string, cats []action.InstallCatalog, o *olmFlags, sub install.Subscription, channels []string, all bool, output string) error {
	if o.olm == "both" && len(channels) > 1 {
		return &usageReport{errors.New("an OLM v0 Subscription has one channel: give at most one --channel with --olm both")}
	}
	loaded, r, check, err := loadOLMCatalogs(cmd.Context(), g, cacheDir, cats, o)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	defer loaded.Close() //nolint:errcheck // removal of an image's unpacked tree, after the last answer
	enc := jsonEncoder(s.Out)
	if all {
		if sub.Catalog == "" {
			sub.Catalog = cats[0].Name // the first catalog given, as for OLM v0
		}
		rep, err := r.All(sub.Catalog, check)
		if err != nil {
			return &ExitError{Code: 2, Err: err}
		}
		if o.olm == "both" {
			return writeAllBoth(s, enc, loaded, rep, sub.Catalog, output)
		}
		if output == "json" {
			return enc.Encode(rep)
		}
		return rep.WriteTable(s.Out)
	}
	spec := o.spec(sub.Package, channels)
	if sub.Catalog != "" && o.selector == "" {
		// --source names the catalog, as a selector of its name.
		spec.Selector = olmv1.NameLabel + "=" + sub.Catalog
	}
	a, err := r.Resolve(spec, nil)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	recheck(a, check)
	failed := !a.Resolved || a.Installable == nil || a.Installable.Status == olmv1.NotInstallable
	if o.olm == "v1" {
		if output == "json" {
			err = enc.Encode(a)
		} else {
			err = a.WriteText(s.Out)
		}
		if err != nil {
			return err
		}
		if failed {
			return &ExitError{Code: 1}
		}
		return nil
	}
	v0r, err := install.NewResolver(loaded.V0...)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	if len(channels) == 1 {
		sub.Channel = channels[0]
	}
	v0, err := v0r.Resolve(sub)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	both := installBoth{V0: v0, V1: a, Differences: installDifferences(v0, a, r)}
	if output == "json" {
		return enc.Encode(both)
	}
	fmt.Fprintln(s.Out, "== OLM v0")
	if err := v0.WriteText(s.Out); err != nil {
		return err
	}
	fmt.Fprintln(s.Out, "\n== OLM v1")
	if err := a.WriteText(s.Out); err != nil {
		return err
	}
	return writeDifferences(s.Out, both.Differences)
}

// installDifferences says where a new Subscription and a new
// ClusterExtension differ.
func installDifferences(v0 *install.Answer, v1 *olmv1.Answer, r *olmv1.Resolver) []string {
	var out []string
	v0b := ""
	if v0.Status == install.Installable && len(v0.Installs) > 0 {
		v0b = v0.Installs[0].Bundle
	}
	v1b := ""
	if v1.Bundle != nil {
		v1b = v1.Bundle.Name
	}
	v1ok := v1.Resolved && v1.Installable != nil && v1.Installable.Status != olmv1.NotInstallable
	switch {
	case v0b != "" && !v1ok:
		why := v1.Error
		if why == "" && v1.Installable != nil && len(v1.Installable.Reasons) > 0 {
			why = v1.Installable.Reasons[0]
		}
		out = append(out, fmt.Sprintf("OLM v0 installs %s; OLM v1 cannot: %s", v0b, why))
	case v0b == "" && v1ok:
		why := v0.Error
		if why == "" && len(v0.Reasons) > 0 {
			why = v0.Reasons[0]
		}
		out = append(out, fmt.Sprintf("OLM v1 installs %s; OLM v0 cannot: %s", v1b, why))
	case v0b != "" && v0b != v1b:
		out = append(out, fmt.Sprintf("OLM v0 installs %s (the channel head), OLM v1 %s (the highest version it prefers)", v0b, v1b))
	}
	if len(out) > 0 {
		out = append(out, deprecationNotes(r, v1.Spec.Package, v0b, v1b)...)
	}
	if v0b != "" && len(v0.Installs) > 1 {
		out = append(out, fmt.Sprintf("OLM v0 installs %d dependencies too; OLM v1 installs no dependency and refuses a bundle that declares one", len(v0.Installs)-1))
	}
	return out
}

// allBothRow is one channel of `query install --olm both --all`.
type allBothRow struct {
	Package   string   `json:"package"`
	Channel   string   `json:"channel"`
	V0Status  string   `json:"v0Status"`
	V0Bundle  string   `json:"v0Bundle,omitempty"`
	V1Status  string   `json:"v1Status"`
	V1Bundle  string   `json:"v1Bundle,omitempty"`
	V1Reasons []string `json:"v1Reasons,omitempty"`
	Differ    bool     `json:"differ"`
}

func writeAllBoth(s Streams, enc *json.Encoder, loaded *action.Catalogs, rep *olmv1.Report, catalog, output string) error {
	v0r, err := install.NewResolver(loaded.V0...)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	v0rep, err := v0r.All(catalog, false)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	v0of := map[[2]string]*install.Answer{}
	for _, a := range v0rep.Answers {
		v0of[[2]string{a.Subscription.Package, a.Subscription.Channel}] = a
	}
	rows := []allBothRow{}
	differ := 0
	for _, r := range rep.Rows {
		row := allBothRow{Package: r.Package, Channel: r.Channel, V1Status: r.Status, V1Bundle: r.Bundle, V1Reasons: r.Reasons}
		if a := v0of[[2]string{r.Package, r.Channel}]; a != nil {
			row.V0Status = string(a.Status)
			if a.Status == install.Installable && len(a.Installs) > 0 {
				row.V0Bundle = a.Installs[0].Bundle
			}
		}
		v1ok := r.Status != olmv1.StatusNoResolution && r.Status != string(olmv1.NotInstallable)
		v0ok := row.V0Status == string(install.Installable)
		row.Differ = v0ok != v1ok || (v0ok && v1ok && row.V0Bundle != row.V1Bundle)
		if row.Differ {
			differ++
		}
		rows = append(rows, row)
	}
	if output == "json" {
		return enc.Encode(struct {
			Catalog string       `json:"catalog"`
			Rows    []allBothRow `json:"rows"`
		}{rep.Catalog, rows})
	}
	var b strings.Builder
	b.WriteString("PACKAGE\tCHANNEL\tOLM V0\tOLM V1\tDIFFER\tOLM V1: WHY NOT\n")
	for _, r := range rows {
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
		if r.V1Status != string(olmv1.Installable) {
			why = r.V1Reasons
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Package, r.Channel, v0, v1, d, strings.Join(why[:min(1, len(why))], ""))
		// Every further reason on a line of its own, under the first.
		for _, more := range why[min(1, len(why)):] {
			fmt.Fprintf(&b, "\t\t\t\t\t%s\n", more)
		}
	}
	if err := writeTabbed(s.Out, b.String()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.Out, "\n%d channels: OLM v0 and v1 differ on %d\n", len(rows), differ)
	return err
}

func writeTabbed(w io.Writer, text string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if _, err := io.WriteString(tw, text); err != nil {
		return err
	}
	return tw.Flush()
}
