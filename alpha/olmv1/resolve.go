package olmv1

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fastopm/fastopm/pkg/suggest"
)

// The upgrade constraint policies of a ClusterExtension.
const (
	// CatalogProvided: an installed bundle moves only to its successors
	// by the catalog's upgrade edges (the default).
	CatalogProvided = "CatalogProvided"
	// SelfCertified: any bundle in the version range, downgrades
	// included.
	SelfCertified = "SelfCertified"
)

// Spec is the part of a ClusterExtension's spec.source.catalog the
// resolver reads.
type Spec struct {
	Package  string   `json:"packageName"`
	Channels []string `json:"channels,omitempty"`
	// Version is a version range (VersionRange's syntax); "" is any.
	Version string `json:"version,omitempty"`
	// UpgradeConstraintPolicy is CatalogProvided ("" too) or
	// SelfCertified.
	UpgradeConstraintPolicy string `json:"upgradeConstraintPolicy,omitempty"`
	// Selector selects catalogs by their labels, in kubectl's syntax
	// (`olm.operatorframework.io/metadata.name in (a,b)`); "" selects all.
	Selector string `json:"selector,omitempty"`
}

// Installed is the bundle a ClusterExtension has installed (its
// status.install.bundle): name and version, and the release when the
// BundleReleaseSupport feature gate reports it apart.
type Installed struct {
	Name    string  `json:"name"`
	Version string  `json:"version"`
	Release *string `json:"release,omitempty"`
	// InCatalog is true when one of the catalogs holds the bundle.
	InCatalog bool `json:"inCatalog"`
}

// Options are the operator-controller settings the answers depend on.
type Options struct {
	// BundleReleaseSupport is operator-controller's feature gate of that
	// name (alpha, off by default): an olm.package property's release
	// field counts only with it.
	BundleReleaseSupport bool
	// Install configures Check for the resolved bundle.
	Install Config
}

// Resolver resolves ClusterExtensions against a set of catalogs.
type Resolver struct {
	catalogs []*Catalog // by name, as the API server lists them
	opts     Options
}

// NewResolver makes a resolver over catalogs, whose names must differ.
func NewResolver(opts Options, catalogs ...*Catalog) (*Resolver, error) {
	r := &Resolver{opts: opts, catalogs: slices.Clone(catalogs)}
	slices.SortStableFunc(r.catalogs, func(a, b *Catalog) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(r.catalogs); i++ {
		if r.catalogs[i].Name == r.catalogs[i-1].Name {
			return nil, fmt.Errorf("two catalogs are named %q", r.catalogs[i].Name)
		}
	}
	return r, nil
}

// Catalogs returns the resolver's catalogs, by name.
func (r *Resolver) Catalogs() []*Catalog { return r.catalogs }

// Options returns the resolver's options.
func (r *Resolver) Options() Options { return r.opts }

// Answer is what OLM v1 resolves a ClusterExtension to, and why.
type Answer struct {
	Spec      Spec       `json:"spec"`
	Installed *Installed `json:"installed,omitempty"`
	// Resolved is true when OLM v1 resolves to Bundle. When it does not,
	// Error is operator-controller's message, and Bundle may still name
	// the bundle it picked and then refused (a bundle with dependencies).
	Resolved bool      `json:"resolved"`
	Bundle   *Resolved `json:"bundle,omitempty"`
	Error    string    `json:"error,omitempty"`
	// Catalogs says what each catalog offered, in the order OLM v1 walks
	// them (by name).
	Catalogs []CatalogStat `json:"catalogs"`
	// Installable is Check's answer for Bundle.
	Installable *Installability `json:"installable,omitempty"`
}

// Resolved is the bundle OLM v1 resolves to.
type Resolved struct {
	Name     string `json:"name"`
	Package  string `json:"package"`
	Version  string `json:"version"`
	Image    string `json:"image,omitempty"`
	Catalog  string `json:"catalog"`
	Priority int    `json:"priority"`
	// Channels are the selected channels that hold it.
	Channels []string `json:"channels"`
	// By says why it may follow the installed bundle: its channel entries'
	// edges that name the installed bundle ("replaces x in channel c"),
	// "the installed version itself", or "SelfCertified: any version".
	By []string `json:"by,omitempty"`
	// Deprecations are the olm.deprecations messages of its package, the
	// selected channels and the bundle, which OLM v1 reports in the
	// ClusterExtension's Deprecated conditions.
	Deprecations []string `json:"deprecations,omitempty"`
	// Deprecated is true when olm.deprecations deprecates the bundle
	// itself (OLM v1 picks it only when every candidate is deprecated).
	Deprecated bool `json:"deprecated,omitempty"`

	bundle *Bundle
}

// Bundle returns the resolved bundle as the catalog holds it.
func (r *Resolved) Bundle() *Bundle { return r.bundle }

// CatalogStat is one catalog's part in a resolution.
type CatalogStat struct {
	Catalog  string `json:"catalog"`
	Priority int    `json:"priority"`
	// Selected is false when the catalog selector leaves the catalog out.
	Selected     bool `json:"selected"`
	PackageFound bool `json:"packageFound"`
	// TotalBundles are the package's bundles, MatchedBundles those that
	// pass the channels, the version range and the upgrade edges.
	TotalBundles   int `json:"totalBundles"`
	MatchedBundles int `json:"matchedBundles"`
	// Best is the catalog's best match: not deprecated if it can, then
	// the highest version.
	Best *Candidate `json:"best,omitempty"`
	// Outcome is what became of Best: "chosen", or why not.
	Outcome string `json:"outcome,omitempty"`
}

// Candidate is a catalog's best bundle.
type Candidate struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	Deprecated bool   `json:"deprecated,omitempty"`
}

