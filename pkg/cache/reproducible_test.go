package cache

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// TestBuildDirReproducible builds the cache of multi-file catalogs several
// times, with one loader worker and with many, and wants the same bytes
// every time: the record order of a saved cache must not depend on the
// scheduling of the parallel load (opm generate image promises the same
// digest for the same catalog).
func TestBuildDirReproducible(t *testing.T) {
	// Not parallel: it changes GOMAXPROCS, which sets the number of loader
	// workers; parallel tests start after it is restored. The corpus build
	// also builds a second real catalog, of 41 files.
	cats := []string{"../../testdata/catalogs/submariner-v4.14", customCatalog(t)}
	if testutil.Corpus {
		cats = append(cats, "../../testdata/catalogs/okderators")
	}
	for _, cat := range cats {
		t.Run(filepath.Base(cat), func(t *testing.T) {
			var first []byte
			for i, procs := range []int{1, 8, 2, 16} {
				prev := runtime.GOMAXPROCS(procs)
				dir := filepath.Join(t.TempDir(), "cache")
				snap, err := buildDir(t.Context(), os.DirFS(cat), dir, "v-test")
				runtime.GOMAXPROCS(prev)
				if err != nil {
					t.Fatal(err)
				}
				// The snapshot BuildDir returns serves from the moved
				// records: every answer reads back.
				for _, ref := range snap.Index.ListBundles() {
					bundleMessage(t, snap, snap.Index.Hit(ref), Shape{Payload: true, Edges: true})
				}
				for j := range snap.Index.Metas {
					if _, err := snap.ReadMeta(&snap.Index.Metas[j]); err != nil {
						t.Fatal(err)
					}
				}
				snap.Close()
				entries, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) != 1 || entries[0].Name() != FileName {
					t.Fatalf("cache directory holds %v, want only %s", entries, FileName)
				}
				got, err := os.ReadFile(filepath.Join(dir, FileName))
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = got
					continue
				}
				if !bytes.Equal(got, first) {
					t.Fatalf("build %d (GOMAXPROCS %d) differs from build 0 (GOMAXPROCS 1): %d and %d bytes, first difference at byte %d",
						i, procs, len(got), len(first), firstDiff(got, first))
				}
			}
			// The records are in the index's order, back to back after the
			// header, and the file opens as a valid cache.
			dir := filepath.Join(t.TempDir(), "cache")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, FileName), first, 0o644); err != nil {
				t.Fatal(err)
			}
			snap, err := OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			at := uint64(headerSize)
			for i := range snap.Index.Bundles {
				if b := &snap.Index.Bundles[i]; b.Body.Off != at {
					t.Fatalf("bundle %q at %d, want %d", b.Name, b.Body.Off, at)
				}
				at += uint64(snap.Index.Bundles[i].Body.Len)
			}
			for i := range snap.Index.Metas {
				if m := &snap.Index.Metas[i]; m.Body.Off != at {
					t.Fatalf("custom blob %q at %d, want %d", m.Name, m.Body.Off, at)
				}
				at += uint64(snap.Index.Metas[i].Body.Len)
			}
			if at != uint64(snap.bodiesEnd) {
				t.Errorf("records end at %d, index at %d", at, snap.bodiesEnd)
			}
			if err := snap.Fingerprint.Check(t.Context(), os.DirFS(cat), snap.Path); err != nil {
				t.Error(err)
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// customCatalog writes a catalog of many small files with what the real
// ones lack: custom-schema blobs, duplicates among them (stored twice,
// kept once), and bundles whose CSV is synthesized from olm.csv.metadata
// in files read before their package's blob (their answers are made at
// the end of the load).
func customCatalog(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "custom")
	for p := range 6 {
		pkg := fmt.Sprintf("pkg%d", p)
		var ch strings.Builder
		fmt.Fprintf(&ch, `{"schema":"olm.channel","package":%q,"name":"stable","entries":[`, pkg)
		for b := range 8 {
			name := fmt.Sprintf("%s.v%d", pkg, b)
			if b > 0 {
				fmt.Fprintf(&ch, `,{"name":%q,"replaces":"%s.v%d"}`, name, pkg, b-1)
			} else {
				fmt.Fprintf(&ch, `{"name":%q}`, name)
			}
			props := fmt.Sprintf(`{"type":"olm.package","value":{"packageName":%q,"version":"1.%d.0"}},{"type":"olm.gvk","value":{"group":"example.com","kind":"K%d","version":"v1"}}`, pkg, b, b)
			if b%2 == 0 {
				props += fmt.Sprintf(`,{"type":"olm.csv.metadata","value":{"displayName":"%s %d","description":"bundle %d"}}`, pkg, b, b)
			} else {
				props += fmt.Sprintf(`,{"type":"olm.bundle.object","value":{"data":%q}}`, b64(fmt.Sprintf(`{"kind":"ClusterServiceVersion","metadata":{"name":%q},"spec":{"n":%d}}`, name, b)))
			}
			// "a-" sorts before "z-": the bundle files are read before the
			// package's.
			write(t, dir, fmt.Sprintf("%s/a-bundle-%d.json", pkg, b), fmt.Sprintf(`{"schema":"olm.bundle","package":%q,"name":%q,"image":"quay.io/%s:%d","properties":[%s]}`, pkg, name, pkg, b, props))
			write(t, dir, fmt.Sprintf("%s/m-custom-%d.json", pkg, b), fmt.Sprintf(`{"schema":"io.example.meta","package":%q,"name":"m%d","data":{"b":%d}}
{"schema":"io.example.shared","package":%q,"name":"same","data":{"k":"v"}}
`, pkg, b%3, b%3, pkg))
		}
		ch.WriteString("]}\n")
		write(t, dir, pkg+"/z-package.json", fmt.Sprintf(`{"schema":"olm.package","name":%q,"defaultChannel":"stable","description":"package %d","icon":{"base64data":"iVBORw0KGgo=","mediatype":"image/png"}}
%s`, pkg, p, ch.String()))
	}
	write(t, dir, "global.json", `{"schema":"io.example.global","name":"g","data":[1,2,3]}
{"schema":"io.example.global","name":"g","data":[1,2,3]}
`)
	return dir
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestFinishFromMemory moves the records out of a Writer whose storage is
// not a file (the copy cannot use copy_file_range) and gets the same cache
// file as BuildDir.
func TestFinishFromMemory(t *testing.T) {
	t.Parallel()
	cat := "../../testdata/catalogs/submariner-v4.14"
	dir := filepath.Join(t.TempDir(), "cache")
	snap, err := buildDir(t.Context(), os.DirFS(cat), dir, "v-test")
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	want, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}

	w, err := NewWriter(new(scratch.File))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.KeepLines(nil); err != nil {
		t.Fatal(err)
	}
	x, err := registry.Load(t.Context(), os.DirFS(cat), registry.Options{Sink: w, Lines: w})
	if err != nil {
		t.Fatal(err)
	}
	fp, err := ComputeFingerprint(t.Context(), os.DirFS(cat))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	snap, err = w.Finish(t.Context(), f, x, fp, "v-test")
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	h, err := snap.Index.GetBundleForChannel("submariner", "stable-0.17")
	if err != nil {
		t.Fatal(err)
	}
	bundleMessage(t, snap, h, Shape{Payload: true})
	snap.Close()
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("cache moved from memory differs from BuildDir's: %d and %d bytes, first difference at byte %d", len(got), len(want), firstDiff(got, want))
	}
}
