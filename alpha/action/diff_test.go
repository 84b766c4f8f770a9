package action

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

// writeFBC writes blobs as a catalog.json in a new directory.
func writeFBC(t *testing.T, blobs ...map[string]any) string {
	t.Helper()
	all := make([]any, len(blobs))
	for i, x := range blobs {
		all[i] = x
	}
	return testutil.WriteFBC(t, all...)
}

// fbcPackage is a package whose channel stable is a replaces chain of
// bundles NAME.v1, NAME.v2, ..., each with the properties props (JSON
// values by type, beyond its olm.package).
func fbcPackage(name string, n int, props ...[2]string) []map[string]any {
	var entries []any
	out := []map[string]any{{"schema": "olm.package", "name": name, "defaultChannel": "stable"}}
	var bundles []map[string]any
	for i := 1; i <= n; i++ {
		bn := fmt.Sprintf("%s.v%d", name, i)
		e := map[string]any{"name": bn}
		if i > 1 {
			e["replaces"] = fmt.Sprintf("%s.v%d", name, i-1)
		}
		entries = append(entries, e)
		ps := []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": name, "version": fmt.Sprintf("%d.0.0", i)}}}
		for _, p := range props {
			ps = append(ps, map[string]any{"type": p[0], "value": json.RawMessage(p[1])})
		}
		bundles = append(bundles, map[string]any{"schema": "olm.bundle", "package": name, "name": bn,
			"image": fmt.Sprintf("example.com/%s:v%d", name, i), "properties": ps})
	}
	out = append(out, map[string]any{"schema": "olm.channel", "package": name, "name": "stable", "entries": entries})
	return append(out, bundles...)
}

// TestDiffUninstallable: the provider of a dependency removed makes the
// package that needs it uninstallable, each channel and starting bundle
// a violation; a package that could not be installed from OLD either is
// not reported, nor one the change does not reach.
func TestDiffUninstallable(t *testing.T) {
	t.Parallel()
	needB := [2]string{"olm.package.required", `{"packageName":"b","versionRange":">=1.0.0"}`}
	missing := [2]string{"olm.gvk.required", `{"group":"example.com","version":"v1","kind":"Missing"}`}
	var oldBlobs, newBlobs []map[string]any
	for _, p := range [][]map[string]any{
		fbcPackage("a", 2, needB),
		fbcPackage("c", 1, needB, missing), // never installable
		fbcPackage("d", 1),
	} {
		oldBlobs = append(oldBlobs, p...)
		newBlobs = append(newBlobs, p...)
	}
	oldBlobs = append(oldBlobs, fbcPackage("b", 1)...)
	old, new := writeFBC(t, oldBlobs...), writeFBC(t, newBlobs...)

	res, err := DiffCatalogs{Sources: &Resolver{Allowed: RefCatalogDir}, Old: old, New: new, Check: true}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range res.Violations {
		got = append(got, fmt.Sprintf("%s %s/%s/%s warning=%v: %s", v.Rule, v.Package, v.Channel, v.Bundle, v.Warning, v.Message))
	}
	want := []string{
		"uninstallable a/stable/ warning=false: a new Subscription to the channel resolves in the old catalog; in the new one it is unsatisfiable: a.v2 requires package b in range >=1.0.0; no bundle in the catalogs meets it (and 1 more)",
		"uninstallable a/stable/a.v1 warning=false: a new Subscription starting at a.v1 resolves in the old catalog; in the new one it is unsatisfiable: a.v1 requires package b in range >=1.0.0; no bundle in the catalogs meets it",
		"uninstallable a/stable/a.v2 warning=false: a new Subscription starting at a.v2 resolves in the old catalog; in the new one it is unsatisfiable: a.v2 requires package b in range >=1.0.0; no bundle in the catalogs meets it",
		`package-removed b// warning=false: package "b" is removed: clusters subscribed to it get no more updates`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The reverse: b added makes a and c installable again, but no
	// violation; without --check, no violation at all.
	res, err = DiffCatalogs{Sources: &Resolver{Allowed: RefCatalogDir}, Old: new, New: old, Check: true}.Run(context.Background())
	if err != nil || len(res.Violations) != 0 {
		t.Errorf("reverse: %v, %+v", err, res)
	}
	res, err = DiffCatalogs{Sources: &Resolver{Allowed: RefCatalogDir}, Old: old, New: new}.Run(context.Background())
	if err != nil || res.Violations != nil || len(res.Changes) != 1 || res.Changes[0].Kind != "package-removed" {
		t.Errorf("without check: %v, %+v", err, res)
	}
	// A catalog that cannot be read is named.
	if _, err := (DiffCatalogs{Sources: &Resolver{Allowed: RefCatalogDir}, Old: old, New: filepath.Join(t.TempDir(), "nosuch"), Check: true}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("missing catalog: %v", err)
	}
}
