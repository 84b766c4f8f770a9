package olmv1

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// fbc is a hand-made package (or several) of one catalog.
type fbc struct {
	packages     []declcfg.Package
	channels     []declcfg.Channel
	bundles      []declcfg.Bundle
	deprecations []declcfg.Deprecation
}

// catalogOf feeds f's blobs, as JSON, through a Collector, as the
// commands and the HTTP server do.
func catalogOf(t *testing.T, name string, priority int, f fbc) *Catalog {
	t.Helper()
	c := NewCollector()
	add := func(schema string, v any) {
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		c.AddBlob(&declcfg.Blob{Meta: declcfg.Meta{Schema: schema, JSON: js}})
	}
	for _, p := range f.packages {
		p.Schema = declcfg.SchemaPackage
		add(p.Schema, p)
	}
	for _, ch := range f.channels {
		ch.Schema = declcfg.SchemaChannel
		add(ch.Schema, ch)
	}
	for _, b := range f.bundles {
		b.Schema = declcfg.SchemaBundle
		add(b.Schema, b)
	}
	for _, d := range f.deprecations {
		d.Schema = declcfg.SchemaDeprecations
		add(d.Schema, d)
	}
	return c.Catalog(name, priority, nil)
}

func pkgProp(pkg, version string) property.Property {
	return property.Property{Type: property.TypePackage, Value: json.RawMessage(fmt.Sprintf(`{"packageName":%q,"version":%q}`, pkg, version))}
}

func bundleName(pkg, version string) string { return fmt.Sprintf("%s.v%s", pkg, version) }

func genBundle(pkg, version string) declcfg.Bundle {
	return declcfg.Bundle{Package: pkg, Name: bundleName(pkg, version), Properties: []property.Property{pkgProp(pkg, version)}}
}

func deprecate(pkg string, versions ...string) declcfg.Deprecation {
	d := declcfg.Deprecation{Package: pkg}
	for _, v := range versions {
		d.Entries = append(d.Entries, declcfg.DeprecationEntry{
			Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: bundleName(pkg, v)},
			Message:   fmt.Sprintf("bundle %s is deprecated", bundleName(pkg, v)),
		})
	}
	return d
}

// genPackage is operator-controller's own test package (resolve's
// catalog_test.go): three channels, 1.0.0 and 1.0.1 deprecated.
func genPackage(pkg string) fbc {
	return fbc{
		packages: []declcfg.Package{{Name: pkg}},
		channels: []declcfg.Channel{
			{Package: pkg, Name: "alpha", Entries: []declcfg.ChannelEntry{
				{Name: bundleName(pkg, "0.1.0")},
				{Name: bundleName(pkg, "1.0.0"), SkipRange: "<1.0.0"},
				{Name: bundleName(pkg, "1.0.1"), SkipRange: "<1.0.1"},
				{Name: bundleName(pkg, "1.0.2"), SkipRange: "<1.0.2"},
				{Name: bundleName(pkg, "2.0.0"), SkipRange: ">=1.0.0 <2.0.0"},
			}},
			{Package: pkg, Name: "beta", Entries: []declcfg.ChannelEntry{
				{Name: bundleName(pkg, "0.1.0")},
				{Name: bundleName(pkg, "1.0.2"), SkipRange: "<1.0.2"},
			}},
			{Package: pkg, Name: "gamma", Entries: []declcfg.ChannelEntry{
				{Name: bundleName(pkg, "3.0.0"), SkipRange: ">=2.0.0 <3.0.0"},
			}},
		},
		bundles: []declcfg.Bundle{genBundle(pkg, "0.1.0"), genBundle(pkg, "1.0.0"), genBundle(pkg, "1.0.1"),
			genBundle(pkg, "1.0.2"), genBundle(pkg, "2.0.0"), genBundle(pkg, "3.0.0")},
		deprecations: []declcfg.Deprecation{deprecate(pkg, "1.0.0", "1.0.1")},
	}
}

