package install

import (
	"context"
	"slices"
	"strings"
	"testing"
)

type tcat struct {
	name     string
	priority int
	fbc      *fbc
}

type resolveCase struct {
	name     string
	catalogs []tcat
	sub      Subscription
	status   Status
	// installs are catalog/channel/bundle, in any order.
	installs []string
	// root is the subscription's bundle (catalog/channel/bundle).
	root string
	// contains are substrings of the error, the reasons or the
	// constraints.
	contains []string
}

func runCases(t *testing.T, cases []resolveCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cats []*Catalog
			for _, c := range tc.catalogs {
				if c.fbc.invalid {
					cats = append(cats, c.fbc.loadInvalid(t, c.name, c.priority))
					continue
				}
				cats = append(cats, c.fbc.load(t, c.name, c.priority))
			}
			r, err := NewResolver(cats...)
			if err != nil {
				t.Fatal(err)
			}
			a, err := r.Resolve(context.Background(), tc.sub)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, in := range a.Installs {
				got = append(got, in.Catalog+"/"+in.Channel+"/"+in.Bundle)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.installs))
			text := a.Error + "\n" + strings.Join(a.Reasons, "\n") + "\n" + strings.Join(a.Constraints, "\n")
			if a.Status != tc.status || !slices.Equal(got, want) {
				t.Errorf("%s, installs %v; want %s, %v\n%s", a.Status, got, tc.status, want, text)
			}
			if tc.root != "" && (a.Tree == nil || a.Tree.Catalog+"/"+a.Tree.Channel+"/"+a.Tree.Bundle != tc.root) {
				t.Errorf("root %+v, want %s", a.Tree, tc.root)
			}
			for _, s := range tc.contains {
				if !strings.Contains(text, s) {
					t.Errorf("answer lacks %q:\n%s", s, text)
				}
			}
		})
	}
}

