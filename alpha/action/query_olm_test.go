package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/alpha/olmv1"
)

// The catalog of testdata/olmv1 (its README says what each package shows).
const olmv1Catalog = "../../testdata/olmv1/catalog"

func olmQuery(both bool, cats ...InstallCatalog) *QueryOLM {
	return &QueryOLM{Catalogs: append([]InstallCatalog{{Ref: olmv1Catalog}}, cats...), Sources: DirResolver{}, Both: both}
}

// lonelyCatalog is a second catalog with a package the first one does
// not hold: OLM v0 answers from the first catalog only, OLM v1 from all.
func lonelyCatalog(t *testing.T) InstallCatalog {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lonely.json"), []byte(`{"schema":"olm.package","name":"lonely","defaultChannel":"stable"}
{"schema":"olm.channel","package":"lonely","name":"stable","entries":[{"name":"lonely.v1.0.0"},{"name":"lonely.v1.1.0","replaces":"lonely.v1.0.0"}]}
{"schema":"olm.bundle","name":"lonely.v1.0.0","package":"lonely","image":"quay.io/example/lonely-bundle:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"lonely","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"lonely.v1.1.0","package":"lonely","image":"quay.io/example/lonely-bundle:v1.1.0","properties":[{"type":"olm.package","value":{"packageName":"lonely","version":"1.1.0"}}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return InstallCatalog{Name: "other", Ref: dir}
}

// TestQueryOLMUpdates: where OLM v0 and v1 move an installed bundle of
// testdata/olmv1, and where they differ.
func TestQueryOLMUpdates(t *testing.T) {
	for _, tc := range []struct {
		pkg, from   string
		channels    []string
		version     string
		v0, v1      string // the end of each path ("" for v1: does not resolve)
		differences []string
	}{
		{"rollback", "1.0.0", nil, "", "rollback.v1.9.0", "rollback.v2.0.0", []string{"in the end: OLM v0 reaches rollback.v1.9.0, OLM v1 rollback.v2.0.0"}},
		{"deprecated-head", "1.0.0", nil, "", "deprecated-head.v1.1.0", "deprecated-head.v1.0.0", []string{
			"next: OLM v0 moves to deprecated-head.v1.1.0, OLM v1 to no update",
			"in the end: OLM v0 reaches deprecated-head.v1.1.0, OLM v1 deprecated-head.v1.0.0",
			"deprecated-head.v1.1.0 is deprecated by olm.deprecations: OLM v1 prefers any bundle that is not; OLM v0 only reports it"}},
		{"legacy-deprecated", "1.0.0", nil, "", "legacy-deprecated.v1.0.0", "legacy-deprecated.v1.1.0", []string{
			"next: OLM v0 moves to no update, OLM v1 to legacy-deprecated.v1.1.0",
			"in the end: OLM v0 reaches legacy-deprecated.v1.0.0, OLM v1 legacy-deprecated.v1.1.0",
			"legacy-deprecated.v1.1.0 has the olm.deprecated property: OLM v0 never installs it; OLM v1 ignores the property"}},
		{"skipper", "skipper.v1.0.0", nil, "", "skipper.v1.2.0", "skipper.v2.0.0", []string{
			"channels: OLM v0 follows the default channel stable; a ClusterExtension without channels takes bundles from every channel",
			"next: OLM v0 moves to skipper.v1.1.0, OLM v1 to skipper.v2.0.0",
			"in the end: OLM v0 reaches skipper.v1.2.0, OLM v1 skipper.v2.0.0"}},
		// With the default channel named, both follow it.
		{"skipper", "1.0.0", []string{"stable"}, "", "skipper.v1.2.0", "skipper.v1.2.0", nil},
		// The fast channel: 2.0.0 skipRange-covers 1.0.0 for both.
		{"skipper", "1.0.0", []string{"fast"}, "", "skipper.v2.0.0", "skipper.v2.0.0", nil},
		// Out of OLM v1's version range, it does not resolve.
		{"skipper", "1.0.0", nil, ">=3.0.0", "skipper.v1.2.0", "", []string{
			"channels: OLM v0 follows the default channel stable; a ClusterExtension without channels takes bundles from every channel",
			`OLM v1 does not resolve (error upgrading from currently installed version "1.0.0": no bundles found for package "skipper" matching version ">=3.0.0"); OLM v0 moves to skipper.v1.1.0`}},
		// OLM v1 refuses a bundle with dependencies, even the installed one.
		{"needs-certs", "1.0.0", nil, "", "needs-certs.v1.0.0", "", []string{
			`OLM v1 does not resolve (validating bundle "needs-certs.v1.0.0": bundle "needs-certs.v1.0.0" has a dependency declared via property "olm.gvk.required" which is currently not supported); OLM v0 moves to no update`}},
		{"plain", "1.0.0", nil, "", "plain.v1.1.0", "plain.v1.1.0", nil},
	} {
		name := fmt.Sprintf("%s from %s %v %s", tc.pkg, tc.from, tc.channels, tc.version)
		u, err := olmQuery(true).Updates(context.Background(), olmv1.Spec{Package: tc.pkg, Channels: tc.channels, Version: tc.version}, tc.from, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if u.V0 == nil || u.V0Error != "" || u.V1 == nil || u.Catalog != "catalog" {
			t.Fatalf("%s: v0 %+v (%s), v1 %+v, catalog %q", name, u.V0, u.V0Error, u.V1, u.Catalog)
		}
		v0end := u.V0.Installed.Name
		if n := len(u.V0.Path); n > 0 {
			v0end = u.V0.Path[n-1].To.Name
		}
		v1end := ""
		if u.V1.Resolved {
			v1end = u.V1.Bundle.Name
			if n := len(u.V1Path); n > 0 {
				v1end = u.V1Path[n-1].To
			}
		}
		if v0end != tc.v0 || v1end != tc.v1 || !slices.Equal(u.Differences, tc.differences) {
			t.Errorf("%s: v0 %s, v1 %s, differences\n  %s\nwant %s, %s,\n  %s", name, v0end, v1end,
				strings.Join(u.Differences, "\n  "), tc.v0, tc.v1, strings.Join(tc.differences, "\n  "))
		}

		// OLM v1 alone gives the same answer, and nothing of OLM v0.
		v1, err := olmQuery(false).Updates(context.Background(), olmv1.Spec{Package: tc.pkg, Channels: tc.channels, Version: tc.version}, tc.from, "")
		if err != nil {
			t.Fatalf("%s, OLM v1 alone: %v", name, err)
		}
		if v1.V0 != nil || v1.Differences != nil || v1.V1.Resolved != u.V1.Resolved || len(v1.V1Path) != len(u.V1Path) || v1.V1End != u.V1End {
			t.Errorf("%s, OLM v1 alone: %+v, want OLM v1's side of %+v", name, v1, u)
		}
	}
}

// TestQueryOLMUpdatesPath: OLM v1's path from an installed bundle, and
// why it ends where it does.
func TestQueryOLMUpdatesPath(t *testing.T) {
	u, err := olmQuery(false).Updates(context.Background(), olmv1.Spec{Package: "skipper", Channels: []string{"stable"}}, "1.0.0", "")
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, st := range u.V1Path {
		path = append(path, st.From+">"+st.To)
	}
	if want := []string{"skipper.v1.0.0>skipper.v1.1.0", "skipper.v1.1.0>skipper.v1.2.0"}; !slices.Equal(path, want) || u.V1End != "" {
		t.Errorf("path %v, end %q; want %v", path, u.V1End, want)
	}
	j := u.OnlyV1()
	if j.Answer != u.V1 || len(j.Path) != 2 || j.End != u.V1End {
		t.Errorf("OnlyV1: %+v", j)
	}

	// A new ClusterExtension has no path.
	u, err = olmQuery(false).Updates(context.Background(), olmv1.Spec{Package: "skipper"}, "", "")
	if err != nil || !u.V1.Resolved || u.V1.Bundle.Name != "skipper.v2.0.0" || u.V1Path != nil {
		t.Errorf("new: %v %+v", err, u)
	}
}

// TestQueryOLMOneCatalogForV0: OLM v0 answers from the first catalog
// only, OLM v1 from every catalog.
func TestQueryOLMOneCatalogForV0(t *testing.T) {
	q := olmQuery(true, lonelyCatalog(t))
	u, err := q.Updates(context.Background(), olmv1.Spec{Package: "lonely"}, "lonely.v1.0.0", "")
	if err != nil {
		t.Fatal(err)
	}
	if u.V0 != nil || !strings.HasPrefix(u.V0Error, `package "lonely" not found in the catalog`) {
		t.Fatalf("v0 %+v, error %q", u.V0, u.V0Error)
	}
	if want := []string{fmt.Sprintf("OLM v0 has no answer (%s); OLM v1 moves to lonely.v1.1.0", u.V0Error)}; !slices.Equal(u.Differences, want) {
		t.Errorf("differences %q, want %q", u.Differences, want)
	}

	a, err := q.Install(context.Background(), olmv1.Spec{Package: "lonely"}, "")
	if err != nil {
		t.Fatal(err)
	}
	// No bundle objects: OLM v1's installability is unknown, not refused.
	if a.V0.Status == install.Installable || !a.V1Installs() || a.V1.Installable.Status != olmv1.Unknown {
		t.Fatalf("v0 %s, v1 %+v", a.V0.Status, a.V1.Installable)
	}
	why := a.V0.Error
	if why == "" {
		why = a.V0.Reasons[0]
	}
	if want := []string{"OLM v1 installs lonely.v1.1.0; OLM v0 cannot: " + why}; !slices.Equal(a.Differences, want) {
		t.Errorf("differences %q, want %q", a.Differences, want)
	}

	// --source names the second catalog for both.
	a, err = q.Install(context.Background(), olmv1.Spec{Package: "lonely"}, "other")
	if err != nil || a.V0.Status != install.Installable || a.V0.Installs[0].Bundle != "lonely.v1.1.0" || a.V1.Bundle.Name != "lonely.v1.1.0" || a.Differences != nil {
		t.Errorf("--source other: %v, %+v", err, a)
	}
	if a.V1.Spec.Selector != olmv1.NameLabel+"=other" {
		t.Errorf("selector %q", a.V1.Spec.Selector)
	}
}

// TestQueryOLMInstall: what a new Subscription and a new ClusterExtension
// install for each package of testdata/olmv1, and where they differ.
func TestQueryOLMInstall(t *testing.T) {
	for _, tc := range []struct {
		pkg         string
		channels    []string
		v0, v1      string // the bundle each installs ("" for none)
		differences []string
	}{
		{"plain", nil, "plain.v1.1.0", "plain.v1.1.0", nil},
		{"rollback", nil, "rollback.v1.9.0", "rollback.v2.0.0", []string{
			"OLM v0 installs rollback.v1.9.0, OLM v1 rollback.v2.0.0 (the highest version it prefers)"}},
		{"deprecated-head", nil, "deprecated-head.v1.1.0", "deprecated-head.v1.0.0", []string{
			"OLM v0 installs deprecated-head.v1.1.0, OLM v1 deprecated-head.v1.0.0 (the highest version it prefers)",
			"deprecated-head.v1.1.0 is deprecated by olm.deprecations: OLM v1 prefers any bundle that is not; OLM v0 only reports it"}},
		{"legacy-deprecated", nil, "legacy-deprecated.v1.0.0", "legacy-deprecated.v1.1.0", []string{
			"OLM v0 installs legacy-deprecated.v1.0.0, OLM v1 legacy-deprecated.v1.1.0 (the highest version it prefers)",
			"legacy-deprecated.v1.1.0 has the olm.deprecated property: OLM v0 never installs it; OLM v1 ignores the property"}},
		{"skipper", nil, "skipper.v1.2.0", "skipper.v2.0.0", []string{
			"OLM v0 installs skipper.v1.2.0, OLM v1 skipper.v2.0.0 (the highest version it prefers)"}},
		{"skipper", []string{"fast"}, "skipper.v2.0.0", "skipper.v2.0.0", nil},
		{"needs-certs", nil, "needs-certs.v1.0.0", "", []string{
			`OLM v0 installs needs-certs.v1.0.0; OLM v1 cannot: validating bundle "needs-certs.v1.0.0": bundle "needs-certs.v1.0.0" has a dependency declared via property "olm.gvk.required" which is currently not supported`,
			"OLM v0 installs 1 dependencies too; OLM v1 installs no dependency and refuses a bundle that declares one"}},
		{"own-namespace", nil, "own-namespace.v1.0.0", "", []string{
			"OLM v0 installs own-namespace.v1.0.0; OLM v1 cannot: unsupported bundle: bundle does not support AllNamespaces install mode"}},
		{"aggregated", nil, "aggregated.v1.0.0", "", []string{
			"OLM v0 installs aggregated.v1.0.0; OLM v1 cannot: unsupported bundle: apiServiceDefintions are not supported"}},
		{"webhooks", nil, "webhooks.v1.0.0", "", []string{
			`OLM v0 installs webhooks.v1.0.0; OLM v1 cannot: bundle contains conversion webhook "gadgets.webhooks.example.com" and supports install modes [AllNamespaces OwnNamespace] - conversion webhooks are only supported for bundles that only support AllNamespaces install mode`}},
		// Neither installs a package the catalog does not hold.
		{"nope", nil, "", "", nil},
	} {
		name := fmt.Sprintf("%s %v", tc.pkg, tc.channels)
		a, err := olmQuery(true).Install(context.Background(), olmv1.Spec{Package: tc.pkg, Channels: tc.channels}, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v0 := ""
		if a.V0.Status == install.Installable {
			v0 = a.V0.Installs[0].Bundle
		}
		v1 := ""
		if a.V1Installs() {
			v1 = a.V1.Bundle.Name
		}
		if v0 != tc.v0 || v1 != tc.v1 || !slices.Equal(a.Differences, tc.differences) {
			t.Errorf("%s: v0 %q, v1 %q, differences\n  %s\nwant %q, %q,\n  %s", name, v0, v1,
				strings.Join(a.Differences, "\n  "), tc.v0, tc.v1, strings.Join(tc.differences, "\n  "))
		}
	}

	// With the watch namespace own-namespace needs, both install it.
	q := olmQuery(true)
	q.Options.Install = olmv1.Config{WatchNamespace: "team-a", SingleOwnNamespace: true}
	a, err := q.Install(context.Background(), olmv1.Spec{Package: "own-namespace"}, "")
	if err != nil || !a.V1Installs() || a.Differences != nil {
		t.Errorf("own-namespace watching team-a: %v, %+v %+v", err, a.V1.Installable, a.Differences)
	}
}

// TestQueryOLMInstallAll: every package and channel of testdata/olmv1,
// and the ones where OLM v0 and v1 differ.
func TestQueryOLMInstallAll(t *testing.T) {
	all, err := olmQuery(true).InstallAll(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var differ []string
	for _, r := range all.Rows {
		if r.Differ {
			differ = append(differ, r.Package+"/"+r.V0Bundle+"/"+r.V1Bundle)
		}
	}
	want := []string{"aggregated/aggregated.v1.0.0/aggregated.v1.0.0", "deprecated-head/deprecated-head.v1.1.0/deprecated-head.v1.0.0",
		"legacy-deprecated/legacy-deprecated.v1.0.0/legacy-deprecated.v1.1.0", "needs-certs/needs-certs.v1.0.0/needs-certs.v1.0.0",
		"own-namespace/own-namespace.v1.0.0/own-namespace.v1.0.0", "rollback/rollback.v1.9.0/rollback.v2.0.0", "webhooks/webhooks.v1.0.0/webhooks.v1.0.0"}
	if !slices.Equal(differ, want) {
		t.Errorf("differ on\n  %s\nwant\n  %s", strings.Join(differ, "\n  "), strings.Join(want, "\n  "))
	}
	if all.Catalog != "catalog" || len(all.Rows) != 11 || all.Differ() != 7 || len(all.V1.Rows) != 11 {
		t.Errorf("catalog %q, %d rows (OLM v1's report %d), %d differ; want catalog, 11, 7", all.Catalog, len(all.Rows), len(all.V1.Rows), all.Differ())
	}

	// OLM v1 alone: its report, no rows of both.
	v1, err := olmQuery(false).InstallAll(context.Background(), "")
	if err != nil || v1.Rows != nil || v1.V1 == nil || len(v1.V1.Rows) != 11 || v1.Differ() != 0 {
		t.Errorf("OLM v1 alone: %v, %+v", err, v1)
	}
	// A catalog that is not there.
	if _, err := olmQuery(true).InstallAll(context.Background(), "other"); err == nil {
		t.Error("catalog other: no error")
	}
}

// TestQueryOLMRefuses: questions the two OLMs cannot be compared on are
// refused before the catalogs are read.
func TestQueryOLMRefuses(t *testing.T) {
	q := &QueryOLM{Catalogs: []InstallCatalog{{Ref: "/nonexistent"}}, Sources: DirResolver{}, Both: true}
	two := olmv1.Spec{Package: "skipper", Channels: []string{"stable", "fast"}}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"updates, two channels", second(q.Updates(context.Background(), two, "1.0.0", "")), "OLM v0 follows one channel"},
		{"updates, no installed bundle", second(q.Updates(context.Background(), olmv1.Spec{Package: "skipper"}, "", "")), "comparing updates needs the installed bundle"},
		{"install, two channels", second(q.Install(context.Background(), two, "")), "an OLM v0 Subscription has one channel"},
		{"no catalog", second((&QueryOLM{Sources: DirResolver{}}).InstallAll(context.Background(), "")), "no catalog"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	// The catalog's error, named.
	if _, err := q.Install(context.Background(), olmv1.Spec{Package: "skipper"}, ""); err == nil || !strings.Contains(err.Error(), "/nonexistent") {
		t.Errorf("missing catalog: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestQueryOLMUpdatesV1CannotInstall: OLM v1 resolves the update to the
// bundle OLM v0 moves to, but cannot install it (its install modes lack
// AllNamespaces): the OLMs differ, said as a new install's difference
// says it (issue 27: "OLM v0 and v1 agree" was the answer for the update,
// while `query install --olm both` listed the difference).
func TestQueryOLMUpdatesV1CannotInstall(t *testing.T) {
	dir := t.TempDir()
	meta := func(v, modes string) string {
		return `{"schema":"olm.bundle","name":"narrowing.v` + v + `","package":"narrowing","image":"quay.io/example/narrowing:v` + v + `","properties":[{"type":"olm.package","value":{"packageName":"narrowing","version":"` + v + `"}},{"type":"olm.csv.metadata","value":{"installModes":[` + modes + `]}}]}` + "\n"
	}
	all := `{"type":"AllNamespaces","supported":true}`
	own := `{"type":"AllNamespaces","supported":false},{"type":"OwnNamespace","supported":true}`
	catalog := `{"schema":"olm.package","name":"narrowing","defaultChannel":"stable"}
{"schema":"olm.channel","package":"narrowing","name":"stable","entries":[{"name":"narrowing.v1.0.0"},{"name":"narrowing.v1.1.0","replaces":"narrowing.v1.0.0"}]}
` + meta("1.0.0", all) + meta("1.1.0", own)
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	q := &QueryOLM{Catalogs: []InstallCatalog{{Ref: dir}}, Sources: DirResolver{}, Both: true}
	u, err := q.Updates(context.Background(), olmv1.Spec{Package: "narrowing"}, "1.0.0", "")
	if err != nil {
		t.Fatal(err)
	}
	if u.V0 == nil || u.V0.Next == nil || u.V0.Next.To.Name != "narrowing.v1.1.0" || !u.V1.Resolved || u.V1.Bundle.Name != "narrowing.v1.1.0" {
		t.Fatalf("v0 %+v, v1 %+v", u.V0, u.V1)
	}
	want := "OLM v0 moves to narrowing.v1.1.0; OLM v1 cannot install it: "
	if len(u.Differences) == 0 || !strings.HasPrefix(u.Differences[0], want) || !strings.Contains(u.Differences[0], "AllNamespaces") {
		t.Errorf("updates: differences %q, want one starting %q", u.Differences, want)
	}
	// A new install of the channel: the same rule.
	a, err := q.Install(context.Background(), olmv1.Spec{Package: "narrowing"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Differences) == 0 || len(u.Differences) == 0 || !strings.HasPrefix(a.Differences[0], "OLM v0 installs narrowing.v1.1.0; OLM v1 cannot: ") ||
		strings.TrimPrefix(a.Differences[0], "OLM v0 installs narrowing.v1.1.0; OLM v1 cannot: ") != strings.TrimPrefix(u.Differences[0], want) {
		t.Errorf("install: differences %q, updates %q", a.Differences, u.Differences)
	}
}