// candidate is a bundle that passed the predicates, with its version.
type candidate struct {
	b   *Bundle
	vr  VersionRelease
	err error
}

// UsageError is a ClusterExtension that the API server or the resolver
// refuses before it looks at a catalog: a bad version range, selector or
// policy.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Resolve answers which bundle OLM v1 resolves spec to, with installed
// the bundle the ClusterExtension has installed (nil for a new one). The
// error is a UsageError; everything OLM v1 reports as a failed
// resolution is in the Answer.
func (r *Resolver) Resolve(spec Spec, installed *Installed) (*Answer, error) {
	a := &Answer{Spec: spec, Installed: installed, Catalogs: []CatalogStat{}}
	switch spec.UpgradeConstraintPolicy {
	case "", CatalogProvided, SelfCertified:
	default:
		return nil, &UsageError{fmt.Errorf("invalid upgrade constraint policy %q: expected %s or %s", spec.UpgradeConstraintPolicy, CatalogProvided, SelfCertified)}
	}
	if spec.Package == "" {
		return nil, &UsageError{errors.New("the package name is required")}
	}
	selector := labels.Everything()
	if spec.Selector != "" {
		s, err := labels.Parse(spec.Selector)
		if err != nil {
			return nil, &UsageError{fmt.Errorf("desired catalog selector is invalid: %w", err)}
		}
		selector = s
	}
	var vrange *VersionRange
	if spec.Version != "" {
		var err error
		if vrange, err = NewVersionRange(spec.Version); err != nil {
			return nil, &UsageError{fmt.Errorf("desired version range %q is invalid: %w", spec.Version, err)}
		}
	}
	useEdges := spec.UpgradeConstraintPolicy != SelfCertified && installed != nil

	type found struct {
		c    candidate
		cat  *Catalog
		stat int // index in a.Catalogs
	}
	var resolved []found
	priorDeprecated := false
	for _, cat := range r.catalogs {
		st := CatalogStat{Catalog: cat.Name, Priority: cat.Priority, Selected: selector.Matches(labels.Set(cat.Labels))}
		if !st.Selected {
			a.Catalogs = append(a.Catalogs, st)
			continue
		}
		p := cat.Package(spec.Package)
		if p == nil {
			a.Catalogs = append(a.Catalogs, st)
			continue
		}
		st.PackageFound = true
		st.TotalBundles = len(p.Bundles)
		channels := p.Channels
		if len(spec.Channels) > 0 {
			channels = nil
			for _, c := range p.Channels {
				if slices.Contains(spec.Channels, c.Name) {
					channels = append(channels, c)
				}
			}
		}
		var succ func(*Bundle) bool
		if useEdges {
			s, err := r.successors(*installed, channels)
			if err != nil {
				a.Catalogs = append(a.Catalogs, st)
				a.Error = fmt.Sprintf("error walking catalogs: error finding upgrade edges: %v", err)
				return a, nil
			}
			succ = s
		}
		var cands []candidate
		for _, b := range p.Bundles {
			vr, verr := bundleVersionRelease(b.Version, b.Release, r.opts.BundleReleaseSupport)
			if len(spec.Channels) > 0 && !inChannels(b, channels) {
				continue
			}
			if vrange != nil && (verr != nil || !vrange.Contains(vr.Version)) {
				continue
			}
			if succ != nil && !succ(b) {
				continue
			}
			cands = append(cands, candidate{b: b, vr: vr, err: verr})
		}
		st.MatchedBundles = len(cands)
		if len(cands) == 0 {
			a.Catalogs = append(a.Catalogs, st)
			continue
		}
		slices.SortStableFunc(cands, compareCandidates)
		best := cands[0]
		st.Best = &Candidate{Name: best.b.Name, Version: versionText(best), Deprecated: best.b.Deprecated()}
		a.Catalogs = append(a.Catalogs, st)
		idx := len(a.Catalogs) - 1
		if len(resolved) > 0 {
			if best.b.Deprecated() && !priorDeprecated {
				a.Catalogs[idx].Outcome = "deprecated, while another catalog has a candidate that is not"
				continue
			}
			if !best.b.Deprecated() && priorDeprecated {
				for _, f := range resolved {
					a.Catalogs[f.stat].Outcome = "deprecated, while another catalog has a candidate that is not"
				}
				resolved = nil
			}
		}
		resolved = append(resolved, found{c: best, cat: cat, stat: idx})
		priorDeprecated = best.b.Deprecated()
	}

	if len(resolved) > 1 {
		slices.SortStableFunc(resolved, func(x, y found) int { return cmp.Compare(y.cat.Priority, x.cat.Priority) })
		if resolved[0].cat.Priority != resolved[1].cat.Priority {
			for _, f := range resolved[1:] {
				a.Catalogs[f.stat].Outcome = fmt.Sprintf("lower priority than catalog %s (%d)", resolved[0].cat.Name, resolved[0].cat.Priority)
			}
			resolved = resolved[:1]
		}
	}
	if len(resolved) != 1 {
		var names []string
		for _, f := range resolved {
			names = append(names, f.cat.Name)
		}
		for _, f := range resolved {
			a.Catalogs[f.stat].Outcome = "tied: the same priority as " + strings.Join(without(names, f.cat.Name), ", ")
		}
		a.Error = resolutionError(spec, installed, names)
		return a, nil
	}
	f := resolved[0]
	a.Catalogs[f.stat].Outcome = "chosen"
	b := f.c.b
	res := &Resolved{Name: b.Name, Package: b.Package, Image: b.Image, Catalog: f.cat.Name, Priority: f.cat.Priority,
		Deprecated: b.Deprecated(), bundle: b}
	for _, c := range b.Channels {
		if len(spec.Channels) == 0 || slices.Contains(spec.Channels, c) {
			res.Channels = append(res.Channels, c)
		}
	}
	res.Deprecations = deprecations(f.cat.Package(spec.Package), spec.Channels, b)
	if installed != nil {
		if spec.UpgradeConstraintPolicy == SelfCertified {
			res.By = []string{"SelfCertified: any version in range"}
		} else {
			res.By = r.why(*installed, f.cat.Package(spec.Package), spec.Channels, b, f.c.vr)
		}
	}
	a.Bundle = res
	if f.c.err != nil {
		a.Error = fmt.Sprintf("error getting resolved bundle version for bundle %q: %v", b.Name, f.c.err)
		return a, nil
	}
	res.Version = f.c.vr.String()
	a.Installable = Check(b, r.opts.Install)
	if len(b.Dependencies) > 0 {
		// resolve.NoDependencyValidation, which names the first.
		a.Error = fmt.Sprintf("validating bundle %q: %s", b.Name, dependencyMessage(b.Name, b.Dependencies[0]))
		return a, nil
	}
	a.Resolved = true
	return a, nil
}

