package image

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// extracted is what an extraction gave: the tree, or the error.
func extracted(t *testing.T, x *Extracted, err error) string {
	t.Helper()
	if err != nil {
		return "error: " + err.Error()
	}
	defer x.Close()
	fsys := x.FS
	if fsys == nil {
		fsys = os.DirFS(x.Dir)
	}
	return strings.Join(fsContents(t, fsys), "\n")
}

// With a cache directory, an extraction records what each layer yields,
// and the next one applies the records instead of reading the layers: the
// same tree, or the same error, as without a cache, in memory (ExtractFS)
// and on disk (Extract), cold and warm; and the warm extraction fetches
// no layer.
func TestRecordsMatchUncached(t *testing.T) {
	t.Parallel()
	for _, tc := range extractCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := newRegistry(t, nil)
			ref := reg.push(t, "catalog:v1", imageOf(t, tc.labels, tc.layers...))
			ctx := context.Background()
			x, err := ExtractFS(ctx, ref, t.TempDir(), tc.opts...)
			want := extracted(t, x, err)
			x, err = Extract(ctx, ref, t.TempDir(), tc.opts...)
			wantDisk := extracted(t, x, err)

			cache := t.TempDir()
			opts := append([]Option{WithCacheDir(cache)}, tc.opts...)
			for _, round := range []string{"cold", "warm"} {
				if round == "warm" {
					// Without the pulled blobs, a layer read would be a
					// request.
					if err := os.RemoveAll(filepath.Join(cache, "blobs")); err != nil {
						t.Fatal(err)
					}
				}
				reg.blobGets.Store(0)
				x, err := ExtractFS(ctx, ref, t.TempDir(), opts...)
				if got := extracted(t, x, err); got != want {
					t.Errorf("%s ExtractFS with a cache:\n%s\nwithout:\n%s", round, got, want)
				}
				if n := reg.blobGets.Load(); round == "warm" && !strings.HasPrefix(want, "error") && n != 1 {
					t.Errorf("warm ExtractFS: %d blob requests, want 1 (the config, no layer)", n)
				}
				x, err = Extract(ctx, ref, t.TempDir(), opts...)
				if got := extracted(t, x, err); got != wantDisk {
					t.Errorf("%s Extract with a cache:\n%s\nwithout:\n%s", round, got, wantDisk)
				}
			}
		})
	}
}

// The files handed to WithFileStream from records are those the layers
// hand: every catalog file, with the ContentID the final tree's files
// carry.
func TestRecordsStream(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	ref := reg.push(t, "catalog:stream", imageOf(t, map[string]string{ConfigsLabel: "/configs"},
		layerOf(t, file("bin/opm", "opm"), file("configs/early.json", "1")),
		layerOf(t, file("configs/a.json", "a1"), file("configs/a.json", "a2"), file("configs/gone.json", "g"), file("outside.json", "o")),
		layerOf(t, file("configs/.wh.gone.json", ""), file("configs/b.json", "b3")),
	))
	cache := t.TempDir()
	for _, round := range []string{"cold", "warm"} {
		var (
			mu       sync.Mutex
			streamed = map[string]bool{}
			ids      = map[ContentID]string{}
		)
		x, err := ExtractFS(context.Background(), ref, t.TempDir(), WithCacheDir(cache), WithFileStream(func(f StreamedFile) {
			b := make([]byte, f.Size)
			if _, err := f.Content.ReadAt(b, 0); err != nil && f.Size > 0 {
				t.Errorf("%s: read %s: %v", round, f.Path, err)
			}
			mu.Lock()
			defer mu.Unlock()
			streamed[f.Path+"="+string(b)] = true
			ids[f.ID] = f.Path + "=" + string(b)
		}))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"early.json=1", "a.json=a1", "a.json=a2", "gone.json=g", "b.json=b3"} {
			if !streamed[s] {
				t.Errorf("%s: %s not streamed (%v)", round, s, streamed)
			}
		}
		err = fs.WalkDir(x.FS, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			b, err := fs.ReadFile(x.FS, p)
			if err != nil {
				return err
			}
			if got := ids[info.Sys().(ContentID)]; got != p+"="+string(b) {
				t.Errorf("%s: %s holds %q, its ContentID was streamed as %q", round, p, b, got)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		x.Close()
	}
}

// recordOf returns the path of the record of layer l in cache.
func recordOf(t *testing.T, cache string, l v1.Layer) string {
	t.Helper()
	return filepath.Join(cache, "layers", "sha256", digestOf(t, l).Hex)
}

// An image that shares base layers with one extracted before reads only
// its own layers.
func TestRecordsSharedBaseLayers(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	base := layerOf(t, dir("bin"), file("bin/opm", strings.Repeat("opm", 1<<16)))
	labels := map[string]string{ConfigsLabel: "/configs"}
	refA := reg.push(t, "a:v1", imageOf(t, labels, base, layerOf(t, file("configs/a/catalog.json", `{"schema":"olm.package","name":"a"}`))))
	refB := reg.push(t, "b:v1", imageOf(t, labels, base, layerOf(t, file("configs/b/catalog.json", `{"schema":"olm.package","name":"b"}`))))
	cache := t.TempDir()
	x, err := ExtractFS(context.Background(), refA, t.TempDir(), WithCacheDir(cache))
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if err := os.RemoveAll(filepath.Join(cache, "blobs")); err != nil {
		t.Fatal(err)
	}
	reg.blobGets.Store(0)
	x, err = ExtractFS(context.Background(), refB, t.TempDir(), WithCacheDir(cache))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fsContents(t, x.FS), ","); got != `b/,b/catalog.json={"schema":"olm.package","name":"b"}` {
		t.Errorf("image b: %s", got)
	}
	x.Close()
	if n := reg.blobGets.Load(); n != 2 {
		t.Errorf("image b: %d blob requests, want 2 (its config and its catalog layer; the base layer's record is a's)", n)
	}
}

