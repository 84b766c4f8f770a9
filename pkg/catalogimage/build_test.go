package catalogimage

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/pkg/image"
)

const exampleCatalog = "../../testdata/example"

// fakeCache stands in for the serve cache builder: it writes a file that
// depends only on the catalog's file names and sizes.
func fakeCache(configsDir, cacheDir string) error {
	if err := os.MkdirAll(filepath.Join(cacheDir, "sub"), 0o700); err != nil {
		return err
	}
	var b strings.Builder
	err := filepath.WalkDir(configsDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(configsDir, p)
		fmt.Fprintf(&b, "%s %d\n", filepath.ToSlash(rel), fi.Size())
		return nil
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(cacheDir, "sub", "index"), []byte(b.String()), 0o600)
}

func build(t *testing.T, o Options) *Image {
	t.Helper()
	if o.Cache == nil {
		o.Cache = fakeCache
	}
	if o.TempDir == "" {
		o.TempDir = t.TempDir()
	}
	img, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = img.Close() })
	return img
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// baseImage is a small Docker-media-type image with history and labels,
// standing in for the opm image.
func baseImage(t *testing.T) v1.Image {
	img := imagetest.Image(t, map[string]string{"vendor": "base"},
		imagetest.LayerFromFiles(t, map[string]string{"bin/opm": "#!opm", "bin/grpc_health_probe": "#!probe"}))
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.History) != 1 {
		t.Fatalf("base image has %d history entries, want 1", len(cf.History))
	}
	return img
}