// TestResolveOLMCases restates the cases of OLM's resolver tests
// (operator-lifecycle-manager v0.46.0,
// pkg/controller/registry/resolver/resolver_test.go) that are about a new
// subscription, as file-based catalogs. Their entries have no default
// channel; a file-based catalog's package always has one, which is the
// only channel in most of these cases.
func TestResolveOLMCases(t *testing.T) {
	const g, v, k = "g", "v", "k"
	runCases(t, []resolveCase{
		{
			name: "TestSolveOperators: a new subscription installs its channel's bundle",
			catalogs: []tcat{{"test-catalog", 0, newFBC().
				pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1").bundle("test-package", "test-package.v1", "0.0.1").
				pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1").bundle("another-package", "another-package.v1", "1.0.1")}},
			sub:      Subscription{Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"test-catalog/alpha/another-package.v1"},
		},
		{
			name: "TestSolveOperators_WithSystemConstraints (none): a required API from the first provider by package name",
			catalogs: []tcat{{"test-catalog", 0, newFBC().
				pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1").bundle("test-package", "test-package.v1", "0.0.1", needGVK(g, v, k)).
				pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1").bundle("another-package", "another-package.v1", "1.0.0", gvk(g, v, k)).
				pkg("package-c", "alpha").channel("package-c", "alpha", "package-c.v1").bundle("package-c", "package-c.v1", "1.0.0", gvk(g, v, k)).
				pkg("package-d", "alpha").channel("package-d", "alpha", "package-d.v1").bundle("package-d", "package-d.v1", "1.0.0")}},
			sub:      Subscription{Package: "test-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"test-catalog/alpha/test-package.v1", "test-catalog/alpha/another-package.v1"},
		},
		{
			name: "TestDisjointChannelGraph: two replaces chains in the subscription's channel",
			catalogs: []tcat{{"test-catalog", 0, newFBC().
				pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.side1.v1", "test-package.side1.v2<test-package.side1.v1", "test-package.side2.v1", "test-package.side2.v2<test-package.side2.v1").
				bundle("test-package", "test-package.side1.v1", "0.0.1").bundle("test-package", "test-package.side1.v2", "0.0.2").
				bundle("test-package", "test-package.side2.v1", "1.0.0").bundle("test-package", "test-package.side2.v2", "2.0.0").refusedByOpm()}},
			sub:      Subscription{Package: "test-package", Channel: "alpha"},
			status:   Failed,
			contains: []string{`a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "alpha" of package "test-package": test-package.side1.v2...test-package.side1.v1, test-package.side2.v2...test-package.side2.v1`},
		},
		{
			name: "TestSolveOperators_MultipleChannels: the subscription's channel",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("another-package", "beta").channel("another-package", "alpha", "another-package.v1").channel("another-package", "beta", "another-package.v1").
				bundle("another-package", "another-package.v1", "1.0.0")}},
			sub:      Subscription{Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1"},
		},
		{
			name: "TestSolveOperators_FindLatestVersion: the channel head",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v0.9.0", "another-package.v1.0.0<another-package.v0.9.0", "another-package.v1.0.1<another-package.v1.0.0").
				bundle("another-package", "another-package.v0.9.0", "0.9.0").bundle("another-package", "another-package.v1.0.0", "1.0.0").bundle("another-package", "another-package.v1.0.1", "1.0.1")}},
			sub:      Subscription{Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1.0.1"},
		},
		{
			name:     "TestSolveOperators_FindLatestVersionWithDependencies: the newest bundle in each range",
			catalogs: []tcat{{"community", 0, latestWithDeps(false)}},
			sub:      Subscription{Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1.0.1", "community/alpha/package-c.v1.0.1", "community/alpha/package-d.v1.0.1"},
		},
		{
			name:     "TestSolveOperators_FindLatestVersionWithNestedDependencies",
			catalogs: []tcat{{"community", 0, latestWithDeps(true)}},
			sub:      Subscription{Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1.0.1", "community/alpha/package-c.v1.0.1", "community/alpha/package-d.v1.0.1", "community/alpha/package-e.v1.0.1"},
		},
		{
			name: "TestSolveOperators_CatsrcPrioritySorting: a higher priority catalog first",
			catalogs: []tcat{
				{"community", 0, newFBC().pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1").bundle("test-package", "test-package.v1", "0.0.1", needPkg("another-package", "0.0.1"))},
				{"community-operator", 0, anotherPackage()},
				{"high-priority-operator", 100, anotherPackage()},
			},
			sub:      Subscription{Package: "test-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/test-package.v1", "high-priority-operator/alpha/another-package.v1"},
		},
		{
			name: "TestSolveOperators_CatsrcPrioritySorting: same priority, by name",
			catalogs: []tcat{
				{"community", 0, newFBC().pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1").bundle("test-package", "test-package.v1", "0.0.1", needPkg("another-package", "0.0.1"))},
				{"high-priority-operator", 100, anotherPackage()},
				{"community-operator", 100, anotherPackage()},
			},
			sub:      Subscription{Package: "test-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/test-package.v1", "community-operator/alpha/another-package.v1"},
		},
		{
			name: "TestSolveOperators_CatsrcPrioritySorting: the dependent's own catalog first",
			catalogs: []tcat{
				{"community", 0, newFBC().pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1").bundle("test-package", "test-package.v1", "0.0.1", needPkg("another-package", "0.0.1")).
					pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1").bundle("another-package", "another-package.v1", "0.0.1")},
				{"high-priority-operator", 100, anotherPackage()},
				{"community-operator", 100, anotherPackage()},
			},
			sub:      Subscription{Package: "test-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/test-package.v1", "community/alpha/another-package.v1"},
		},
		{
			name: "TestSolveOperators_WithPackageDependencies",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1").bundle("another-package", "another-package.v1", "1.0.0", needPkg("package-c", "0.1.0")).
				pkg("package-c", "alpha").channel("package-c", "alpha", "package-c.v1").bundle("package-c", "package-c.v1", "0.1.0")}},
			sub:      Subscription{Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1", "community/alpha/package-c.v1"},
		},
		{
			name: "TestSolveOperators_WithGVKDependencies",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1").bundle("test-package", "test-package.v1", "0.0.1").
				pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1").bundle("another-package", "another-package.v1", "1.0.0", needGVK(g, v, k)).
				pkg("package-c", "alpha").channel("package-c", "alpha", "package-c.v1").bundle("package-c", "package-c.v1", "0.1.0", gvk(g, v, k))}},
			sub:      Subscription{Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1", "community/alpha/package-c.v1"},
		},
		{
			name: "TestSolveOperators_WithLabelDependencies: olm.label.required and olm.label",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("test-package", "alpha").channel("test-package", "alpha", "test-package").bundle("test-package", "test-package", "0.0.1", prop{"olm.label.required", `{"label":"lts"}`}).
				pkg("another-package", "beta").channel("another-package", "beta", "another-package.v1").bundle("another-package", "another-package.v1", "1.0.0", prop{"olm.label", `{"label":"lts"}`})}},
			sub:      Subscription{Package: "test-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/test-package", "community/beta/another-package.v1"},
		},
		{
			name: "TestSolveOperators_WithUnsatisfiableLabelDependencies",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("test-package", "alpha").channel("test-package", "alpha", "test-package").bundle("test-package", "test-package", "0.0.1", prop{"olm.label.required", `{"label":"lts"}`}).
				pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1").bundle("another-package", "another-package.v1", "1.0.0")}},
			sub:      Subscription{Package: "test-package", Channel: "alpha"},
			status:   Unsatisfiable,
			contains: []string{"test-package requires label lts; no bundle in the catalogs meets it", "bundle test-package requires an operator with label: lts"},
		},
		{
			name: "TestSolveOperators_WithNestedGVKDependencies: the dependent's catalog first, transitively",
			catalogs: []tcat{
				{"community", 0, newFBC().
					pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1.0.1").bundle("test-package", "test-package.v1.0.1", "1.0.1").
					pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1.0.0", "another-package.v1.0.1<another-package.v1.0.0").
					bundle("another-package", "another-package.v1.0.0", "1.0.0", needGVK(g, v, k)).bundle("another-package", "another-package.v1.0.1", "1.0.1", needGVK(g, v, k)).
					pkg("package-c", "alpha").channel("package-c", "alpha", "package-c.v1.0.0", "package-c.v1.0.1<package-c.v1.0.0").
					bundle("package-c", "package-c.v1.0.0", "1.0.0", gvk(g, v, k), needGVK("g2", "v2", "k2")).bundle("package-c", "package-c.v1.0.1", "1.0.1", gvk(g, v, k), needGVK("g2", "v2", "k2")).
					pkg("package-d", "alpha").channel("package-d", "alpha", "package-d.v1.0.1").bundle("package-d", "package-d.v1.0.1", "1.0.1", gvk("g2", "v2", "k2"), needGVK("g2", "v2", "k2"))},
				{"certified", 0, newFBC().
					pkg("package-c", "alpha").channel("package-c", "alpha", "package-c.v1.0.0", "package-c.v1.0.1<package-c.v1.0.0").
					bundle("package-c", "package-c.v1.0.0", "1.0.0", gvk(g, v, k), needGVK("g2", "v2", "k2")).bundle("package-c", "package-c.v1.0.1", "1.0.1", gvk(g, v, k), needGVK("g2", "v2", "k2")).
					pkg("package-d", "alpha").channel("package-d", "alpha", "package-d.v1.0.1").bundle("package-d", "package-d.v1.0.1", "1.0.1", gvk("g2", "v2", "k2"))},
			},
			sub:      Subscription{Catalog: "community", Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1.0.1", "community/alpha/package-c.v1.0.1", "community/alpha/package-d.v1.0.1"},
		},
		{
			name: "TestSolveOperators_OLMConstraint_CompoundAll",
			catalogs: []tcat{{"community", 0, compoundCatalog(`{"failureMessage": "all constraint",
				"all": {"constraints": [
					{"package": {"packageName": "foo", "versionRange": ">=1.0.0"}},
					{"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
					{"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}}`,
				[]prop{gvk("g1", "v1", "k1"), gvk("g2", "v2", "k2"), gvk("g3", "v3", "k3")},
				[]prop{gvk("g2", "v2", "k2"), gvk("g3", "v3", "k3")},
				[]prop{gvk("g1", "v1", "k1"), gvk("g2", "v2", "k2"), gvk("g3", "v3", "k3")})}},
			sub:      Subscription{Package: "bar", Channel: "stable"},
			status:   Installable,
			installs: []string{"community/stable/bar.v1.0.0", "community/stable/foo.v1.0.1"},
		},
		{
			name: "TestSolveOperators_OLMConstraint_CompoundAny",
			catalogs: []tcat{{"community", 0, compoundCatalog(`{"failureMessage": "any constraint",
				"any": {"constraints": [
					{"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
					{"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}}`,
				[]prop{gvk("g0", "v0", "k0")},
				[]prop{gvk("g1", "v1", "k1"), gvk("g2", "v2", "k2")},
				[]prop{gvk("g1", "v1", "k1"), gvk("g2", "v2", "k2"), gvk("g3", "v3", "k3")})}},
			sub:      Subscription{Package: "bar", Channel: "stable"},
			status:   Installable,
			installs: []string{"community/stable/bar.v1.0.0", "community/stable/foo.v1.0.1"},
		},
		{
			name: "TestSolveOperators_OLMConstraint_CompoundNot",
			catalogs: []tcat{{"community", 0, compoundCatalog(`{"failureMessage": "compound not constraint",
				"all": {"constraints": [
					{"gvk": {"group": "g0", "version": "v0", "kind": "k0"}},
					{"not": {"constraints": [
						{"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
						{"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}}]}}`,
				[]prop{gvk("g0", "v0", "k0")},
				[]prop{gvk("g0", "v0", "k0"), gvk("g1", "v1", "k1"), gvk("g2", "v2", "k2")},
				[]prop{gvk("g0", "v0", "k0"), gvk("g1", "v1", "k1"), gvk("g2", "v2", "k2"), gvk("g3", "v3", "k3")})}},
			sub:      Subscription{Package: "bar", Channel: "stable"},
			status:   Installable,
			installs: []string{"community/stable/bar.v1.0.0", "community/stable/foo.v0.99.0"},
		},
		{
			name: "TestSolveOperators_OLMConstraint_Unknown",
			catalogs: []tcat{{"community", 0, newFBC().pkg("bar", "stable").channel("bar", "stable", "bar.v1.0.0").
				bundle("bar", "bar.v1.0.0", "1.0.0", constraintProp(`{"failureMessage": "unknown constraint", "unknown": {"foo": "bar"}}`))}},
			sub:      Subscription{Package: "bar", Channel: "stable"},
			status:   Failed,
			contains: []string{`json: unknown field "unknown"`},
		},
		{
			name: "TestSolveOperators_IgnoreUnsatisfiableDependencies: a candidate that fails is passed over for the next",
			catalogs: []tcat{
				{"community", 0, newFBC().
					pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1").bundle("another-package", "another-package.v1", "1.0.0", needPkg("package-c", "0.1.0")).
					pkg("package-c", "alpha").channel("package-c", "alpha", "package-c.v1").bundle("package-c", "package-c.v1", "0.1.0", needPkg("package-d", "0.1.0"))},
				{"certified", 0, newFBC().
					pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1").bundle("another-package", "another-package.v1", "1.0.0", needPkg("package-c", "0.1.0")).
					pkg("package-c", "alpha").channel("package-c", "alpha", "package-c.v1").bundle("package-c", "package-c.v1", "0.1.0")},
			},
			sub:      Subscription{Catalog: "community", Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1", "certified/alpha/package-c.v1"},
		},
		{
			name: "TestSolveOperators_PreferDefaultChannelInResolution: no channel, the default channel first",
			catalogs: []tcat{{"community", 0, newFBC().pkg("test-package", "stable").
				channel("test-package", "alpha", "test-package.v0.0.2").channel("test-package", "stable", "test-package.v0.0.1").
				bundle("test-package", "test-package.v0.0.2", "0.0.2", gvk(g, v, k)).bundle("test-package", "test-package.v0.0.1", "0.0.1", gvk(g, v, k))}},
			sub:      Subscription{Package: "test-package"},
			status:   Installable,
			installs: []string{"community/stable/test-package.v0.0.1"},
		},
		{
			name: "TestSolveOperators_PreferDefaultChannelInResolutionForTransitiveDependencies",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v0.0.1").bundle("test-package", "test-package.v0.0.1", "0.0.1", needGVK(g, v, k)).
				pkg("another-package", "stable").channel("another-package", "stable", "another-package.v0.0.1").channel("another-package", "alpha", "another-package.v0.0.2").
				bundle("another-package", "another-package.v0.0.1", "0.0.1", gvk(g, v, k)).bundle("another-package", "another-package.v0.0.2", "0.0.2", gvk(g, v, k))}},
			sub:      Subscription{Package: "test-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"community/alpha/test-package.v0.0.1", "community/stable/another-package.v0.0.1"},
		},
		{
			name: "TestSolveOperators_PackageCannotSelfSatisfy: one bundle per package",
			catalogs: []tcat{
				{"community", 0, newFBC().
					pkg("test-package", "stable").channel("test-package", "stable", "opA.v1.0.0").channel("test-package", "alpha", "opABC.v1.0.0").
					bundle("test-package", "opA.v1.0.0", "1.0.0", needGVK(g, v, k), needGVK("g2", v, k)).
					bundle("test-package", "opABC.v1.0.0", "1.0.1", gvk(g, v, k), gvk("g2", v, k)).
					pkg("another-package", "stable").channel("another-package", "stable", "opB.v1.0.0").channel("another-package", "alpha", "opD.v1.0.0").
					bundle("another-package", "opB.v1.0.0", "1.0.0", gvk(g, v, k)).bundle("another-package", "opD.v1.0.0", "1.0.1", gvk(g, v, k))},
				{"secondary", 0, newFBC().
					pkg("another-package", "stable").channel("another-package", "stable", "opC.v1.0.0").bundle("another-package", "opC.v1.0.0", "1.0.0", gvk("g2", v, k)).
					pkg("package-c", "stable").channel("package-c", "stable", "opE.v1.0.0").bundle("package-c", "opE.v1.0.0", "1.0.0", gvk("g2", v, k))},
			},
			sub:      Subscription{Catalog: "community", Package: "test-package", Channel: "stable"},
			status:   Installable,
			installs: []string{"community/stable/opA.v1.0.0", "community/stable/opB.v1.0.0", "secondary/stable/opE.v1.0.0"},
		},
		{
			name: "TestSolveOperators_WithoutDeprecated: an olm.deprecated bundle is never installed",
			catalogs: []tcat{{"catalog", 0, newFBC().pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1").
				bundle("test-package", "test-package.v1", "0.0.1", prop{"olm.deprecated", `{}`})}},
			sub:      Subscription{Package: "test-package", Channel: "alpha"},
			status:   Unsatisfiable,
			contains: []string{"test-package.v1 is deprecated", "bundle catalog/alpha/test-package.v1 is deprecated"},
		},
		{
			name: "TestSolveOperatorsWithDeprecatedInnerChannelEntry",
			catalogs: []tcat{{"catalog", 0, newFBC().pkg("a", "c").channel("a", "c", "a-1", "a-2<a-1", "a-3<a-2").
				bundle("a", "a-1", "1.0.0").bundle("a", "a-2", "2.0.0", prop{"olm.deprecated", `{}`}).bundle("a", "a-3", "3.0.0")}},
			sub:      Subscription{Package: "a", Channel: "c"},
			status:   Installable,
			installs: []string{"catalog/c/a-3"},
		},
		{
			name: "TestSolveOperators_WithSkipsAndStartingCSV: the starting bundle, its dependency from the head",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1", "another-package.v2|skips=another-package.v1").
				bundle("another-package", "another-package.v1", "1.0.0", needGVK(g, v, k)).bundle("another-package", "another-package.v2", "2.0.0", needGVK(g, v, k)).
				pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1", "test-package.v2<test-package.v1", "test-package.v3<test-package.v2",
				"test-package.v4<test-package.v3|skips=test-package.v3", "test-package.v5<test-package.v4|skips=test-package.v2,test-package.v3,test-package.v4", "test-package.v6<test-package.v5").
				bundle("test-package", "test-package.v1", "1.0.0", gvk(g, v, k)).bundle("test-package", "test-package.v2", "2.0.0", gvk(g, v, k)).
				bundle("test-package", "test-package.v3", "3.0.0", gvk(g, v, k)).bundle("test-package", "test-package.v4", "4.0.0", gvk(g, v, k)).
				bundle("test-package", "test-package.v5", "5.0.0", gvk(g, v, k)).bundle("test-package", "test-package.v6", "6.0.0", gvk(g, v, k)).refusedByOpm()}},
			sub: Subscription{Package: "another-package", Channel: "alpha", StartingCSV: "another-package.v1"},
			// The starting bundle, which v2 skips, and the dependency's head:
			// v1 to v5 are skipped or stranded (opm refuses this catalog).
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1", "community/alpha/test-package.v6"},
		},
		{
			name: "a starting bundle that another entry skips is installed all the same (the channel is ordered after the filter)",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1", "another-package.v2<another-package.v1|skips=another-package.v1").
				bundle("another-package", "another-package.v1", "1.0.0").bundle("another-package", "another-package.v2", "2.0.0")}},
			sub:      Subscription{Package: "another-package", Channel: "alpha", StartingCSV: "another-package.v1"},
			status:   Installable,
			installs: []string{"community/alpha/another-package.v1"},
		},
		{
			name: "TestSolveOperators_WithSkips: the head",
			catalogs: []tcat{{"test-catalog", 0, newFBC().pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1", "another-package.v2|skips=another-package.v1").
				bundle("another-package", "another-package.v1", "1.0.0").bundle("another-package", "another-package.v2", "2.0.0")}},
			sub:      Subscription{Package: "another-package", Channel: "alpha"},
			status:   Installable,
			installs: []string{"test-catalog/alpha/another-package.v2"},
		},
		{
			name: "TestSolveOperatorsWithSkipsPreventingSelection: a skipped bundle satisfies nothing",
			catalogs: []tcat{{"test-catalog", 0, newFBC().
				pkg("a", "channel").channel("a", "channel", "a-1").bundle("a", "a-1", "1.0.0", needGVK(g, v, k)).
				pkg("b", "channel").channel("b", "channel", "b-1", "b-2<b-1", "b-3<b-2|skips=b-1").
				bundle("b", "b-1", "1.0.0", gvk(g, v, k)).bundle("b", "b-2", "2.0.0").bundle("b", "b-3", "3.0.0")}},
			sub:      Subscription{Package: "a", Channel: "channel"},
			status:   Unsatisfiable,
			contains: []string{"a-1 requires GVK g/v/k; no bundle in the catalogs provides it"},
		},
		{
			name: "TestSolveOperators_GenericConstraint: satisfiable GVK (CEL)",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("test-package", "stable").channel("test-package", "stable", "opA.v1.0.0").bundle("test-package", "opA.v1.0.0", "1.0.0",
				constraintProp(`{"failureMessage":"gvk-constraint","cel":{"rule":"properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g', 'version': 'v', 'kind': 'k'})"}}`)).
				pkg("another-package", "stable").channel("another-package", "stable", "opB.v1.0.0").bundle("another-package", "opB.v1.0.0", "1.0.0", gvk(g, v, k))}},
			sub:      Subscription{Package: "test-package", Channel: "stable"},
			status:   Installable,
			installs: []string{"community/stable/opA.v1.0.0", "community/stable/opB.v1.0.0"},
		},
		{
			name: "TestSolveOperators_GenericConstraint: not satisfiable GVK (CEL)",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("test-package", "stable").channel("test-package", "stable", "opA.v1.0.0").bundle("test-package", "opA.v1.0.0", "1.0.0",
				constraintProp(`{"failureMessage":"gvk2-constraint","cel":{"rule":"properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g2', 'version': 'v', 'kind': 'k'})"}}`)).
				pkg("another-package", "stable").channel("another-package", "stable", "opB.v1.0.0").bundle("another-package", "opB.v1.0.0", "1.0.0", gvk(g, v, k))}},
			sub:      Subscription{Package: "test-package", Channel: "stable"},
			status:   Unsatisfiable,
			contains: []string{"gvk2-constraint"},
		},
		{
			name: "TestSolveOperators_GenericConstraint: package (CEL with semver_compare)",
			catalogs: []tcat{{"community", 0, newFBC().
				pkg("test-package", "stable").channel("test-package", "stable", "opA.v1.0.0").bundle("test-package", "opA.v1.0.0", "1.0.0",
				constraintProp(`{"failureMessage":"package-constraint","cel":{"rule":"properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'another-package' && (semver_compare(p.value.version, '1.0.1') == 0))"}}`)).
				pkg("another-package", "stable").channel("another-package", "stable", "opB.v1.0.0", "opB.v1.0.1<opB.v1.0.0", "opB.v1.0.2<opB.v1.0.1").
				bundle("another-package", "opB.v1.0.0", "1.0.0").bundle("another-package", "opB.v1.0.1", "1.0.1").bundle("another-package", "opB.v1.0.2", "1.0.2")}},
			sub:      Subscription{Package: "test-package", Channel: "stable"},
			status:   Installable,
			installs: []string{"community/stable/opA.v1.0.0", "community/stable/opB.v1.0.1"},
		},
	})
}