// A damaged record (a byte changed, cut short, another file) is detected
// before use, ignored and written again; the extraction gives the same
// tree.
func TestRecordsDamaged(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	catalogLayer := layerOf(t, dir("configs"), file("configs/a/catalog.json", strings.Repeat(`{"schema":"olm.package","name":"a"}`, 1000)))
	ref := reg.push(t, "catalog:v1", imageOf(t, map[string]string{ConfigsLabel: "/configs"}, layerOf(t, file("bin/opm", "opm")), catalogLayer))
	cache := t.TempDir()
	extract := func() string {
		t.Helper()
		x, err := ExtractFS(context.Background(), ref, t.TempDir(), WithCacheDir(cache))
		return extracted(t, x, err)
	}
	want := extract()
	rec := recordOf(t, cache, catalogLayer)
	good, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"a byte of content changed", func(b []byte) []byte { b[len(b)/3] ^= 0x20; return b }},
		{"a byte of the index changed", func(b []byte) []byte { b[len(b)-trailerSize-5] ^= 1; return b }},
		{"cut short", func(b []byte) []byte { return b[:len(b)-100] }},
		{"cut before the trailer", func(b []byte) []byte { return b[:len(b)-trailerSize] }},
		{"empty", func([]byte) []byte { return nil }},
		{"another layer's record", func(b []byte) []byte { b[len(b)-trailerSize+30] ^= 1; return b }},
	} {
		if err := os.WriteFile(rec, tc.damage(append([]byte(nil), good...)), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := extract(); got != want {
			t.Errorf("%s: extracted\n%s\nwant\n%s", tc.name, got, want)
		}
		f, err := os.Open(rec)
		if err != nil {
			t.Fatalf("%s: record not written again: %v", tc.name, err)
		}
		_, err = readRecord(f, digestOf(t, catalogLayer))
		f.Close()
		if err != nil {
			t.Errorf("%s: the record written again does not check: %v", tc.name, err)
		}
	}
}

// A record serves the selection that wrote it, and smaller ones; an
// unpack that needs more (the whole image after its catalog) reads the
// layer again and gives what it gives without a cache.
func TestRecordsOtherSelection(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	img := imageOf(t, map[string]string{ConfigsLabel: "/configs"},
		layerOf(t, file("bin/opm", "opm"), file("configs/a.json", "a"), file("etc/x", "x")),
		layerOf(t, file("configs/.wh.a.json", ""), file("configs/b.json", "b"), file("etc/.wh.x", ""), file("etc/y", "y")))
	ref := reg.push(t, "catalog:v1", img)
	cache := t.TempDir()
	x, err := ExtractFS(context.Background(), ref, t.TempDir(), WithCacheDir(cache))
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	pulled, err := Pull(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	want := t.TempDir()
	if err := Unpack(context.Background(), pulled, want); err != nil {
		t.Fatal(err)
	}
	for _, round := range []string{"after the catalog", "again"} {
		pulled, err := Pull(context.Background(), ref, WithCacheDir(cache))
		if err != nil {
			t.Fatal(err)
		}
		got := t.TempDir()
		if err := Unpack(context.Background(), pulled, got, WithCacheDir(cache)); err != nil {
			t.Fatal(err)
		}
		if g, w := fsContents(t, os.DirFS(got)), fsContents(t, os.DirFS(want)); !equalStrings(g, w) {
			t.Errorf("%s: whole image with the cache\n%q\nwithout\n%q", round, g, w)
		}
	}
	// The whole image's records serve the catalog too.
	if err := os.RemoveAll(filepath.Join(cache, "blobs")); err != nil {
		t.Fatal(err)
	}
	reg.blobGets.Store(0)
	x, err = ExtractFS(context.Background(), ref, t.TempDir(), WithCacheDir(cache))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fsContents(t, x.FS), ","); got != "b.json=b" {
		t.Errorf("catalog: %s", got)
	}
	x.Close()
	if n := reg.blobGets.Load(); n != 1 {
		t.Errorf("catalog from the whole image's records: %d blob requests, want 1 (the config)", n)
	}
}

