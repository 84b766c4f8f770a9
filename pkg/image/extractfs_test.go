package image

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// fsContents lists a file system as "path/" for directories, "path ->
// target" for links and "path=content" for files, sorted.
func fsContents(t testing.TB, fsys fs.FS) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case p == ".":
		case d.Type()&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, p)
			if err != nil {
				return err
			}
			out = append(out, p+" -> "+target)
		case d.IsDir():
			out = append(out, p+"/")
		default:
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.Size() != int64(len(b)) || !info.Mode().IsRegular() {
				return fmt.Errorf("%s: size %d, mode %v, read %d bytes", p, info.Size(), info.Mode(), len(b))
			}
			out = append(out, p+"="+string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// extractCase is an image of TestExtractFSMatchesExtract's table.
type extractCase struct {
	name   string
	labels map[string]string
	layers []v1.Layer
	opts   []Option
	mem    bool // kept in memory
}

// extractCases are catalog images of every shape ExtractFS and Extract
// handle, or refuse.
func extractCases(t *testing.T) []extractCase {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB: later layers are read before their turn
	catalog := map[string]string{ConfigsLabel: "/configs"}
	return []extractCase{
		{name: "catalog on a base", labels: catalog, mem: true, layers: []v1.Layer{
			layerOf(t, dir("bin"), file("bin/opm", big), symlink("bin/sh", "/usr/bin/busybox")),
			layerOf(t, dir("configs"), file("configs/etcd/catalog.json", `{"schema":"olm.package","name":"etcd"}`), file("configs/.indexignore", "*.md"), file("configs/README.md", "x")),
			layerOf(t, dir("tmp/cache"), file("tmp/cache/index", big)),
		}},
		{name: "later layers change the catalog", labels: catalog, mem: true, layers: []v1.Layer{
			layerOf(t, file("other/big", big), dir("configs"), file("configs/a/catalog.json", "a1"), file("configs/b/catalog.json", "b1"),
				file("configs/c.json", "c1"), dir("configs/d"), file("configs/d/x", "d1"), dir("configs/e/sub"), file("configs/e/sub/y", "e1"),
				file("configs/e/z", "e1"), file("configs/f", "f1"), file("configs/f", "f2")),
			layerOf(t, file("configs/a/catalog.json", "a2"), file("configs/.wh.b", ""), dir("configs/c.json"), file("configs/c.json/in", "c2"),
				file("configs/d", "d2"), file("configs/e/sub/new", "e2"), file("configs/e/.wh..wh..opq", ""), file("configs/.wh.f", ""), file("configs/g", "g2"),
				file("configs/.wh.g", "")),
			layerOf(t, file("configs/c.json/in", "c3"), file("configs/.wh.e", ""), file("configs/h/.wh..wh..opq", ""), file("configs/h/i", "h3")),
		}},
		{name: "an opaque root and a whited out ancestor", labels: map[string]string{ConfigsLabel: "/opt/configs"}, mem: true, layers: []v1.Layer{
			layerOf(t, file("opt/configs/a", "1"), file("opt/configs/b", "1")),
			layerOf(t, file(".wh..wh..opq", ""), file("opt/configs/c", "2")),
		}},
		{name: "configs whited out", labels: map[string]string{ConfigsLabel: "/opt/configs"}, layers: []v1.Layer{
			layerOf(t, file("opt/configs/a", "a")), layerOf(t, file(".wh.opt", "")),
		}},
		{name: "the whole image", labels: map[string]string{ConfigsLabel: "/"}, mem: true, layers: []v1.Layer{
			layerOf(t, file("a.json", "{}"), dir("d"), file("d/b.json", "{}")),
		}},
		{name: "the whole image, with links", labels: map[string]string{ConfigsLabel: "/"}, layers: []v1.Layer{
			layerOf(t, file("a.json", "{}"), symlink("b.json", "a.json")),
		}},
		{name: "a link in the catalog", labels: catalog, layers: []v1.Layer{
			layerOf(t, file("configs/a/catalog.json", "a"), symlink("configs/b", "a")),
		}},
		{name: "a link out of the catalog", labels: catalog, layers: []v1.Layer{
			layerOf(t, file("shared/catalog.json", "s"), symlink("configs/s.json", "../shared/catalog.json")),
		}},
		{name: "a hard link in the catalog", labels: catalog, layers: []v1.Layer{
			layerOf(t, file("configs/a.json", "a"), hardlink("configs/b.json", "configs/a.json")),
		}},
		{name: "a hard link out of the catalog", labels: catalog, layers: []v1.Layer{
			layerOf(t, file("shared.json", "s"), hardlink("configs/b.json", "shared.json")),
		}},
		{name: "configs is a link", labels: catalog, layers: []v1.Layer{
			layerOf(t, file("opt/catalog/etcd/catalog.json", "e"), symlink("configs", "opt/catalog")),
		}},
		{name: "configs is a file", labels: catalog, layers: []v1.Layer{layerOf(t, file("configs", "x"))}},
		{name: "configs is missing", labels: catalog, layers: []v1.Layer{layerOf(t, file("other", "x"))}},
		{name: "configs below a file", labels: map[string]string{ConfigsLabel: "/file/configs"}, layers: []v1.Layer{layerOf(t, file("file", "x"))}},
		{name: "a device in the catalog", labels: catalog, layers: []v1.Layer{
			layerOf(t, file("configs/a.json", "a"), ent{name: "configs/null", typ: tar.TypeChar}),
		}},
		{name: "a file over the limit", labels: catalog, opts: []Option{WithLimits(Limits{MaxFileSize: 100})}, layers: []v1.Layer{
			layerOf(t, file("other/big", big)), layerOf(t, file("configs/big", big)),
		}},
		{name: "a name too long for a file system", labels: catalog, layers: []v1.Layer{
			layerOf(t, file("configs/a.json", "a"), file("configs/"+strings.Repeat("n", 256)+".json", "n")),
		}},
		{name: "a directory name too long for a file system", labels: catalog, layers: []v1.Layer{
			layerOf(t, file("configs/a.json", "a"), file("configs/"+strings.Repeat("n", 256)+"/b.json", "n")),
		}},
		{name: "long names a file system holds", labels: catalog, mem: true, layers: []v1.Layer{
			layerOf(t, file("configs/"+strings.Repeat("n", 250)+".json", "n"), file("configs/"+strings.Repeat("d/", 1500)+"deep.json", "d")),
		}},
		{name: "a file through a file", labels: catalog, layers: []v1.Layer{
			layerOf(t, file("configs/a", "a")), layerOf(t, file("configs/a/b", "b")),
		}},
	}
}

// ExtractFS gives what Extract gives, in memory when the catalog holds
// only directories and files, on disk otherwise: the same tree, the same
// error.
func TestExtractFSMatchesExtract(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	for _, tc := range extractCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ref := reg.push(t, "catalog:"+strings.NewReplacer(" ", "-", ",", "").Replace(tc.name), imageOf(t, tc.labels, tc.layers...))
			dst := t.TempDir()
			want, wantErr := Extract(context.Background(), ref, dst, tc.opts...)
			tmp := t.TempDir()
			got, err := ExtractFS(context.Background(), ref, tmp, tc.opts...)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("ExtractFS: %v\nExtract:   %v", err, wantErr)
			}
			if err != nil {
				assertEmpty(t, tmp)
				return
			}
			if inMem := got.Dir == ""; inMem != tc.mem {
				t.Errorf("in memory: %v, want %v", inMem, tc.mem)
			}
			if got.Kind != want.Kind || got.Labels[ConfigsLabel] != want.Labels[ConfigsLabel] {
				t.Errorf("kind %v, labels %v; Extract: %v, %v", got.Kind, got.Labels, want.Kind, want.Labels)
			}
			if g, w := fsContents(t, got.FS), fsContents(t, os.DirFS(want.Dir)); !equalStrings(g, w) {
				t.Errorf("ExtractFS tree\n%q\nExtract tree\n%q", g, w)
			}
			if err := got.Close(); err != nil {
				t.Error(err)
			}
			assertEmpty(t, tmp)
		})
	}
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > 0 {
		t.Errorf("%s holds %d entries, want none left behind", dir, len(ents))
	}
}

