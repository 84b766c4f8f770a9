package registry

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// TestServedBundle checks that ServedBundle gives, for every bundle of the
// test catalog, the answer the serve index stores for it (which the
// server's golden tests hold against upstream's), and that the answer is
// the caller's: a later call does not change it.
func TestServedBundle(t *testing.T) {
	t.Parallel()
	fsys := testCatalog()
	_, sink := load(t, fsys)
	cfg, err := declcfg.LoadFS(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*declcfg.Package{}
	for i := range cfg.Packages {
		pkgs[cfg.Packages[i].Name] = &cfg.Packages[i]
	}
	var first *BundleAnswer
	for i := range cfg.Bundles {
		bd := &cfg.Bundles[i]
		got, err := ServedBundle(bd, pkgs[bd.Package])
		if err != nil {
			t.Fatalf("%s: %v", bd.Name, err)
		}
		want := sink.bundles[bd.Package+"/"+bd.Name]
		if g, w := answerText(*got), answerText(want); g != w {
			t.Errorf("%s:\n%s\nwant\n%s", bd.Name, g, w)
		}
		if first == nil {
			first = got
		}
	}
	if want := sink.bundles[first.PackageName+"/"+first.CsvName]; answerText(*first) != answerText(want) {
		t.Errorf("the first answer changed: %s", answerText(*first))
	}
}

// answerText writes an answer's fields as text (nil and empty alike).
func answerText(a BundleAnswer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s csv=%q\n", a.CsvName, a.PackageName, a.BundlePath, a.Version, a.CsvJSON)
	for _, o := range a.Objects {
		fmt.Fprintf(&b, "object %q\n", o)
	}
	fmt.Fprintf(&b, "provides %v requires %v\n", a.ProvidedAPIs, a.RequiredAPIs)
	for _, p := range a.Dependencies {
		fmt.Fprintf(&b, "dependency %s %q\n", p.Type, p.Value)
	}
	for _, p := range a.Properties {
		fmt.Fprintf(&b, "property %s %q\n", p.Type, p.Value)
	}
	return b.String()
}
