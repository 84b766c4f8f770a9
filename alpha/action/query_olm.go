//go:build !opm_lean

package action

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/alpha/olmv1"
	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// QueryOLM asks OLM v1 (operator-controller's resolver and install checks,
// alpha/olmv1) about catalogs loaded once for both OLMs (LoadCatalogs), and
// with Both OLM v0 too (alpha/updates, alpha/install): each answer then
// sets the two side by side and says where they differ. These are the
// answers of `opm alpha query updates|install --olm v1|both`.
type QueryOLM struct {
	// Catalogs are the catalogs in the order given; OLM v0 answers
	// updates from the first. The ones without a name are named as
	// NameInstallCatalogs names them.
	Catalogs    []InstallCatalog
	Sources     SourceResolver
	MaxFileSize int64
	// Options are OLM v1's feature gates and install configuration.
	Options olmv1.Options
	// BundleImages, when not nil, pulls the images of the bundles whose
	// objects the catalog does not carry, to check them
	// (BundleImageChecker); it must allow RefBundleImage.
	BundleImages SourceResolver
	// Both asks OLM v0 too and compares the answers.
	Both bool
	// Budget bounds each of OLM v0's install questions
	// (install.Resolver.Budget; zero: no bound), MaxTerms the size of its
	// problem (install.Resolver.MaxTerms).
	Budget   time.Duration
	MaxTerms int
	// RefuseUnknown makes a question (Updates, Install) that names a
	// package no catalog holds, or a channel no catalog's package holds,
	// an *install.UnknownError (a misspelt name: the command line's exit
	// 2) rather than OLM's answer that nothing is found.
	RefuseUnknown bool
}

// OLMUpdates is where OLM v1 moves an installed bundle and, with Both,
// where OLM v0 does and where the two differ.
type OLMUpdates struct {
	// V0 is OLM v0's answer from the first catalog; V0Error says why it
	// has none.
	V0      *updates.Answer `json:"v0"`
	V0Error string          `json:"v0Error,omitempty"`
	V1      *olmv1.Answer   `json:"v1"`
	// V1Path is OLM v1's path from the installed bundle: it resolves
	// again after each install.
	V1Path []olmv1.Step `json:"v1Path"`
	// V1End is why the path ends where it does, when it ends on a
	// resolution that fails.
	V1End       string   `json:"v1End,omitempty"`
	Differences []string `json:"differences"`
	// Catalog names the catalog OLM v0 answers from (the first).
	Catalog string `json:"-"`
}

// Neither says that neither OLM has an answer (both questions failed),
// which is no agreement.
func (u *OLMUpdates) Neither() bool { return u.V0 == nil && (u.V1 == nil || !u.V1.Resolved) }

// UpdatesV1 is OLM v1's side of OLMUpdates alone.
type UpdatesV1 struct {
	*olmv1.Answer
	Path []olmv1.Step `json:"path"`
	End  string       `json:"end,omitempty"`
}

// OnlyV1 returns OLM v1's side of the answer.
func (u *OLMUpdates) OnlyV1() UpdatesV1 { return UpdatesV1{Answer: u.V1, Path: u.V1Path, End: u.V1End} }

// OLMInstall is the bundle OLM v1 resolves a new ClusterExtension to and
// whether it installs it; with Both, what OLM v0 installs for a new
// Subscription to the same package and channel, and where the two differ.
type OLMInstall struct {
	V0          *install.Answer `json:"v0"`
	V1          *olmv1.Answer   `json:"v1"`
	Differences []string        `json:"differences"`
}

// Neither says that neither OLM installs anything for the question.
func (a *OLMInstall) Neither() bool {
	return (a.V0 == nil || a.V0.Status != install.Installable) && !a.V1Installs()
}

// V1Installs says whether OLM v1 resolves to a bundle it can install (or
// whose installability is unknown).
func (a *OLMInstall) V1Installs() bool { return v1Installs(a.V1) }

func v1Installs(a *olmv1.Answer) bool {
	return a.Resolved && a.Installable != nil && a.Installable.Status != olmv1.NotInstallable
}

// OLMInstallAll answers for every package and channel of a catalog: OLM
// v1's report and, with Both, OLM v0's answer beside each of its rows.
type OLMInstallAll struct {
	Catalog string `json:"catalog"`
	// Rows are set with Both.
	Rows []OLMInstallRow `json:"rows"`
	// V1 is OLM v1's report alone.
	V1 *olmv1.Report `json:"-"`
}