func TestBuildReproducible(t *testing.T) {
	t.Parallel()
	base := baseImage(t)
	a := build(t, Options{Base: base, Dir: exampleCatalog, Labels: map[string]string{"x": "y"}})
	b := build(t, Options{Base: base, Dir: exampleCatalog, Labels: map[string]string{"x": "y"}})
	if digest(t, a) != digest(t, b) {
		t.Errorf("two builds of the same input differ: %s and %s", digest(t, a), digest(t, b))
	}
	// A copy of the catalog made now, with new file times, gives the same
	// image.
	cp := t.TempDir()
	if err := os.CopyFS(cp, os.DirFS(exampleCatalog)); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := os.Chtimes(filepath.Join(cp, "memcached", "catalog.yaml"), now, now); err != nil {
		t.Fatal(err)
	}
	c := build(t, Options{Base: base, Dir: cp, Labels: map[string]string{"x": "y"}})
	if digest(t, a) != digest(t, c) {
		t.Error("a copy of the catalog with other file times gives another image")
	}
	// Different content, label or time: different image.
	if err := os.WriteFile(filepath.Join(cp, "extra.json"), []byte(`{"schema":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Options{
		"content": {Base: base, Dir: cp, Labels: map[string]string{"x": "y"}},
		"label":   {Base: base, Dir: exampleCatalog, Labels: map[string]string{"x": "z"}},
		"created": {Base: base, Dir: exampleCatalog, Labels: map[string]string{"x": "y"}, Created: time.Unix(1700000000, 0)},
	} {
		if digest(t, build(t, o)) == digest(t, a) {
			t.Errorf("changing the %s does not change the digest", name)
		}
	}
}

type entry struct {
	name     string
	typ      byte
	mode     int64
	uid, gid int
	mtime    int64
	body     string
}

func layerEntries(t *testing.T, l v1.Layer) []entry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var out []entry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{hdr.Name, hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid, hdr.ModTime.Unix(), string(body)})
	}
}

func TestBuildContent(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	files := map[string]string{"b/catalog.json": `{"schema":"olm.package","name":"b"}`, "a.yaml": "schema: x\n", "b/c/d.json": "{}", "run.sh": "#!/bin/sh"}
	for p, body := range files {
		full := filepath.Join(src, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "run.sh"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A link to a file is stored as the file.
	if err := os.Symlink("a.yaml", filepath.Join(src, "link.yaml")); err != nil {
		t.Fatal(err)
	}

	base := baseImage(t)
	img := build(t, Options{Base: base, Dir: src, Labels: map[string]string{"vendor": "me", "extra": "1"}})

	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 3 {
		t.Fatalf("%d layers, want the base's 1 plus 2", len(layers))
	}
	for _, l := range layers[1:] {
		if mt, _ := l.MediaType(); mt != types.DockerLayer {
			t.Errorf("layer media type %s on a Docker base, want %s", mt, types.DockerLayer)
		}
	}
	wantConfigs := []entry{
		{"configs/", tar.TypeDir, 0o755, 0, 0, 0, ""},
		{"configs/a.yaml", tar.TypeReg, 0o644, 0, 0, 0, "schema: x\n"},
		{"configs/b/", tar.TypeDir, 0o755, 0, 0, 0, ""},
		{"configs/b/c/", tar.TypeDir, 0o755, 0, 0, 0, ""},
		{"configs/b/c/d.json", tar.TypeReg, 0o644, 0, 0, 0, "{}"},
		{"configs/b/catalog.json", tar.TypeReg, 0o644, 0, 0, 0, files["b/catalog.json"]},
		{"configs/link.yaml", tar.TypeReg, 0o644, 0, 0, 0, "schema: x\n"},
		{"configs/run.sh", tar.TypeReg, 0o755, 0, 0, 0, "#!/bin/sh"},
	}
	if got := layerEntries(t, layers[1]); !reflect.DeepEqual(got, wantConfigs) {
		t.Errorf("configs layer:\n%v\nwant:\n%v", got, wantConfigs)
	}
	// /tmp itself is not in the layer: the base's /tmp keeps its mode.
	wantCache := []entry{
		{"tmp/cache/", tar.TypeDir, 0o755, 0, 0, 0, ""},
		{"tmp/cache/sub/", tar.TypeDir, 0o755, 0, 0, 0, ""},
		{"tmp/cache/sub/index", tar.TypeReg, 0o644, 0, 0, 0, "a.yaml 10\nb/c/d.json 2\nb/catalog.json 35\nlink.yaml 10\nrun.sh 9\n"},
	}
	if got := layerEntries(t, layers[2]); !reflect.DeepEqual(got, wantCache) {
		t.Errorf("cache layer:\n%v\nwant:\n%v", got, wantCache)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"vendor": "me", "extra": "1", image.ConfigsLabel: "/configs"}
	if !reflect.DeepEqual(cf.Config.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", cf.Config.Labels, wantLabels)
	}
	if !reflect.DeepEqual(cf.Config.Entrypoint, []string{"/bin/opm"}) || !reflect.DeepEqual(cf.Config.Cmd, []string{"serve", "/configs", "--cache-dir=/tmp/cache"}) {
		t.Errorf("entrypoint %q cmd %q", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	if !cf.Created.Equal(time.Unix(0, 0)) || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("created %v, platform %s/%s", cf.Created, cf.OS, cf.Architecture)
	}
	nonEmpty := 0
	for _, h := range cf.History {
		if !h.EmptyLayer {
			nonEmpty++
		}
	}
	if nonEmpty != len(layers) || len(cf.RootFS.DiffIDs) != len(layers) {
		t.Errorf("%d non-empty history entries and %d diff IDs for %d layers", nonEmpty, len(cf.RootFS.DiffIDs), len(layers))
	}

	// The image unpacks, with opm's own untrusted-layer rules, to the
	// catalog's content.
	dst := t.TempDir()
	if err := image.Unpack(context.Background(), img, dst, image.WithPaths("/configs")); err != nil {
		t.Fatal(err)
	}
	for p, body := range files {
		got, err := os.ReadFile(filepath.Join(dst, "configs", filepath.FromSlash(p)))
		if err != nil || string(got) != body {
			t.Errorf("unpacked %s: %q, %v; want %q", p, got, err, body)
		}
	}
}

func TestBuildScratch(t *testing.T) {
	t.Parallel()
	img := build(t, Options{Dir: exampleCatalog, Platform: v1.Platform{OS: "linux", Architecture: "arm64"}, Created: time.Unix(1700000000, 0)})
	mt, err := img.MediaType()
	if err != nil {
		t.Fatal(err)
	}
	if mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s, want OCI", mt)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("%d layers, want 2", len(layers))
	}
	if lmt, _ := layers[0].MediaType(); lmt != types.OCILayer {
		t.Errorf("layer media type %s, want OCI", lmt)
	}
	if e := layerEntries(t, layers[0])[0]; e.mtime != 1700000000 {
		t.Errorf("entry time %d, want the Created time", e.mtime)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.Entrypoint != nil || cf.Config.Cmd != nil {
		t.Errorf("scratch image has entrypoint %q cmd %q, want none", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	if cf.Architecture != "arm64" || cf.Config.Labels[image.ConfigsLabel] != "/configs" {
		t.Errorf("architecture %s labels %v", cf.Architecture, cf.Config.Labels)
	}
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "pipe"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	linkDir := t.TempDir()
	if err := os.Symlink(t.TempDir(), filepath.Join(linkDir, "dir")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cacheErr := errors.New("catalog is invalid")
	tests := []struct {
		name    string
		o       Options
		wantIs  error
		wantErr string
	}{
		{name: "no cache builder", o: Options{Dir: exampleCatalog}, wantIs: ErrNoCacheBuilder},
		{name: "cache builder fails", o: Options{Dir: exampleCatalog, Cache: func(string, string) error { return cacheErr }}, wantIs: cacheErr},
		{name: "cache builder makes nothing", o: Options{Dir: exampleCatalog, Cache: func(string, string) error { return nil }}, wantErr: "left no directory"},
		{name: "missing directory", o: Options{Dir: filepath.Join(file, "x"), Cache: fakeCache}, wantErr: "catalog directory"},
		{name: "file", o: Options{Dir: file, Cache: fakeCache}, wantErr: "is not a directory"},
		{name: "FIFO", o: Options{Dir: fifoDir, Cache: fakeCache}, wantErr: "cannot be stored"},
		{name: "link to directory", o: Options{Dir: linkDir, Cache: fakeCache}, wantErr: "symbolic link to something other than a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.o.TempDir = t.TempDir()
			img, err := Build(context.Background(), tt.o)
			if err == nil {
				img.Close()
				t.Fatal("build succeeded")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v, want %v", err, tt.wantIs)
			}
			if tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
			if ents, _ := os.ReadDir(tt.o.TempDir); len(ents) != 0 {
				t.Errorf("failed build left %s behind", ents[0].Name())
			}
		})
	}
}

func TestCloseRemovesWorkFiles(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	img, err := Build(context.Background(), Options{Dir: exampleCatalog, Cache: fakeCache, TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 1 {
		t.Fatalf("%d work directories, want 1", len(ents))
	}
	if err := img.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("Close left %s behind", ents[0].Name())
	}
}