// WithFileStream hands every catalog file as its layer is read, including
// those a later layer removes or replaces; the files of the final tree
// carry the ContentID of the content they hold.
func TestExtractFSStream(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	big := strings.Repeat("x", 1<<20)
	ref := reg.push(t, "catalog:stream", imageOf(t, map[string]string{ConfigsLabel: "/configs"},
		layerOf(t, file("bin/opm", big), file("configs/early.json", "1")),
		layerOf(t, file("configs/a.json", "a1"), file("configs/b.json", "b1"), file("configs/a.json", "a2"), file("configs/big.json", big),
			file("configs/gone.json", "g"), file("outside.json", "o")),
		layerOf(t, file("tmp/cache", big), file("configs/.wh.gone.json", ""), file("configs/b.json", "b3")),
	))
	var (
		mu       sync.Mutex
		streamed []string
		ids      = map[ContentID]string{}
	)
	x, err := ExtractFS(context.Background(), ref, t.TempDir(), WithFileStream(func(f StreamedFile) {
		b, err := io.ReadAll(io.NewSectionReader(f.Content, 0, f.Size))
		if err != nil {
			t.Error(err)
		}
		content := string(b)
		if len(content) > 10 {
			content = fmt.Sprintf("%d bytes", len(content))
		}
		mu.Lock()
		defer mu.Unlock()
		streamed = append(streamed, f.Path+"="+content)
		ids[f.ID] = f.Path + "=" + content
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	sort.Strings(streamed)
	want := []string{"a.json=a1", "a.json=a2", "b.json=b1", "b.json=b3", "big.json=1048576 bytes", "early.json=1", "gone.json=g"}
	if !equalStrings(streamed, want) {
		t.Errorf("streamed %q, want %q", streamed, want)
	}
	for p, want := range map[string]string{"a.json": "a.json=a2", "b.json": "b.json=b3", "early.json": "early.json=1", "big.json": "big.json=1048576 bytes"} {
		fi, err := fs.Stat(x.FS, p)
		if err != nil {
			t.Fatal(err)
		}
		id, ok := fi.Sys().(ContentID)
		if !ok || ids[id] != want {
			t.Errorf("%s: Sys() %v names %q, want the content streamed as %q", p, fi.Sys(), ids[id], want)
		}
	}
	if _, err := fs.Stat(x.FS, "gone.json"); !os.IsNotExist(err) {
		t.Errorf("gone.json: %v, want it whited out", err)
	}
}

// A catalog image whose catalog needs a directory on disk is unpacked in
// tmpDir, removed by Close.
func TestExtractFSOnDisk(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	ref := reg.push(t, "catalog:linked", imageOf(t, map[string]string{ConfigsLabel: "/configs"},
		layerOf(t, file("configs/a/catalog.json", "a"), symlink("configs/b", "a"))))
	tmp := t.TempDir()
	x, err := ExtractFS(context.Background(), ref, tmp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(x.Dir, tmp+string(filepath.Separator)) {
		t.Errorf("Dir = %q, want a directory in %s", x.Dir, tmp)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, tmp)
}

// Two contents handed to WithFileStream never share a ContentID, even
// when a file is written twice in a layer and the first content is empty
// (it takes no room in the layer's storage, so the second one starts at
// the same place): a caller that keys its results by path and ContentID
// must not take the empty file's for the file's final content.
func TestExtractFSStreamDistinctIDs(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	big := strings.Repeat("x", 1<<20)
	ref := reg.push(t, "catalog:ids", imageOf(t, map[string]string{ConfigsLabel: "/configs"},
		layerOf(t, file("bin/opm", big), file("configs/a.json", ""), file("configs/a.json", "a1")),
		// Read before its turn (the first layer is long): kept in storage.
		layerOf(t, file("configs/b.json", ""), file("configs/b.json", "b2"), file("configs/c.json", ""), file("configs/d.json", "d2")),
	))
	var (
		mu  sync.Mutex
		ids = map[ContentID][]string{}
	)
	x, err := ExtractFS(context.Background(), ref, t.TempDir(), WithFileStream(func(f StreamedFile) {
		b, err := io.ReadAll(io.NewSectionReader(f.Content, 0, f.Size))
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		defer mu.Unlock()
		ids[f.ID] = append(ids[f.ID], f.Path+"="+string(b))
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for id, contents := range ids {
		if len(contents) > 1 {
			t.Errorf("contents %q share the ContentID %v", contents, id)
		}
	}
	for p, want := range map[string]string{"a.json": "a.json=a1", "b.json": "b.json=b2", "c.json": "c.json=", "d.json": "d.json=d2"} {
		fi, err := fs.Stat(x.FS, p)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := fi.Sys().(ContentID)
		if got := ids[id]; len(got) != 1 || got[0] != want {
			t.Errorf("%s: Sys() names %q, want only %q", p, got, want)
		}
	}
}

// ExtractFS keeps the storage of a layer's files only while the catalog
// holds one of them: a catalog that a later layer replaces whole (an
// image built on an older catalog image, its /configs removed and copied
// again) does not keep the old catalog's bytes, which are in memory when
// no temporary file can be created. Not parallel: it counts the process's
// open temporary files.
func TestExtractFSDropsReplacedLayers(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	reg := newRegistry(t, nil)
	old := strings.Repeat("o", 1<<20)
	ref := reg.push(t, "catalog:replaced", imageOf(t, map[string]string{ConfigsLabel: "/configs"},
		layerOf(t, file("configs/a/catalog.json", old), file("configs/b/catalog.json", old)),
		layerOf(t, file(".wh.configs", "")),
		layerOf(t, file("configs/.wh..wh..opq", ""), file("configs/c/catalog.json", "c")),
		layerOf(t, file("configs/d.json", "d1"), file("configs/d.json", "d2")),
	))
	var (
		mu       sync.Mutex
		streamed []string
	)
	x, err := ExtractFS(context.Background(), ref, t.TempDir(), WithFileStream(func(f StreamedFile) {
		mu.Lock()
		streamed = append(streamed, f.Path)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if got, want := fsContents(t, x.FS), []string{"c/", "c/catalog.json=c", "d.json=d2"}; !equalStrings(got, want) {
		t.Fatalf("tree %q, want %q", got, want)
	}
	if len(streamed) != 5 {
		t.Errorf("streamed %q, want the 5 files of the layers", streamed)
	}
	// The storage of the last two layers, which hold c/catalog.json and
	// d.json; the first layer's is released.
	if open := openFilesIn(t, tmp); open != 2 {
		t.Errorf("%d temporary files open in %s, want 2 (the storage of the layers whose files the catalog holds)", open, tmp)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if open := openFilesIn(t, tmp); open != 0 {
		t.Errorf("%d temporary files open in %s after Close", open, tmp)
	}
}

// openFilesIn counts the process's open files that are (or were, before
// they were unlinked) in dir.
func openFilesIn(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list open files: %v", err)
	}
	n := 0
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}