func dependencyMessage(bundle, typ string) string {
	return fmt.Sprintf("bundle %q has a dependency declared via property %q which is currently not supported", bundle, typ)
}

func versionText(c candidate) string {
	if c.err != nil {
		return c.b.Version
	}
	return c.vr.String()
}

func without(names []string, name string) []string {
	var out []string
	for _, n := range names {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}

// compareCandidates sorts bundles as the resolver does: those
// olm.deprecations does not deprecate first, then by version and release,
// highest first, bundles whose version does not parse last.
func compareCandidates(x, y candidate) int {
	if dx, dy := x.b.Deprecated(), y.b.Deprecated(); dx != dy {
		if dx {
			return 1
		}
		return -1
	}
	switch {
	case x.err != nil && y.err != nil:
		return 0
	case x.err != nil:
		return 1
	case y.err != nil:
		return -1
	}
	return y.vr.Compare(x.vr)
}

func inChannels(b *Bundle, channels []*Channel) bool {
	for _, c := range channels {
		if slices.Contains(b.Channels, c.Name) {
			return true
		}
	}
	return false
}

// installedVersionRelease is filter.parseInstalledBundleVersionRelease.
func installedVersionRelease(in Installed) (VersionRelease, error) {
	if in.Release == nil {
		vr, err := ParseLegacyVersionRelease(in.Version)
		if err != nil {
			return VersionRelease{}, fmt.Errorf("failed to get version and release of installed bundle: %w", err)
		}
		return vr, nil
	}
	vr, err := ParseExplicitRelease(in.Version, *in.Release)
	if err != nil {
		return VersionRelease{}, fmt.Errorf("failed to parse installed bundle version and release: %w", err)
	}
	return vr, nil
}

// successors is filter.SuccessorsOf: a bundle whose entry in one of the
// channels replaces or skips the installed bundle, or whose skipRange
// (read by blang/semver, as OLM v0 reads it) includes the installed
// version; or a bundle of exactly the installed version and release.
func (r *Resolver) successors(in Installed, channels []*Channel) (func(*Bundle) bool, error) {
	ivr, err := installedVersionRelease(in)
	if err != nil {
		return nil, err
	}
	iv, err := semver.Parse(in.Version)
	if err != nil {
		return nil, fmt.Errorf("getting successorsPredicate: error parsing installed bundle version: %w", err)
	}
	return func(b *Bundle) bool {
		for _, c := range channels {
			for _, e := range c.Entries {
				if e.Name == b.Name && len(edgesTo(e, in.Name, iv)) > 0 {
					return true
				}
			}
		}
		vr, err := bundleVersionRelease(b.Version, b.Release, r.opts.BundleReleaseSupport)
		return err == nil && vr.Compare(ivr) == 0
	}, nil
}

// edgesTo lists the edges of entry e that reach the installed bundle
// (name, version).
func edgesTo(e Entry, name string, v semver.Version) []string {
	var out []string
	if e.Replaces == name {
		out = append(out, "replaces "+name)
	}
	if slices.Contains(e.Skips, name) {
		out = append(out, "skips "+name)
	}
	if e.SkipRange != "" {
		if rng, err := semver.ParseRange(e.SkipRange); err == nil && rng(v) {
			out = append(out, fmt.Sprintf("skipRange %q includes %s", e.SkipRange, v))
		}
	}
	return out
}

// why explains how b follows the installed bundle.
func (r *Resolver) why(in Installed, p *Package, channels []string, b *Bundle, vr VersionRelease) []string {
	var out []string
	iv, err := semver.Parse(in.Version)
	if err != nil {
		return nil
	}
	for _, c := range p.Channels {
		if len(channels) > 0 && !slices.Contains(channels, c.Name) {
			continue
		}
		for _, e := range c.Entries {
			if e.Name != b.Name {
				continue
			}
			for _, s := range edgesTo(e, in.Name, iv) {
				out = append(out, s+" in channel "+c.Name)
			}
		}
	}
	if ivr, err := installedVersionRelease(in); err == nil && ivr.Compare(vr) == 0 {
		out = append(out, "the installed version itself")
	}
	return out
}

// deprecations are the messages of the package, the selected channels
// (all when none is selected) that hold b, and b.
func deprecations(p *Package, channels []string, b *Bundle) []string {
	var out []string
	if p.Deprecation != "" {
		out = append(out, p.Deprecation)
	}
	for _, c := range p.Channels {
		if c.Deprecation == "" || !slices.Contains(b.Channels, c.Name) {
			continue
		}
		if len(channels) > 0 && !slices.Contains(channels, c.Name) {
			continue
		}
		out = append(out, c.Deprecation)
	}
	if b.Deprecation != "" {
		out = append(out, b.Deprecation)
	}
	return out
}

// resolutionError is operator-controller's resolutionError message.
func resolutionError(spec Spec, installed *Installed, catalogs []string) string {
	var sb strings.Builder
	if installed != nil {
		fmt.Fprintf(&sb, "error upgrading from currently installed version %q: ", installed.Version)
	}
	if len(catalogs) > 1 {
		fmt.Fprintf(&sb, "found bundles for package %q ", spec.Package)
	} else {
		fmt.Fprintf(&sb, "no bundles found for package %q ", spec.Package)
	}
	if spec.Version != "" {
		fmt.Fprintf(&sb, "matching version %q ", spec.Version)
	}
	if len(spec.Channels) > 0 {
		fmt.Fprintf(&sb, "in channels %v ", spec.Channels)
	}
	sorted := slices.Clone(catalogs)
	slices.Sort(sorted)
	if len(sorted) > 1 {
		fmt.Fprintf(&sb, "in multiple catalogs with the same priority %v ", sorted)
	}
	return strings.TrimSpace(sb.String())
}

// hasPackage reports whether a catalog has the package.
func (r *Resolver) hasPackage(pkg string) bool {
	for _, cat := range r.catalogs {
		if cat.Package(pkg) != nil {
			return true
		}
	}
	return false
}

// FindInstalled reads the installed bundle that from names in a package:
// a bundle of one of the catalogs by name, or by version (then the one
// bundle of that version), its version (and release, with
// BundleReleaseSupport) from the catalog; anything else is a bundle the
// catalogs do not hold, its version read from a "vX.Y.Z" or "-X.Y.Z"
// suffix of its name. version, when not "", gives the installed version
// of a bundle the catalogs do not hold; for one they hold, it must be the
// catalog's version (a *VersionConflictError otherwise).
func (r *Resolver) FindInstalled(pkg, from, version string) (*Installed, error) {
	var byVersion []*Bundle
	var byVersionCat *Catalog
	fromVersion, verr := semver.ParseTolerant(from)
	for _, cat := range r.catalogs {
		p := cat.Package(pkg)
		if p == nil {
			continue
		}
		if b := p.Bundle(from); b != nil {
			if err := versionConflict(cat, b, version); err != nil {
				return nil, err
			}
			return r.installedBundle(b), nil
		}
		if verr == nil {
			for _, b := range p.Bundles {
				if v, err := semver.ParseTolerant(b.Version); err == nil && v.Equals(fromVersion) && !slices.ContainsFunc(byVersion, func(o *Bundle) bool { return o.Name == b.Name }) {
					byVersion = append(byVersion, b)
					byVersionCat = cat
				}
			}
		}
	}
	switch {
	case len(byVersion) == 1:
		if err := versionConflict(byVersionCat, byVersion[0], version); err != nil {
			return nil, err
		}
		return r.installedBundle(byVersion[0]), nil
	case len(byVersion) > 1:
		var ns []string
		for _, b := range byVersion {
			ns = append(ns, b.Name)
		}
		slices.Sort(ns)
		return nil, fmt.Errorf("version %s names %d bundles of package %q (%s): give a bundle name", from, len(byVersion), pkg, strings.Join(ns, ", "))
	case verr == nil && !r.hasPackage(pkg):
		// Not a version the package lacks: the package itself is not there.
		var names []string
		for _, cat := range r.catalogs {
			names = append(names, cat.Packages()...)
		}
		return nil, fmt.Errorf("package %q is in none of the catalogs%s", pkg, suggest.Hint(pkg, names))
	case verr == nil:
		return nil, fmt.Errorf("no bundle of package %q has version %s: name the installed bundle (OLM v1 matches replaces and skips by name)", pkg, from)
	}
	in := &Installed{Name: from, Version: version}
	if in.Version == "" {
		if i := versionSuffix(from); i >= 0 {
			in.Version = from[i:]
		}
	}
	if in.Version == "" {
		return nil, fmt.Errorf("bundle %q is in none of the catalogs and its name carries no version: give the installed version", from)
	}
	return in, nil
}

// VersionConflictError is FindInstalled's answer when the installed
// version given disagrees with the version of the bundle a catalog holds
// under the name (or version) given: the catalog's version is the one
// operator-controller records, so the question contradicts itself.
type VersionConflictError struct {
	Given, Bundle, Version, Catalog string
}

func (e *VersionConflictError) Error() string {
	return fmt.Sprintf("installed version %s disagrees with the catalog: bundle %q has version %s in catalog %q; give an installed version only for a bundle no catalog holds",
		e.Given, e.Bundle, e.Version, e.Catalog)
}

// versionConflict is a *VersionConflictError when version is given and is
// not bundle b's version (compared as semver versions, build metadata
// included, when both parse).
func versionConflict(cat *Catalog, b *Bundle, version string) error {
	if version == "" || version == b.Version {
		return nil
	}
	g, gerr := semver.ParseTolerant(version)
	v, verr := semver.ParseTolerant(b.Version)
	if gerr == nil && verr == nil && g.Compare(v) == 0 && slices.Equal(g.Build, v.Build) {
		return nil
	}
	return &VersionConflictError{Given: version, Bundle: b.Name, Version: b.Version, Catalog: cat.Name}
}

// installedBundle is the catalog's bundle b as operator-controller records
// it once installed (bundleutil.MetadataFor): without the
// BundleReleaseSupport gate, its version with the release as build
// metadata; with it, the version without the release (a release read
// from build metadata is taken out of it) and the release apart.
func (r *Resolver) installedBundle(b *Bundle) *Installed {
	in := &Installed{Name: b.Name, Version: b.Version, InCatalog: true}
	vr, err := bundleVersionRelease(b.Version, b.Release, r.opts.BundleReleaseSupport)
	if err != nil {
		return in // operator-controller installs no such bundle; keep its words
	}
	if !r.opts.BundleReleaseSupport {
		in.Version = vr.String()
		return in
	}
	in.Version = vr.Version.String()
	if b.Release != nil || len(vr.Release) > 0 {
		rel := vr.Release.String()
		in.Release = &rel
	}
	return in
}

// versionSuffix returns where a semver version begins in a bundle name
// such as "etcdoperator.v0.9.2" or "foo-1.2.3", or -1.
func versionSuffix(name string) int {
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c == '.' || c == '-') && i+1 < len(name) {
			rest := name[i+1:]
			if rest[0] == 'v' && len(rest) > 1 {
				rest = rest[1:]
			}
			if _, err := semver.Parse(rest); err == nil {
				return len(name) - len(rest)
			}
		}
	}
	return -1
}