// OLMInstallRow is one package and channel of OLMInstallAll.
type OLMInstallRow struct {
	Package   string   `json:"package"`
	Channel   string   `json:"channel"`
	V0Status  string   `json:"v0Status"`
	V0Bundle  string   `json:"v0Bundle,omitempty"`
	V1Status  string   `json:"v1Status"`
	V1Bundle  string   `json:"v1Bundle,omitempty"`
	V1Reasons []string `json:"v1Reasons,omitempty"`
	// V1Checked and V1Notes are what OLM v1's check read and noted
	// (olmv1.Row's Checked and Notes).
	V1Checked string   `json:"v1Checked,omitempty"`
	V1Notes   []string `json:"v1Notes,omitempty"`
	// Differ is true when one OLM installs and the other does not, or
	// both install different bundles.
	Differ bool `json:"differ"`
}

// Differ counts the rows where OLM v0 and v1 differ.
func (a *OLMInstallAll) Differ() int {
	n := 0
	for _, r := range a.Rows {
		if r.Differ {
			n++
		}
	}
	return n
}

// olmCatalogs are the loaded catalogs, OLM v1's resolver over them and
// the check of bundles whose objects the catalogs do not carry.
type olmCatalogs struct {
	*Catalogs
	first string
	r     *olmv1.Resolver
	check func(*olmv1.Bundle) *olmv1.Installability
}

// load loads the catalogs once for both OLMs and makes OLM v1's resolver;
// with BundleImages, its check pulls bundle images.
func (q *QueryOLM) load(ctx context.Context) (*olmCatalogs, error) {
	if len(q.Catalogs) == 0 {
		return nil, errors.New("no catalog")
	}
	cats := slices.Clone(q.Catalogs)
	NameInstallCatalogs(cats)
	for _, c := range cats {
		// A ClusterCatalog's spec.priority is an int32 (operator-controller
		// v1.11.0, api/v1); a CatalogSource's, OLM v0's, any int.
		if c.Priority < math.MinInt32 || c.Priority > math.MaxInt32 {
			return nil, fmt.Errorf("catalog %s: priority %d is out of a ClusterCatalog's range (%d to %d)", c.Name, c.Priority, math.MinInt32, math.MaxInt32)
		}
	}
	loaded, err := LoadCatalogs(ctx, q.Sources, cats, q.MaxFileSize)
	if err != nil {
		return nil, err
	}
	r, err := olmv1.NewResolver(q.Options, loaded.V1...)
	if err != nil {
		loaded.Close() //nolint:errcheck // the resolver's error is the one to report
		return nil, err
	}
	out := &olmCatalogs{Catalogs: loaded, first: cats[0].Name, r: r}
	if q.BundleImages != nil {
		bc := &BundleImageChecker{Config: q.Options.Install, Sources: q.BundleImages}
		out.check = func(b *olmv1.Bundle) *olmv1.Installability { return bc.Check(ctx, b) }
	}
	return out, nil
}

// recheck replaces the answer's installability from the bundle image
// when the catalog carries no objects and BundleImages is set.
func (c *olmCatalogs) recheck(a *olmv1.Answer) {
	if c.check != nil && a.Bundle != nil && a.Installable != nil && !a.Bundle.Bundle().HasObjects() {
		a.Installable = c.check(a.Bundle.Bundle())
	}
}