func latestWithDeps(nested bool) *fbc {
	var cDeps []prop
	if nested {
		cDeps = []prop{needPkg("package-e", "1.0.1")}
	}
	c := newFBC().
		pkg("test-package", "alpha").channel("test-package", "alpha", "test-package.v1.0.1").bundle("test-package", "test-package.v1.0.1", "1.0.1").
		pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v0.9.0", "another-package.v1.0.0<another-package.v0.9.0", "another-package.v1.0.1<another-package.v1.0.0").
		bundle("another-package", "another-package.v0.9.0", "0.9.0").bundle("another-package", "another-package.v1.0.0", "1.0.0").
		bundle("another-package", "another-package.v1.0.1", "1.0.1", needPkg("package-c", "1.0.1"), needPkg("package-d", "1.0.1")).
		pkg("package-c", "alpha").channel("package-c", "alpha", "package-c.v1.0.0", "package-c.v1.0.1<package-c.v1.0.0").
		bundle("package-c", "package-c.v1.0.0", "1.0.0", cDeps...).bundle("package-c", "package-c.v1.0.1", "1.0.1", cDeps...)
	if nested {
		return c.pkg("package-d", "alpha").channel("package-d", "alpha", "package-d.v1.0.1").bundle("package-d", "package-d.v1.0.1", "1.0.1").
			pkg("package-e", "alpha").channel("package-e", "alpha", "package-e.v1.0.0", "package-e.v1.0.1<package-e.v1.0.0").
			bundle("package-e", "package-e.v1.0.0", "1.0.0").bundle("package-e", "package-e.v1.0.1", "1.0.1")
	}
	return c.pkg("package-d", "alpha").channel("package-d", "alpha", "package-d.v1.0.0", "package-d.v1.0.1<package-d.v1.0.0", "package-d.v1.0.2<package-d.v1.0.1").
		bundle("package-d", "package-d.v1.0.0", "1.0.0").bundle("package-d", "package-d.v1.0.1", "1.0.1").bundle("package-d", "package-d.v1.0.2", "1.0.2")
}