// Step is one resolution of a path: the bundle OLM v1 moves to.
type Step struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Version is To's version.
	Version string   `json:"version"`
	By      []string `json:"by,omitempty"`
}

// Path follows OLM v1 from installed: it resolves, installs what it
// resolves to, and resolves again, until it resolves to the installed
// bundle (the end), fails (the answer of that resolution, with its
// error) or comes back to a bundle it has passed (a loop, in end). It
// returns the steps and the last answer.
func (r *Resolver) Path(spec Spec, installed Installed) ([]Step, *Answer, error) {
	var steps []Step
	seen := map[string]bool{installed.Name: true}
	in := installed
	for {
		a, err := r.Resolve(spec, &in)
		if err != nil {
			return nil, nil, err
		}
		if !a.Resolved || a.Bundle.Name == in.Name {
			return steps, a, nil
		}
		steps = append(steps, Step{From: in.Name, To: a.Bundle.Name, Version: a.Bundle.Version, By: a.Bundle.By})
		if seen[a.Bundle.Name] {
			a.Error = fmt.Sprintf("loop: OLM v1 comes back to %s", a.Bundle.Name)
			return steps, a, nil
		}
		seen[a.Bundle.Name] = true
		b := a.Bundle.bundle
		in = Installed{Name: b.Name, Version: b.Version, InCatalog: true}
		if r.opts.BundleReleaseSupport {
			in.Release = b.Release
		}
	}
}