// Updates answers where OLM v1 moves a ClusterExtension for spec that
// has the bundle from installed (by name or version; installedVersion
// gives a version the catalogs do not know it by), and the path of its
// further updates; from "" asks about a new ClusterExtension. With Both,
// OLM v0 answers too, from the first catalog, in spec's one channel
// (or the package's default channel), and from must be given.
func (q *QueryOLM) Updates(ctx context.Context, spec olmv1.Spec, from, installedVersion string) (*OLMUpdates, error) {
	if q.Both && len(spec.Channels) > 1 {
		return nil, errors.New("OLM v0 follows one channel: compare the OLMs with at most one channel")
	}
	if q.Both && from == "" {
		return nil, errors.New("comparing updates needs the installed bundle")
	}
	c, err := q.load(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close() //nolint:errcheck // removal of an image's unpacked tree, after the last answer
	if err := q.unknown(c.r, spec); err != nil {
		return nil, err
	}
	var installed *olmv1.Installed
	if from != "" {
		if installed, err = c.r.FindInstalled(spec.Package, from, installedVersion); err != nil {
			return nil, err
		}
	}
	a, err := c.r.Resolve(spec, installed)
	if err != nil {
		return nil, err
	}
	c.recheck(a)
	out := &OLMUpdates{V1: a, Catalog: c.first}
	if installed != nil {
		var end *olmv1.Answer
		if out.V1Path, end, err = c.r.Path(spec, *installed); err != nil {
			return nil, err
		}
		if end != nil && len(out.V1Path) > 0 {
			out.V1End = end.Error
		}
	}
	if !q.Both {
		return out, nil
	}
	v0q := QueryUpdates{Model: c.Models[0], Package: spec.Package, From: from, Version: installedVersion}
	if len(spec.Channels) == 1 {
		v0q.Channel = spec.Channels[0]
	}
	v0, v0err := v0q.Run()
	out.V0 = v0
	if v0err != nil {
		out.V0Error = v0err.Error()
	}
	nch := 0
	if mp := c.Models[0][spec.Package]; mp != nil {
		nch = len(mp.Channels)
	}
	out.Differences = updatesDifferences(out, spec.Channels, nch, c.r)
	return out, nil
}

// Install answers what OLM v1 resolves a new ClusterExtension for spec
// to and whether it installs it; source, when not "", names the catalog
// (a CatalogSource's name, as a selector of its name unless spec has a
// selector). With Both, OLM v0 answers for a new Subscription to the
// package, in spec's one channel (or every channel), from source (or the
// first catalog).
func (q *QueryOLM) Install(ctx context.Context, spec olmv1.Spec, source string) (*OLMInstall, error) {
	if q.Both && len(spec.Channels) > 1 {
		return nil, errors.New("an OLM v0 Subscription has one channel: compare the OLMs with at most one channel")
	}
	c, err := q.load(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close() //nolint:errcheck // removal of an image's unpacked tree, after the last answer
	if err := q.unknown(c.r, spec); err != nil {
		return nil, err
	}
	if source != "" && spec.Selector == "" {
		spec.Selector = olmv1.NameLabel + "=" + source
	}
	a, err := c.r.Resolve(spec, nil)
	if err != nil {
		return nil, err
	}
	c.recheck(a)
	out := &OLMInstall{V1: a}
	if !q.Both {
		return out, nil
	}
	v0r, err := install.NewResolver(c.V0...)
	if err != nil {
		return nil, err
	}
	sub := install.Subscription{Package: spec.Package, Catalog: source}
	if len(spec.Channels) == 1 {
		sub.Channel = spec.Channels[0]
	}
	v0r.Budget, v0r.MaxTerms = q.Budget, q.MaxTerms
	if out.V0, err = v0r.Resolve(ctx, sub); err != nil {
		return nil, err
	}
	out.Differences = installDifferences(out.V0, a, c.r)
	return out, nil
}

// unknown returns, with RefuseUnknown, an *install.UnknownError when no catalog holds the
// package spec names, or when no catalog's package holds one of its
// channels: a wrong question (a misspelt name), which OLM v1 would only
// answer with "no bundles found".
func (q *QueryOLM) unknown(r *olmv1.Resolver, spec olmv1.Spec) error {
	if !q.RefuseUnknown {
		return nil
	}
	var pkgs, names, channels []string
	found := false
	for _, cat := range r.Catalogs() {
		names = append(names, cat.Name)
		p := cat.Package(spec.Package)
		if p == nil {
			pkgs = append(pkgs, cat.Packages()...)
			continue
		}
		found = true
		for _, ch := range p.Channels {
			channels = append(channels, ch.Name)
		}
	}
	if !found {
		slices.Sort(pkgs)
		return &install.UnknownError{What: fmt.Sprintf("package %q is in none of the catalogs (%s)%s",
			spec.Package, strings.Join(names, ", "), suggest.Hint(spec.Package, slices.Compact(pkgs)))}
	}
	slices.Sort(channels)
	channels = slices.Compact(channels)
	for _, ch := range spec.Channels {
		if !slices.Contains(channels, ch) {
			return &install.UnknownError{What: fmt.Sprintf("package %s has no channel %q in any catalog (its channels: %s)%s",
				spec.Package, ch, strings.Join(channels, ", "), suggest.Hint(ch, channels))}
		}
	}
	return nil
}

// InstallAll answers Install for every package and channel of the
// catalog named catalog ("" for the first): OLM v1's report, and with
// Both OLM v0's answer for a Subscription to each channel beside it.
func (q *QueryOLM) InstallAll(ctx context.Context, catalog string) (*OLMInstallAll, error) {
	c, err := q.load(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close() //nolint:errcheck // removal of an image's unpacked tree, after the last answer
	if catalog == "" {
		catalog = c.first
	}
	rep, err := c.r.All(catalog, c.check)
	if err != nil {
		return nil, err
	}
	out := &OLMInstallAll{Catalog: rep.Catalog, V1: rep}
	if !q.Both {
		return out, nil
	}
	v0r, err := install.NewResolver(c.V0...)
	if err != nil {
		return nil, err
	}
	v0r.Budget, v0r.MaxTerms = q.Budget, q.MaxTerms
	v0rep, err := v0r.All(ctx, catalog, false)
	if err != nil {
		return nil, err
	}
	v0of := map[[2]string]*install.Answer{}
	for _, a := range v0rep.Answers {
		v0of[[2]string{a.Subscription.Package, a.Subscription.Channel}] = a
	}
	out.Rows = []OLMInstallRow{}
	for _, r := range rep.Rows {
		row := OLMInstallRow{Package: r.Package, Channel: r.Channel, V1Status: r.Status, V1Bundle: r.Bundle, V1Reasons: r.Reasons,
			V1Checked: r.Checked, V1Notes: r.Notes}
		if a := v0of[[2]string{r.Package, r.Channel}]; a != nil {
			row.V0Status = string(a.Status)
			if a.Status == install.Installable && len(a.Installs) > 0 {
				row.V0Bundle = a.Installs[0].Bundle
			}
		}
		v1ok := r.Status != olmv1.StatusNoResolution && r.Status != string(olmv1.NotInstallable)
		v0ok := row.V0Status == string(install.Installable)
		row.Differ = v0ok != v1ok || (v0ok && v1ok && row.V0Bundle != row.V1Bundle)
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// updatesDifferences says where the two answers differ: the next bundle,
// where the updates end, and the channels each follows (nch is the number
// of the package's channels in OLM v0's catalog).
func updatesDifferences(b *OLMUpdates, channels []string, nch int, r *olmv1.Resolver) []string {
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
	// OLM v1 resolves to a bundle it then cannot install: the
	// ClusterExtension stays where it is, failing. As for a new install
	// (installDifferences), that differs from OLM v0 moving on.
	refused := ""
	if v1next != "" && !v1Installs(b.V1) {
		refused = v1WhyNot(b.V1)
	}
	switch {
	case b.V0Error != "" && b.V1 != nil && b.V1.Resolved && refused != "":
		out = append(out, fmt.Sprintf("OLM v0 has no answer (%s); OLM v1 resolves to %s and cannot install it: %s", b.V0Error, v1next, refused))
	case b.V0Error != "" && b.V1 != nil && b.V1.Resolved:
		out = append(out, fmt.Sprintf("OLM v0 has no answer (%s); OLM v1 moves to %s", b.V0Error, name(v1next)))
	case b.V1 != nil && !b.V1.Resolved && b.V0Error == "":
		out = append(out, fmt.Sprintf("OLM v1 does not resolve (%s); OLM v0 moves to %s", b.V1.Error, name(v0next)))
	case b.V0Error == "" && refused != "" && v0next == v1next:
		out = append(out, fmt.Sprintf("OLM v0 moves to %s; OLM v1 cannot install it: %s", v0next, refused))
	case b.V0Error == "" && refused != "":
		out = append(out, fmt.Sprintf("next: OLM v0 moves to %s; OLM v1 resolves to %s and cannot install it: %s", name(v0next), v1next, refused))
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

// v1WhyNot is why OLM v1 does not install what the answer a asks for:
// its resolution's error, or the first reason it refuses the bundle.
func v1WhyNot(a *olmv1.Answer) string {
	why := a.Error
	if why == "" && a.Installable != nil && len(a.Installable.Reasons) > 0 {
		why = a.Installable.Reasons[0]
	}
	return why
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
	v1ok := v1Installs(v1)
	switch {
	case v0b != "" && !v1ok:
		out = append(out, fmt.Sprintf("OLM v0 installs %s; OLM v1 cannot: %s", v0b, v1WhyNot(v1)))
	case v0b == "" && v1ok:
		why := v0.Error
		if why == "" && len(v0.Reasons) > 0 {
			why = v0.Reasons[0]
		}
		out = append(out, fmt.Sprintf("OLM v1 installs %s; OLM v0 cannot: %s", v1b, why))
	case v0b != "" && v0b != v1b:
		out = append(out, fmt.Sprintf("OLM v0 installs %s, OLM v1 %s (the highest version it prefers)", v0b, v1b))
	}
	if len(out) > 0 {
		out = append(out, deprecationNotes(r, v1.Spec.Package, v0b, v1b)...)
	}
	if v0b != "" && len(v0.Installs) > 1 {
		out = append(out, fmt.Sprintf("OLM v0 installs %d dependencies too; OLM v1 installs no dependency and refuses a bundle that declares one", len(v0.Installs)-1))
	}
	return out
}
