package install

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestCatalogRenamed: a catalog renamed answers as the same catalog
// loaded under that name, in a namespace or not, and the catalog it was
// copied from is left as it was.
func TestCatalogRenamed(t *testing.T) {
	for i, dir := range []string{"install/community", "install/certified", "catalogs/okderators", "catalogs/fixture-olm-deprecations"} {
		for _, ns := range []string{"", "team-a"} {
			load := func(name string) *Catalog {
				cat, _, err := Load(context.Background(), os.DirFS("../../testdata/"+dir), name, i)
				if err != nil {
					t.Fatalf("%s: %v", dir, err)
				}
				if ns != "" {
					cat.SetNamespace(ns)
				}
				return cat
			}
			orig, want := load("hub-name"), load("my-catalog")
			// All answers a catalog of no namespace (a namespace's are
			// resolved with ResolveNamespace): the ids of the entries say
			// the rest.
			answers := func(t *testing.T, c *Catalog) []byte {
				t.Helper()
				var b []byte
				if c.Namespace == "" {
					b = everything(t, c)
				}
				for _, e := range c.entries {
					b = append(b, "\n"+e.id()...)
				}
				return b
			}
			before := answers(t, orig)
			got := orig.Renamed("my-catalog")
			if got.Name != "my-catalog" || got.Namespace != ns || got.Priority != i {
				t.Errorf("%s %q: renamed %s/%s priority %d", dir, ns, got.Namespace, got.Name, got.Priority)
			}
			if g, w := answers(t, got), answers(t, want); !bytes.Equal(g, w) {
				t.Errorf("%s %q: renamed answers\n%s\nloaded under the name:\n%s", dir, ns, g, w)
			}
			for _, e := range got.entries {
				if e.Catalog != got || !strings.HasPrefix(e.id(), got.Key()+"/") {
					t.Errorf("%s %q: entry %s names %s (%s)", dir, ns, e.Name(), e.Catalog.Key(), e.id())
				}
			}
			if after := answers(t, orig); !bytes.Equal(before, after) || orig.Name != "hub-name" {
				t.Errorf("%s %q: the catalog renamed changed", dir, ns)
			}
			for _, e := range orig.entries {
				if e.Catalog != orig || !strings.HasPrefix(e.id(), orig.Key()+"/") {
					t.Errorf("%s %q: the original's entry %s names %s", dir, ns, e.Name(), e.id())
				}
			}
		}
	}
}