func newResolver(t *testing.T, cats ...*Catalog) *Resolver {
	t.Helper()
	r, err := NewResolver(Options{}, cats...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestResolveOperatorControllerCases restates the cases of
// operator-controller v1.11.0's resolve/catalog_test.go: catalogs a and b
// without the package, c with genPackage.
func TestResolveOperatorControllerCases(t *testing.T) {
	const pkg = "pkg"
	r := newResolver(t, catalogOf(t, "a", 0, fbc{}), catalogOf(t, "b", 0, fbc{}), catalogOf(t, "c", 0, genPackage(pkg)))
	installed := func(v string) *Installed { return &Installed{Name: bundleName(pkg, v), Version: v} }
	for _, tc := range []struct {
		name      string
		spec      Spec
		installed *Installed
		want      string // the bundle's version, or
		err       string // operator-controller's error
	}{
		{name: "PackageExists", spec: Spec{}, want: "3.0.0"},
		{name: "VersionDoesNotExist", spec: Spec{Version: "4.0.0"}, err: `no bundles found for package "pkg" matching version "4.0.0"`},
		{name: "VersionExists", spec: Spec{Version: ">=1.0.0 <2.0.0"}, want: "1.0.2"},
		{name: "ChannelDoesNotExist", spec: Spec{Channels: []string{"stable"}}, err: `no bundles found for package "pkg" in channels [stable]`},
		{name: "ChannelExists", spec: Spec{Channels: []string{"beta"}}, want: "1.0.2"},
		{name: "ChannelExistsButNotVersion", spec: Spec{Channels: []string{"beta"}, Version: "3.0.0"}, err: `no bundles found for package "pkg" matching version "3.0.0" in channels [beta]`},
		{name: "VersionExistsButNotChannel", spec: Spec{Channels: []string{"stable"}, Version: "1.0.0"}, err: `no bundles found for package "pkg" matching version "1.0.0" in channels [stable]`},
		{name: "ChannelAndVersionExist", spec: Spec{Channels: []string{"alpha"}, Version: "0.1.0"}, want: "0.1.0"},
		{name: "PreferNonDeprecated", spec: Spec{Version: ">=0.1.0 <=1.0.0"}, want: "0.1.0"},
		{name: "AcceptDeprecated", spec: Spec{Version: ">=1.0.0 <=1.0.1"}, want: "1.0.1"},
		{name: "MultipleChannels", spec: Spec{Channels: []string{"beta", "alpha"}}, want: "2.0.0"},
		// 0.1.0 => 1.0.2 would not be allowed by semver; the skipRanges allow it.
		{name: "UpgradeFoundLegacy", spec: Spec{}, installed: installed("0.1.0"), want: "1.0.2"},
		{name: "UpgradeNotFoundLegacy", spec: Spec{Version: "<1.0.0 >=2.0.0"}, installed: installed("0.1.0"),
			err: `error upgrading from currently installed version "0.1.0": no bundles found for package "pkg" matching version "<1.0.0 >=2.0.0"`},
		// A downgrade, allowed by the policy; 0.1.0 because 1.0.0 and 1.0.1 are deprecated.
		{name: "DowngradeFound", spec: Spec{Version: "<1.0.2", UpgradeConstraintPolicy: SelfCertified}, installed: installed("1.0.2"), want: "0.1.0"},
		{name: "DowngradeNotFound", spec: Spec{Version: ">0.1.0 <1.0.0", UpgradeConstraintPolicy: SelfCertified}, installed: installed("1.0.2"),
			err: `error upgrading from currently installed version "1.0.2": no bundles found for package "pkg" matching version ">0.1.0 <1.0.0"`},
		{name: "ClusterExtensionNoMatchLabel", spec: Spec{Selector: NameLabel + "=a"}, err: `no bundles found for package "pkg"`},
		{name: "ClusterExtensionMatchLabel", spec: Spec{Selector: NameLabel + "=c"}, want: "3.0.0"},
		// Ours: the installed version itself is a successor, so a bundle
		// without a successor stays.
		{name: "stays without a successor", spec: Spec{Channels: []string{"gamma"}}, installed: installed("3.0.0"), want: "3.0.0"},
		{name: "installed bundle in no catalog", spec: Spec{}, installed: &Installed{Name: "pkg.v9.0.0", Version: "9.0.0"},
			err: `error upgrading from currently installed version "9.0.0": no bundles found for package "pkg"`},
		{name: "installed version does not parse", spec: Spec{}, installed: &Installed{Name: "x", Version: "abc"},
			err: `error walking catalogs: error finding upgrade edges: failed to get version and release of installed bundle: No Major.Minor.Patch elements found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Package = pkg
			if spec.UpgradeConstraintPolicy == "" {
				spec.UpgradeConstraintPolicy = CatalogProvided
			}
			a, err := r.Resolve(spec, tc.installed)
			if err != nil {
				t.Fatal(err)
			}
			if tc.err != "" {
				if a.Resolved || a.Error != tc.err {
					t.Fatalf("got resolved=%v error %q, want error %q", a.Resolved, a.Error, tc.err)
				}
				return
			}
			if !a.Resolved || a.Bundle.Name != bundleName(pkg, tc.want) || a.Bundle.Version != tc.want {
				t.Fatalf("got %+v (error %q), want %s", a.Bundle, a.Error, tc.want)
			}
			if a.Bundle.Catalog != "c" {
				t.Errorf("catalog %s, want c", a.Bundle.Catalog)
			}
		})
	}
}

// TestResolveUsageErrors: what the resolver refuses before it reads a
// catalog (TestInvalidClusterExtensionVersionRange,
// TestInvalidClusterExtensionCatalogMatchExpressions).
func TestResolveUsageErrors(t *testing.T) {
	r := newResolver(t, catalogOf(t, "c", 0, genPackage("pkg")))
	for _, tc := range []struct {
		spec Spec
		err  string
	}{
		{Spec{Package: "pkg", Version: "foobar"}, `desired version range "foobar" is invalid: improper constraint: "foobar"`},
		{Spec{Package: "pkg", Selector: "name in value"}, "desired catalog selector is invalid: "},
		{Spec{Package: "pkg", UpgradeConstraintPolicy: "Never"}, `invalid upgrade constraint policy "Never"`},
		{Spec{}, "the package name is required"},
	} {
		_, err := r.Resolve(tc.spec, nil)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("%+v: got %v, want a UsageError starting %q", tc.spec, err, tc.err)
		}
	}
}

// TestResolvePriority restates TestUnequalPriority and
// TestMultiplePriority: a higher priority breaks a tie; two catalogs of
// the same top priority keep every catalog in the error.
func TestResolvePriority(t *testing.T) {
	const pkg = "pkg"
	one := func(version string) fbc {
		return fbc{packages: []declcfg.Package{{Name: pkg}},
			channels: []declcfg.Channel{{Package: pkg, Name: "alpha", Entries: []declcfg.ChannelEntry{{Name: bundleName(pkg, version)}}}},
			bundles:  []declcfg.Bundle{genBundle(pkg, version)}}
	}
	r := newResolver(t, catalogOf(t, "a", 1, one("1.0.0")), catalogOf(t, "b", 0, one("1.1.0")))
	a, err := r.Resolve(Spec{Package: pkg}, nil)
	if err != nil || !a.Resolved || a.Bundle.Version != "1.0.0" || a.Bundle.Catalog != "a" {
		t.Fatalf("unequal priority: got %+v, %v", a, err)
	}
	if a.Catalogs[1].Outcome != "lower priority than catalog a (1)" {
		t.Errorf("b's outcome: %q", a.Catalogs[1].Outcome)
	}

	// The extremes of the priority are ordered as any other: the
	// difference of the two does not fit an int.
	r = newResolver(t, catalogOf(t, "hi", math.MaxInt, one("1.0.0")), catalogOf(t, "lo", math.MinInt, one("1.1.0")))
	if a, err := r.Resolve(Spec{Package: pkg}, nil); err != nil || !a.Resolved || a.Bundle.Catalog != "hi" {
		t.Fatalf("extreme priorities: got %+v, %v", a, err)
	}

	r = newResolver(t, catalogOf(t, "a", 1, genPackage(pkg)), catalogOf(t, "b", 0, genPackage(pkg)), catalogOf(t, "c", 1, genPackage(pkg)))
	a, err = r.Resolve(Spec{Package: pkg, Version: ">=1.0.0 <=1.0.1"}, nil)
	if err != nil || a.Resolved || a.Bundle != nil {
		t.Fatalf("multiple priority: got %+v, %v", a, err)
	}
	if want := `found bundles for package "pkg" matching version ">=1.0.0 <=1.0.1" in multiple catalogs with the same priority [a b c]`; a.Error != want {
		t.Errorf("got %q, want %q", a.Error, want)
	}
}

// TestResolveDeprecationAcrossCatalogs restates
// TestPackageVariationsBetweenCatalogs: catalogs a to f, each with some
// versions of the package (no channels), some deprecated.
func TestResolveDeprecationAcrossCatalogs(t *testing.T) {
	const pkg = "pkg"
	with := func(dep bool, versions ...string) fbc {
		f := fbc{packages: []declcfg.Package{{Name: pkg}}}
		for _, v := range versions {
			f.bundles = append(f.bundles, genBundle(pkg, v))
		}
		if dep {
			f.deprecations = []declcfg.Deprecation{deprecate(pkg, versions...)}
		}
		return f
	}
	r := newResolver(t,
		catalogOf(t, "a", 0, fbc{}),
		catalogOf(t, "b", 0, with(true, "1.0.0")),
		catalogOf(t, "c", 0, with(true, "1.0.1")),
		catalogOf(t, "d", 0, with(false, "1.0.2")),
		catalogOf(t, "e", 0, with(true, "1.0.3")),
		catalogOf(t, "f", 0, with(false, "1.0.4", "1.0.5")),
	)
	for _, tc := range []struct {
		name, version string
		want, err     string
	}{
		{"deprecated in all but one catalog", ">=1.0.0 <=1.0.3", "1.0.2", ""},
		{"deprecated in several catalogs", ">=1.0.0 <=1.0.1", "", "in multiple catalogs with the same priority [b c]"},
		{"not deprecated in several catalogs", ">=1.0.0 <=1.0.4", "", "in multiple catalogs with the same priority [d f]"},
		{"the highest version within one catalog", ">=1.0.4 <=1.0.5", "1.0.5", ""},
	} {
		a, err := r.Resolve(Spec{Package: pkg, Version: tc.version}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.err != "" {
			if a.Resolved || !strings.Contains(a.Error, tc.err) {
				t.Errorf("%s: got %+v, want error containing %q", tc.name, a, tc.err)
			}
			continue
		}
		if !a.Resolved || a.Bundle.Version != tc.want {
			t.Errorf("%s: got %+v (%s), want %s", tc.name, a.Bundle, a.Error, tc.want)
		}
	}
}

// TestSuccessors restates TestSuccessorsPredicate and TestLegacySuccessor
// (catalogmetadata/filter/successors_test.go).
func TestSuccessors(t *testing.T) {
	const pkg = "test-package"
	f := fbc{packages: []declcfg.Package{{Name: pkg}},
		channels: []declcfg.Channel{{Package: pkg, Name: "stable", Entries: []declcfg.ChannelEntry{
			{Name: "test-package.v2.0.0"},
			{Name: "test-package.v2.1.0", Replaces: "test-package.v2.0.0"},
			{Name: "test-package.v2.2.0", Replaces: "test-package.v2.1.0", Skips: []string{"test-package.v2.0.0+1"}},
			{Name: "test-package.v2.2.1"},
			{Name: "test-package.v2.3.0", Replaces: "test-package.v2.2.0", Skips: []string{"test-package.v2.2.1"}},
			{Name: "test-package.v2.4.0", SkipRange: ">=2.3.0 <2.4.0"},
		}}}}
	for _, v := range []string{"2.0.0", "2.0.0+1", "2.1.0", "2.2.0", "2.2.1", "2.3.0", "2.4.0"} {
		f.bundles = append(f.bundles, genBundle(pkg, v))
	}
	cat := catalogOf(t, "c", 0, f)
	r := newResolver(t, cat)
	p := cat.Package(pkg)
	rel := func(s string) *string { return &s }
	for _, tc := range []struct {
		name      string
		installed Installed
		want      []string
	}{
		{"respect replaces directive from catalog", Installed{Name: "test-package.v2.0.0", Version: "2.0.0"}, []string{"2.0.0", "2.1.0"}},
		{"respect skips directive from catalog", Installed{Name: "test-package.v2.2.1", Version: "2.2.1"}, []string{"2.2.1", "2.3.0"}},
		{"respect skipRange directive from catalog", Installed{Name: "test-package.v2.3.0", Version: "2.3.0"}, []string{"2.3.0", "2.4.0"}},
		// 2.0.0+1 is 2.0.0 release 1: not 2.0.0, which 2.1.0 replaces.
		{"installed bundle matcher is exact", Installed{Name: "test-package.v2.0.0+1", Version: "2.0.0+1"}, []string{"2.0.0+1", "2.2.0"}},
		{"installed bundle not found", Installed{Name: "test-package.v9.0.0", Version: "9.0.0"}, nil},
		{"explicit release field - non-empty", Installed{Name: "test-package.v1.0.0", Version: "1.0.0", Release: rel("2")}, nil},
		{"explicit empty release with build metadata preserves build metadata", Installed{Name: "test-package.v1.0.0+git", Version: "1.0.0+git", Release: rel("")}, nil},
	} {
		succ, err := r.successors(tc.installed, p.Channels)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, b := range p.Bundles {
			if succ(b) {
				got = append(got, b.Version)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}

	// TestLegacySuccessor: replaces, skips and skipRange name 0.0.1; 0.0.3
	// replaces 0.0.2, not the installed bundle.
	legacy := fbc{packages: []declcfg.Package{{Name: "package1"}},
		channels: []declcfg.Channel{{Package: "package1", Name: "c", Entries: []declcfg.ChannelEntry{
			{Name: "package1.v0.0.2", Replaces: "package1.v0.0.1"},
			{Name: "package1.v0.0.3", Replaces: "package1.v0.0.2"},
			{Name: "package1.v0.0.4", Skips: []string{"package1.v0.0.1"}},
			{Name: "package1.v0.0.5", SkipRange: "<=0.0.1"},
		}}}}
	for _, v := range []string{"0.0.2", "0.0.3", "0.0.4", "0.0.5"} {
		legacy.bundles = append(legacy.bundles, genBundle("package1", v))
	}
	lc := catalogOf(t, "c", 0, legacy)
	succ, err := newResolver(t, lc).successors(Installed{Name: "package1.v0.0.1", Version: "0.0.1"}, lc.Package("package1").Channels)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range lc.Package("package1").Bundles {
		if want := b.Version != "0.0.3"; succ(b) != want {
			t.Errorf("%s: successor %v, want %v", b.Name, succ(b), want)
		}
	}

	// TestParseInstalledBundleVersionRelease_Errors, TestSuccessorsOf_Errors.
	for _, tc := range []struct {
		in   Installed
		want string
	}{
		{Installed{Name: "test", Version: "invalid-version"}, "failed to get version and release"},
		{Installed{Name: "test", Version: "invalid-version", Release: rel("1")}, "failed to parse installed bundle version"},
		{Installed{Name: "test", Version: "1.0.0", Release: rel("001")}, "failed to parse installed bundle version and release"},
	} {
		if _, err := r.successors(tc.in, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestVersionRange restates TestNewVersionRange (catalogmetadata/compare)
// and adds Masterminds' syntax a ClusterExtension may use.
func TestVersionRange(t *testing.T) {
	for _, tc := range []struct {
		rng, version string
		want         bool
	}{
		{"1.0.0+1", "1.0.0", true},
		{"1.0.0+1", "1.0.0+2", true},
		{"1.0.0+1", "1.0.0+1", true},
		{"1.0.0", "1.0.0", true},
		{"1.0.0", "1.0.0+1", true},
		{">=2.0.0", "1.0.0", false},
		{">=1.0.0 <2.0.0", "1.5.0", true},
		{">=1.0.0, <2.0.0", "2.0.0", false},
		{"~1.2", "1.2.9", true},
		{"~1.2", "1.3.0", false},
		{"^1.2", "1.9.0", true},
		{"1.x || >=3.0.0", "2.0.0", false},
		{"1.x || >=3.0.0", "3.1.0", true},
		// A pre-release matches only a range that names one.
		{">=1.0.0", "1.1.0-alpha", false},
		{">=1.1.0-0", "1.1.0-alpha", true},
	} {
		r, err := NewVersionRange(tc.rng)
		if err != nil {
			t.Fatalf("%q: %v", tc.rng, err)
		}
		if got := r.Contains(semver.MustParse(tc.version)); got != tc.want {
			t.Errorf("%q contains %s: got %v, want %v", tc.rng, tc.version, got, tc.want)
		}
	}
	if _, err := NewVersionRange("not-a-valid-version"); err == nil {
		t.Error("an invalid range parses")
	}
}

// TestVersionRelease restates bundleutil's TestGetVersionAndRelease (with
// and without the BundleReleaseSupport gate) and compare's
// TestByVersionAndRelease.
func TestVersionRelease(t *testing.T) {
	rel := func(s string) *string { return &s }
	for _, tc := range []struct {
		version  string
		release  *string
		gate     bool
		want     string // version, "+" and release as String writes it
		wantRel  string
		wantFail bool
	}{
		{"1.0.0-pre+1.alpha.2", nil, false, "1.0.0-pre+1.alpha.2", "1.alpha.2", false},
		{"abcd", nil, false, "", "", true},
		// Build metadata with a leading zero is no release: the version keeps it.
		{"1.0.0+001", nil, false, "1.0.0+001", "", false},
		{"1.0.0+ignored", rel("2"), true, "1.0.0+2", "2", false},
		{"2.1.0", rel("1.alpha.3"), true, "2.1.0+1.alpha.3", "1.alpha.3", false},
		{"1.0.0", rel("001"), true, "", "", true},
		{"1.0.0+2", rel(""), true, "1.0.0+2", "", false},
		// Without the gate, the release field is ignored.
		{"1.0.0+2", rel("999"), false, "1.0.0+2", "2", false},
	} {
		vr, err := bundleVersionRelease(tc.version, tc.release, tc.gate)
		if tc.wantFail {
			if err == nil {
				t.Errorf("%s: no error", tc.version)
			}
			continue
		}
		if err != nil || vr.String() != tc.want || vr.Release.String() != tc.wantRel {
			t.Errorf("%s (release %v, gate %v): got %s release %q, %v; want %s release %q", tc.version, tc.release, tc.gate, vr, vr.Release, err, tc.want, tc.wantRel)
		}
	}

	// ByVersionAndRelease: highest first, a release above none.
	order := []string{"1.0.0", "1.0.0-alpha+2", "1.0.0-alpha+1", "0.0.1"}
	var cands []candidate
	for _, v := range []string{"1.0.0-alpha+1", "0.0.1", "1.0.0-alpha+2", "1.0.0"} {
		vr, err := bundleVersionRelease(v, nil, false)
		cands = append(cands, candidate{b: &Bundle{Version: v}, vr: vr, err: err})
	}
	cands = append(cands, candidate{b: &Bundle{}, err: errors.New("no version")})
	slices.SortStableFunc(cands, compareCandidates)
	for i, v := range order {
		if cands[i].b.Version != v {
			t.Fatalf("order %d: got %s, want %s", i, cands[i].b.Version, v)
		}
	}
	if cands[4].err == nil {
		t.Error("a bundle without a version does not sort last")
	}
}

// TestEqualVersionsCacheFileOrder: among candidates of equal version and
// release, operator-controller v1.11.0 picks the first in the order its
// catalog client read the package's cached files (PACKAGE/olm.bundle/
// NAME.json, walked in the order of their names) on one CPU, whatever the
// order of the catalog's blobs. Each case is what its CatalogResolver
// answered, through its real filesystem cache and catalog client, under
// taskset -c 0 (three runs each, the blobs in the order given and
// reversed): rel.v1.0.0+001.json comes before rel.v1.0.0.json ('+' before
// '.'), so the bundle-name order (rel.v1.0.0 first) is not its answer; a
// name with a slash is a file in a subdirectory, walked where the
// directory's name sorts. (Build metadata with a leading zero is no
// release: 1.0.0+001, +002 and +003 equal 1.0.0.)
func TestEqualVersionsCacheFileOrder(t *testing.T) {
	for _, tc := range []struct {
		bundles [][2]string // name, version, in the catalog's order
		want    string
	}{
		{[][2]string{{"rel.v1.0.0", "1.0.0"}, {"rel.v1.0.0+001", "1.0.0+001"}}, "rel.v1.0.0+001"},
		{[][2]string{{"rel.v1.0.0.y", "1.0.0+003"}, {"rel.v1.0.0", "1.0.0"}, {"rel.v1.0.0-x", "1.0.0+002"}, {"rel.v1.0.0+001", "1.0.0+001"}}, "rel.v1.0.0+001"},
		{[][2]string{{"rel.b", "1.0.0+001"}, {"rel", "1.0.0+002"}, {"rel/a", "1.0.0+003"}}, "rel/a"},
		{[][2]string{{"rel.b", "1.0.0+001"}, {"rel.json.x", "1.0.0+002"}, {"rel/a", "1.0.0+003"}}, "rel/a"},
	} {
		for _, reversed := range []bool{false, true} {
			f := fbc{packages: []declcfg.Package{{Name: "rel", DefaultChannel: "stable"}}}
			ch := declcfg.Channel{Package: "rel", Name: "stable"}
			for _, b := range tc.bundles {
				ch.Entries = append(ch.Entries, declcfg.ChannelEntry{Name: b[0]})
				f.bundles = append(f.bundles, declcfg.Bundle{Package: "rel", Name: b[0], Properties: []property.Property{pkgProp("rel", b[1])}})
			}
			if reversed {
				slices.Reverse(f.bundles)
			}
			f.channels = []declcfg.Channel{ch}
			r := newResolver(t, catalogOf(t, "c", 0, f))
			a, err := r.Resolve(Spec{Package: "rel", UpgradeConstraintPolicy: CatalogProvided}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !a.Resolved || a.Bundle.Name != tc.want {
				t.Errorf("%v (reversed %v): got %+v (error %q), want %s", tc.bundles, reversed, a.Bundle, a.Error, tc.want)
			}
		}
	}
}

// TestPath follows OLM v1 from 0.1.0 in genPackage: 1.0.2 (the highest
// successor not deprecated), then 2.0.0, whose skipRange covers 1.0.2;
// 2.0.0 has no successor outside gamma, which no entry links.
func TestPath(t *testing.T) {
	r := newResolver(t, catalogOf(t, "c", 0, genPackage("pkg")))
	steps, end, err := r.Path(Spec{Package: "pkg"}, Installed{Name: "pkg.v0.1.0", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range steps {
		got = append(got, s.To)
	}
	if want := []string{"pkg.v1.0.2", "pkg.v2.0.0", "pkg.v3.0.0"}; !slices.Equal(got, want) {
		t.Fatalf("path %v, want %v", got, want)
	}
	if !end.Resolved || end.Bundle.Name != "pkg.v3.0.0" {
		t.Errorf("end: %+v", end)
	}
}

// TestFindInstalledAsMetadataFor: an installed bundle of the catalog is
// what operator-controller records in status.install.bundle
// (bundleutil.MetadataFor), which its resolver's errors quote. Without the
// BundleReleaseSupport gate the version carries the release as build
// metadata; with it the version loses a release read from build metadata
// and the release is apart. Found by hack/olmv1diff against
// operator-controller v1.11.0: with the gate, from "1.0.0+3" it says
// `error upgrading from currently installed version "1.0.0"`.
func TestFindInstalledAsMetadataFor(t *testing.T) {
	const pkg = "rel"
	relProp := func(version, release string) property.Property {
		return property.Property{Type: property.TypePackage, Value: json.RawMessage(fmt.Sprintf(`{"packageName":%q,"version":%q,"release":%q}`, pkg, version, release))}
	}
	f := fbc{packages: []declcfg.Package{{Name: pkg}},
		channels: []declcfg.Channel{{Package: pkg, Name: "fast", Entries: []declcfg.ChannelEntry{{Name: "rel.v1.0.0-b3"}}}},
		bundles: []declcfg.Bundle{
			{Package: pkg, Name: "rel.v1.0.0-b3", Properties: []property.Property{pkgProp(pkg, "1.0.0+3")}},
			{Package: pkg, Name: "rel.v1.0.0-bx", Properties: []property.Property{pkgProp(pkg, "1.0.0+build.x")}},
			{Package: pkg, Name: "rel.v1.0.0-b01", Properties: []property.Property{pkgProp(pkg, "1.0.0+01")}},
			{Package: pkg, Name: "rel-v1.0.0-2", Properties: []property.Property{relProp("1.0.0", "2")}},
			{Package: pkg, Name: "rel.v1.1.0", Properties: []property.Property{relProp("1.1.0+build.7", "")}},
		}}
	cat := catalogOf(t, "c", 0, f)
	rel := func(s string) *string { return &s }
	for _, tc := range []struct {
		gate         bool
		from         string
		version      string
		release      *string
		versionError string
	}{
		{false, "rel.v1.0.0-b3", "1.0.0+3", nil, "1.0.0+3"},
		{true, "rel.v1.0.0-b3", "1.0.0", rel("3"), "1.0.0"},
		{true, "rel.v1.0.0-bx", "1.0.0", rel("build.x"), "1.0.0"},
		// Build metadata that is no release ("01": a leading zero) stays.
		{true, "rel.v1.0.0-b01", "1.0.0+01", nil, "1.0.0+01"},
		{false, "rel-v1.0.0-2", "1.0.0", nil, "1.0.0"},
		{true, "rel-v1.0.0-2", "1.0.0", rel("2"), "1.0.0"},
		{true, "rel.v1.1.0", "1.1.0+build.7", rel(""), "1.1.0+build.7"},
	} {
		r, err := NewResolver(Options{BundleReleaseSupport: tc.gate}, cat)
		if err != nil {
			t.Fatal(err)
		}
		in, err := r.FindInstalled(pkg, tc.from, "")
		if err != nil {
			t.Fatal(err)
		}
		if in.Version != tc.version || (in.Release == nil) != (tc.release == nil) || (in.Release != nil && *in.Release != *tc.release) {
			t.Errorf("gate %v, %s: installed %s release %v, want %s release %v", tc.gate, tc.from, in.Version, in.Release, tc.version, tc.release)
		}
		a, err := r.Resolve(Spec{Package: pkg, Channels: []string{"none"}}, in)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`error upgrading from currently installed version %q: no bundles found for package "rel" in channels [none]`, tc.versionError)
		if a.Error != want {
			t.Errorf("gate %v, %s: error %q, want %q", tc.gate, tc.from, a.Error, want)
		}
	}
}

// TestFindInstalledErrors: an installed version the package lacks, and a
// package no catalog has, are told apart, the latter with a near name.
func TestFindInstalledErrors(t *testing.T) {
	const pkg = "rel"
	f := fbc{packages: []declcfg.Package{{Name: pkg}},
		channels: []declcfg.Channel{{Package: pkg, Name: "fast", Entries: []declcfg.ChannelEntry{{Name: "rel.v1.0.0"}}}},
		bundles:  []declcfg.Bundle{{Package: pkg, Name: "rel.v1.0.0", Properties: []property.Property{pkgProp(pkg, "1.0.0")}}}}
	r, err := NewResolver(Options{}, catalogOf(t, "c", 0, f))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ pkg, from, want string }{
		{pkg, "2.0.0", `no bundle of package "rel" has version 2.0.0: name the installed bundle (OLM v1 matches replaces and skips by name)`},
		{"rell", "1.0.0", `package "rell" is in none of the catalogs; did you mean rel?`},
		{"other", "1.0.0", `package "other" is in none of the catalogs`},
	} {
		if _, err := r.FindInstalled(tc.pkg, tc.from, ""); err == nil || err.Error() != tc.want {
			t.Errorf("%s %s: %v, want %s", tc.pkg, tc.from, err, tc.want)
		}
	}
}