func anotherPackage() *fbc {
	return newFBC().pkg("another-package", "alpha").channel("another-package", "alpha", "another-package.v1").bundle("another-package", "another-package.v1", "0.0.1")
}

// compoundCatalog is the catalog of OLM's compound constraint cases: bar
// with the constraint, and foo's chain v0.99.0 ← v1.0.0 ← v1.0.1 with the
// properties given.
func compoundCatalog(constraint string, v0990, v100, v101 []prop) *fbc {
	return newFBC().
		pkg("bar", "stable").channel("bar", "stable", "bar.v1.0.0").bundle("bar", "bar.v1.0.0", "1.0.0", constraintProp(constraint)).
		pkg("foo", "stable").channel("foo", "stable", "foo.v0.99.0", "foo.v1.0.0<foo.v0.99.0", "foo.v1.0.1<foo.v1.0.0").
		bundle("foo", "foo.v0.99.0", "0.99.0", v0990...).bundle("foo", "foo.v1.0.0", "1.0.0", v100...).bundle("foo", "foo.v1.0.1", "1.0.1", v101...)
}

// TestSortChannel restates OLM's TestSortChannel.
func TestSortChannel(t *testing.T) {
	mk := func(specs ...entry) []*Entry {
		var out []*Entry
		for _, s := range specs {
			m := s.blob()
			e := &Entry{Bundle: &Bundle{Name: m["name"].(string), Package: "package"}, Channel: "channel"}
			if r, ok := m["replaces"].(string); ok {
				e.Replaces = r
			}
			if sk, ok := m["skips"].([]string); ok {
				e.Skips = sk
			}
			out = append(out, e)
		}
		return out
	}
	names := func(es []*Entry) []string {
		var s []string
		for _, e := range es {
			s = append(s, e.Name())
		}
		return s
	}
	for _, tc := range []struct {
		name string
		in   []*Entry
		out  []string
		err  string
	}{
		{name: "wrinkle-free", in: mk("b", "a<b"), out: []string{"a", "b"}},
		{name: "empty"},
		{name: "replacement cycle", in: mk("a<b", "b<a"), err: `no channel heads (entries not replaced by another entry) found in channel "channel" of package "package"`},
		{name: "replacement cycle from a head", in: mk("a<b", "b<c", "c<b"), err: `a cycle exists in the chain of replacement beginning with "a" in channel "channel" of package "package"`},
		{name: "skipped and replaced entry omitted", in: mk("a<b|skips=b", "b"), out: []string{"a"}},
		{name: "skipped entry omitted", in: mk("a<b|skips=c", "b<c", "c"), out: []string{"a", "b"}},
		{name: "two replaces chains", in: mk("a", "b<c", "c"),
			err: `a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "channel" of package "package": a, b...c`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := sortChannel(tc.in)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(out); !slices.Equal(got, tc.out) {
				t.Errorf("order %v, want %v", got, tc.out)
			}
		})
	}
}