// dirSize is the size of the regular files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n += fi.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The cache stays within its bound: what was used least recently goes
// first, and what is larger than the bound is not kept.
func TestRecordsBounded(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	labels := map[string]string{ConfigsLabel: "/configs"}
	var refs []string
	for i := range 4 {
		// Incompressible enough that each image takes about 100 kB.
		body := strings.Repeat(fmt.Sprintf(`{"schema":"olm.package","name":"p%d-%%d"}`, i), 1)
		var files []ent
		for j := range 800 {
			files = append(files, file(fmt.Sprintf("configs/p%d/%d.json", i, j), fmt.Sprintf(body, j)+strings.Repeat(" ", j%97)))
		}
		refs = append(refs, reg.push(t, fmt.Sprintf("c%d:v1", i), imageOf(t, labels, layerOf(t, files...))))
	}
	cache := t.TempDir()
	const bound = 250 << 10
	for _, ref := range refs {
		x, err := ExtractFS(context.Background(), ref, t.TempDir(), WithCacheDir(cache), WithCacheMaxSize(bound))
		if err != nil {
			t.Fatal(err)
		}
		x.Close()
		if n := dirSize(t, cache); n > bound {
			t.Errorf("after %s: the cache holds %d bytes, more than its bound of %d", ref, n, bound)
		}
	}
	// The last image is still there: extracting it again reads no layer.
	if err := os.RemoveAll(filepath.Join(cache, "blobs")); err != nil {
		t.Fatal(err)
	}
	reg.blobGets.Store(0)
	x, err := ExtractFS(context.Background(), refs[3], t.TempDir(), WithCacheDir(cache), WithCacheMaxSize(bound))
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if n := reg.blobGets.Load(); n != 1 {
		t.Errorf("the image extracted last: %d blob requests, want 1 (the config)", n)
	}
	// A bound smaller than a record keeps no record, and the extraction
	// works all the same.
	small := t.TempDir()
	x, err = ExtractFS(context.Background(), refs[0], t.TempDir(), WithCacheDir(small), WithCacheMaxSize(10<<10))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fsContents(t, x.FS)); n != 801 {
		t.Errorf("%d entries, want 801", n)
	}
	x.Close()
	if ents, err := os.ReadDir(filepath.Join(small, "layers", "sha256")); err != nil || len(ents) != 0 {
		t.Errorf("records kept beyond the bound: %v, %v", ents, err)
	}
}

// Two processes that extract the same image into the same cache at the
// same time (the registry holds the layer back until both ask for it)
// both succeed, and what they leave is a valid record.
func TestRecordsTwoProcesses(t *testing.T) {
	if ref := os.Getenv("OPM_TEST_RECORDS_REF"); ref != "" {
		x, err := ExtractFS(context.Background(), ref, t.TempDir(), WithCacheDir(os.Getenv("OPM_TEST_RECORDS_CACHE")))
		fmt.Print(extracted(t, x, err))
		return
	}
	t.Parallel()
	catalogLayer := layerOf(t, dir("configs"), file("configs/a/catalog.json", strings.Repeat(`{"schema":"olm.package","name":"a"}`, 20000)))
	ld := digestOf(t, catalogLayer)
	var (
		asked   atomic.Int32
		both    = make(chan struct{})
		bothOne sync.Once
	)
	reg := newRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+ld.String()) {
				if asked.Add(1) == 2 {
					bothOne.Do(func() { close(both) })
				}
				select {
				case <-both:
				case <-time.After(2 * time.Minute): // hang guard
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	ref := reg.push(t, "catalog:v1", imageOf(t, map[string]string{ConfigsLabel: "/configs"}, layerOf(t, file("bin/opm", "opm")), catalogLayer))
	cache := t.TempDir()

	outs := make([]strings.Builder, 2)
	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestRecordsTwoProcesses$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), "OPM_TEST_RECORDS_REF="+ref, "OPM_TEST_RECORDS_CACHE="+cache)
		cmds[i].Stdout = &outs[i]
		cmds[i].Stderr = &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i].String())
		}
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("the catalog layer was fetched %d times, want 2 (once by each process)", n)
	}
	x, err := ExtractFS(context.Background(), ref, t.TempDir())
	want := extracted(t, x, err)
	for i := range cmds {
		if got, _, _ := strings.Cut(outs[i].String(), "PASS"); strings.TrimSpace(got) != want {
			t.Errorf("process %d printed\n%s\nwant\n%s", i, got, want)
		}
	}
	f, err := os.Open(filepath.Join(cache, "layers", "sha256", ld.Hex))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := readRecord(f, ld); err != nil {
		t.Errorf("the record the two processes wrote: %v", err)
	}
	ents, err := os.ReadDir(filepath.Join(cache, "layers", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "layers")); errors.Is(err, fs.ErrNotExist) {
		t.Error("no records")
	}
}
