package cache

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/shapecat"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/registry"
)

// TestBuildShapes serves each synthetic catalog shape, built into a saved
// cache and opened again: every stored answer reads back, and the index
// has the shape's packages, channels, bundles and custom blobs.
func TestBuildShapes(t *testing.T) {
	const n = 700 // the custom blobs span more than one write batch
	for _, s := range shapecat.Shapes {
		t.Run(s.Name, func(t *testing.T) {
			dir := t.TempDir()
			built, err := buildDir(t.Context(), s.FS(n), dir, "test")
			if err != nil {
				t.Fatal(err)
			}
			built.Close()
			snap, err := OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			if err := snap.Verify(t.Context()); err != nil {
				t.Fatal(err)
			}
			x := snap.Index
			wantChannels, wantBundles, wantMetas := 1, 1, 0
			switch s.Name {
			case "channels":
				wantChannels, wantBundles = n, n
			case "chain", "skips", "skiprange":
				wantBundles = n
			case "shared-bundle":
				wantChannels = n
			case "custom", "custom-large":
				wantMetas = n
			case "deep":
				wantMetas = 1
			}
			if len(x.Packages) != 1 || len(x.Packages[0].Channels) != wantChannels || len(x.Bundles) != wantBundles || len(x.Metas) != wantMetas {
				t.Fatalf("index: %d packages, %d channels, %d bundles, %d custom blobs; want 1, %d, %d, %d",
					len(x.Packages), len(x.Packages[0].Channels), len(x.Bundles), len(x.Metas), wantChannels, wantBundles, wantMetas)
			}
			for i := range x.Metas {
				if _, err := snap.ReadMeta(&x.Metas[i]); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestVerifyFindsDamage: Verify reads every answer, whatever the size of
// its read window, and names the first damaged one.
func TestVerifyFindsDamage(t *testing.T) {
	custom, _ := shapecat.Lookup("custom-large")
	for _, window := range []int{1 << 20, 5000, 100} {
		verifyWindow = window
		dir := t.TempDir()
		snap, err := buildDir(t.Context(), custom.FS(50), dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		if err := snap.Verify(t.Context()); err != nil {
			t.Fatalf("window %d: intact cache: %v", window, err)
		}
		path := filepath.Join(dir, FileName)
		for _, target := range []struct {
			body registry.BodyRef
			want string
		}{
			{snap.Index.Metas[37].Body, `custom blob "` + snap.Index.Metas[37].Name + `": stored answer is corrupt`},
			{snap.Index.Bundles[0].Body, `bundle "shape.v1.0.0" of package "shape": stored answer is corrupt`},
		} {
			testutil.FlipByte(t, path, int64(target.body.Off)+int64(target.body.Len)/2)
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Verify(t.Context())
			s.Close()
			var rej *RejectedError
			if !errors.As(err, &rej) || rej.Reason != Corrupt || !strings.Contains(err.Error(), target.want) {
				t.Errorf("window %d: Verify: %v; want corrupt: %s", window, err, target.want)
			}
			testutil.FlipByte(t, path, int64(target.body.Off)+int64(target.body.Len)/2) // repair
		}
		snap.Close()
	}
	verifyWindow = 1 << 20
}
