package updates_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// TestAgreesWithRegistryAPI checks every bundle of every channel of the
// real test catalogs: the update chosen through a replaces or skips edge
// is one of the entries the Registry API's GetChannelEntriesThatReplace
// answers for that channel, and a bundle that GetBundleThatReplaces gives
// an answer for (one OLM may install: not skipped) has an update.
func TestAgreesWithRegistryAPI(t *testing.T) {
	root := "../../testdata/catalogs"
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range dirs {
		fsys := os.DirFS(filepath.Join(root, d.Name()))
		res, err := action.Validate{FS: fsys, SkipSchema: true}.Run(context.Background())
		if err != nil || !res.Passed() {
			continue // invalid fixtures have no API
		}
		st := scratch.CreateOrMemory(t.TempDir(), "x")
		defer st.Close()
		w, err := cache.NewWriter(st)
		if err != nil {
			t.Fatal(err)
		}
		x, err := registry.Load(context.Background(), fsys, registry.Options{Sink: w})
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range res.Model {
			for _, ch := range pkg.Channels {
				g, err := updates.NewGraph(ch)
				if err != nil {
					t.Errorf("%s: %s: %v", d.Name(), ch.Name, err)
					continue
				}
				for _, b := range ch.Bundles {
					checked++
					st := g.Next(updates.InstalledBundle(b))
					api, _ := x.GetChannelEntriesThatReplace(b.Name)
					var apiHere []string
					for _, e := range api {
						if e.PackageName == pkg.Name && e.ChannelName == ch.Name {
							apiHere = append(apiHere, e.BundleName)
						}
					}
					if st != nil && (slices.Contains(st.Edges, updates.Replaces) || slices.Contains(st.Edges, updates.Skips)) &&
						!slices.Contains(apiHere, st.To.Name) {
						t.Errorf("%s %s/%s: %s updates to %s by %v; GetChannelEntriesThatReplace says %v",
							d.Name(), pkg.Name, ch.Name, b.Name, st.To.Name, st.Edges, apiHere)
					}
					if hit, err := x.GetBundleThatReplaces(b.Name, pkg.Name, ch.Name); err == nil {
						if slices.Contains(g.Order, ch.Bundles[hit.Bundle.Name]) && st == nil {
							t.Errorf("%s %s/%s: %s has no update; GetBundleThatReplaces answers %s",
								d.Name(), pkg.Name, ch.Name, b.Name, hit.Bundle.Name)
						}
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d bundles checked", checked)
	}
	t.Logf("%d channel entries checked", checked)
}