// TestSubscriptionNotFound: a package, channel or starting bundle the
// catalog does not have is OLM's "no operators found ..." (unsatisfiable,
// its words kept among the constraints); the reason says what is missing
// in words, suggesting a near name, or the catalog that has the package.
func TestSubscriptionNotFound(t *testing.T) {
	etcd := func() *fbc {
		return newFBC().pkg("etcd", "stable").
			channel("etcd", "stable", "etcdoperator.v0.9.0", "etcdoperator.v0.9.2<etcdoperator.v0.9.0").
			channel("etcd", "alpha", "etcdoperator.v0.9.2").
			bundle("etcd", "etcdoperator.v0.9.0", "0.9.0").bundle("etcd", "etcdoperator.v0.9.2", "0.9.2")
	}
	other := newFBC().pkg("other", "stable").channel("other", "stable", "other.v1").bundle("other", "other.v1", "1.0.0")
	one := []tcat{{"community", 0, etcd()}}
	runCases(t, []resolveCase{
		{name: "a misspelt package", catalogs: one, sub: Subscription{Package: "ectd"}, status: Unsatisfiable, contains: []string{
			"no operators found in package ectd in the catalog referenced by subscription ectd",
			`package "ectd" is not in catalog community; did you mean etcd?`,
		}},
		{name: "a package far from any", catalogs: one, sub: Subscription{Package: "zookeeper"}, status: Unsatisfiable, contains: []string{
			`package "zookeeper" is not in catalog community` + "\n",
		}},
		{name: "a package of another catalog", catalogs: []tcat{{"mine", 0, other}, {"community", 0, etcd()}}, sub: Subscription{Catalog: "mine", Package: "etcd"},
			status: Unsatisfiable, contains: []string{
				`package "etcd" is not in catalog mine (catalog community has it: --source names the Subscription's catalog)`,
			}},
		{name: "a misspelt channel", catalogs: one, sub: Subscription{Package: "etcd", Channel: "stabel"}, status: Unsatisfiable, contains: []string{
			"no operators found in channel stabel of package etcd in the catalog referenced by subscription etcd",
			`package etcd of catalog community has no channel "stabel" (its channels: alpha, stable); did you mean stable?`,
		}},
		{name: "a misspelt starting bundle", catalogs: one, sub: Subscription{Package: "etcd", StartingCSV: "etcdoprator.v0.9.0"}, status: Unsatisfiable, contains: []string{
			"no operators found with name etcdoprator.v0.9.0 in channel  of package etcd in the catalog referenced by subscription etcd",
			`package etcd of catalog community has no bundle "etcdoprator.v0.9.0"; did you mean etcdoperator.v0.9.0?`,
		}},
		{name: "a version that is not there is no typo", catalogs: one, sub: Subscription{Package: "etcd", Channel: "alpha", StartingCSV: "etcdoperator.v0.9.0"}, status: Unsatisfiable, contains: []string{
			`channel alpha of package etcd of catalog community has no bundle "etcdoperator.v0.9.0"` + "\n",
		}},
	})
}
