package action

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/pkg/image"
)

// writeFiles writes files (slash path to content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	zzOld = `{"schema":"olm.package","name":"zz","defaultChannel":"old"}`
	zzNew = `{"schema":"olm.package","name":"zz","defaultChannel":"new"}` + "\n" +
		`{"schema":"olm.channel","package":"zz","name":"new","entries":[{"name":"zz.v1"}]}`
	yamlPkg = "schema: olm.package\nname: yy\n---\nschema: olm.channel\npackage: yy\nname: stable\nentries:\n  - name: yy.v1\n"
)

const eeNew = `{"schema":"olm.package","name":"ee"}`

// tarOf is an uncompressed tar stream of regular files, given as path and
// content pairs, in that order (a path may come twice).
func tarOf(t *testing.T, pathContent ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for i := 0; i+1 < len(pathContent); i += 2 {
		content := pathContent[i+1]
		if err := tw.WriteHeader(&tar.Header{Name: pathContent[i], Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A catalog image renders as the directory its layers compose, byte for
// byte, although its files are parsed while it is extracted: files a later
// layer replaces, removes or has ignored are parsed again or dropped.
func TestRenderImageParsedWhileExtracted(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	// The directory the image's layers compose.
	final := t.TempDir()
	if err := os.CopyFS(final, os.DirFS(exampleCatalog)); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, final, map[string]string{
		"zz/catalog.json":   zzNew,
		"yy/catalog.yaml":   yamlPkg,
		"notes.md":          "not a catalog",
		".indexignore":      "notes.md\nREADME.md\n",
		"spaced/index.json": "  {\"schema\": \"olm.package\",   \"name\": \"spaced\"}  \n",
		"ee/catalog.json":   eeNew,
	})
	for _, tc := range []struct {
		name   string
		layers []v1.Layer
	}{
		{"later layers change the catalog", []v1.Layer{
			imagetest.LayerFromFiles(t, map[string]string{"bin/opm": strings.Repeat("x", 1<<20)}),
			imagetest.LayerFromDir(t, exampleCatalog, "configs"),
			imagetest.LayerFromFiles(t, map[string]string{
				"configs/zz/catalog.json": zzOld, "configs/gone/catalog.json": `{"schema":"olm.package","name":"gone"}`,
				"configs/notes.md": "not a catalog", "configs/yy/catalog.yaml": yamlPkg, "configs/.indexignore": "README.md\n",
				"configs/spaced/index.json": "  {\"schema\": \"olm.package\",   \"name\": \"spaced\"}  \n",
			}),
			imagetest.LayerFromFiles(t, map[string]string{
				"configs/zz/catalog.json": zzNew, "configs/.wh.gone": "", "configs/.indexignore": "notes.md\nREADME.md\n",
				"tmp/cache/x": strings.Repeat("y", 1<<20),
			}),
			// A file written empty, then again: both contents start at
			// the same place in the layer's storage.
			imagetest.LayerFromTar(t, tarOf(t, "configs/ee/catalog.json", "", "configs/ee/catalog.json", eeNew)),
		}},
		{"one catalog layer", []v1.Layer{
			imagetest.LayerFromFiles(t, map[string]string{"bin/opm": strings.Repeat("x", 1<<20)}),
			imagetest.LayerFromDir(t, final, "configs"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ref := host + "/catalog/" + strings.ReplaceAll(tc.name, " ", "-") + ":v1"
			imagetest.Push(t, ref, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"}, tc.layers...))
			tmp := t.TempDir()
			// Without an image cache, and with one: first empty (the
			// layers are read and recorded), then filled (the records
			// are applied, no layer is read).
			cache := t.TempDir()
			for _, mode := range []string{"no cache", "cold cache", "warm cache"} {
				opts := anonymous
				if mode != "no cache" {
					opts = append(slices.Clone(anonymous), image.WithCacheDir(cache))
				}
				for _, format := range []declcfg.Format{declcfg.FormatJSON, declcfg.FormatYAML} {
					var want, got bytes.Buffer
					if err := (Render{Refs: []string{final}, Format: format}).Run(context.Background(), &want); err != nil {
						t.Fatal(err)
					}
					r := Render{Refs: []string{ref}, Format: format, Sources: &Resolver{ImageOptions: opts, TempDir: tmp}}
					if err := r.Run(context.Background(), &got); err != nil {
						t.Fatal(err)
					}
					if got.String() != want.String() {
						t.Errorf("%s, %s: the image renders differently from its directory\n got: %.400s\nwant: %.400s", mode, format, got.String(), want.String())
					}
					assertEmptyDir(t, tmp)
				}
			}
			if ents, err := os.ReadDir(filepath.Join(cache, "layers", "sha256")); err != nil || len(ents) != len(tc.layers) {
				t.Errorf("the image cache holds %d layer records (%v), want %d", len(ents), err, len(tc.layers))
			}

			// Every file the walk reads was parsed during the extraction.
			src := resolvePreparsed(t, tmp, ref)
			defer src.Close()
			src.pre.src.fsys = src.FS
			files, errs := declcfg.ListFiles(src.FS)
			if len(errs) > 0 || len(files.Catalog) != 7 {
				t.Fatalf("ListFiles: %v, %v", files.Catalog, errs)
			}
			for _, f := range files.Catalog {
				if src.pre.lookup(f.Path) == nil {
					t.Errorf("%s: not parsed during the extraction", f.Path)
				}
			}
		})
	}
}

// Problems of a catalog image are reported as those of its directory.
func TestRenderImageParsedWhileExtractedErrors(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	files := map[string]string{
		"a/catalog.json": `{"schema":"olm.package","name":"a"}` + "\n" + `{"schema":"olm.bundle","package":"a","name":"a.v1","properties":[{"type":"olm.package"}]}`,
		"b/catalog.json": `{"schema":"olm.package","name":"b"` + "\n",
		"c/catalog.yaml": "schema: olm.package\nname: c\n---\n- not an object\n",
		"d/empty.json":   "",
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	layerFiles := map[string]string{"bin/opm": strings.Repeat("x", 1<<20)}
	for p, c := range files {
		layerFiles["configs/"+p] = c
	}
	ref := host + "/catalog/bad:v1"
	imagetest.Push(t, ref, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"}, imagetest.LayerFromFiles(t, layerFiles)))
	_, wantErr := render(t, &Resolver{}, dir)
	if wantErr == nil {
		t.Fatal("the directory renders without error")
	}
	_, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: t.TempDir()}, ref)
	want := strings.Replace(wantErr.Error(), dir, ref, 1)
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%v", err, want)
	}
}

// Several catalog images rendered at once share the parse workers and
// render as their directories do; a layer that breaks off in the middle
// of a catalog file fails the render, naming the image, the layer and the
// file, and nothing is written.
func TestRenderImagesParsedTogether(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	dirs := []string{exampleCatalog, t.TempDir()}
	writeFiles(t, dirs[1], map[string]string{"zz/catalog.json": zzNew, "yy/catalog.yaml": yamlPkg})
	var refs []string
	for i, dir := range dirs {
		ref := fmt.Sprintf("%s/catalog/together-%d:v1", host, i)
		imagetest.Push(t, ref, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"},
			imagetest.LayerFromFiles(t, map[string]string{"bin/opm": strings.Repeat("x", 1<<20)}),
			imagetest.LayerFromDir(t, dir, "configs")))
		refs = append(refs, ref)
	}
	tmp := t.TempDir()
	for _, format := range []declcfg.Format{declcfg.FormatJSON, declcfg.FormatYAML} {
		var want, got bytes.Buffer
		if err := (Render{Refs: dirs, Format: format}).Run(context.Background(), &want); err != nil {
			t.Fatal(err)
		}
		r := Render{Refs: refs, Format: format, Sources: &Resolver{ImageOptions: anonymous, TempDir: tmp}}
		if err := r.Run(context.Background(), &got); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: the images render differently from their directories\n got: %.400s\nwant: %.400s", format, got.String(), want.String())
		}
		assertEmptyDir(t, tmp)
	}

	// A tar stream cut in the middle of configs/zz/catalog.json.
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	content := zzNew + strings.Repeat(" ", 1<<16)
	if err := tw.WriteHeader(&tar.Header{Name: "configs/zz/catalog.json", Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	broken := host + "/catalog/broken-layer:v1"
	imagetest.Push(t, broken, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"},
		imagetest.LayerFromTar(t, tb.Bytes()[:tb.Len()/2])))
	var out bytes.Buffer
	err := Render{Refs: []string{refs[0], broken}, Sources: &Resolver{ImageOptions: anonymous, TempDir: tmp}}.Run(context.Background(), &out)
	if err == nil || !strings.Contains(err.Error(), broken) || !strings.Contains(err.Error(), "configs/zz/catalog.json") || !strings.Contains(err.Error(), "layer sha256:") ||
		!strings.Contains(err.Error(), "the layer ends ") {
		t.Errorf("render of a broken layer: %v, want an error naming the image, the layer and configs/zz/catalog.json, and that the layer ends inside it", err)
	}
	if out.Len() > 0 {
		t.Errorf("render of a broken layer wrote %d bytes", out.Len())
	}
	assertEmptyDir(t, tmp)
}

// Files an .indexignore excludes are not parsed while the image is
// extracted, when the .indexignore came first (as it does in a layer
// built from a directory): directory render never reads them, and an
// excluded file may be large and no catalog at all (reading and parsing a
// 200 MB one took 6 s and 1.6 GB). Nor are the .indexignore files
// themselves, which the walk never asks for.
func TestRenderImageSkipsIgnoredFiles(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	junk := strings.Repeat("not a catalog ", 1<<16)
	files := map[string]string{
		".indexignore":     "*.md\nbig/\n",
		"README.md":        "# a catalog",
		"a/catalog.json":   `{"schema":"olm.package","name":"a"}`,
		"big/data.txt":     junk,
		"sub/.indexignore": "x.txt\n",
		"sub/x.txt":        junk,
		"sub/catalog.yaml": "schema: olm.package\nname: sub\n",
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	ref := host + "/catalog/ignored:v1"
	imagetest.Push(t, ref, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"},
		imagetest.LayerFromFiles(t, map[string]string{"bin/opm": strings.Repeat("x", 1<<20)}),
		imagetest.LayerFromDir(t, dir, "configs")))
	want, err := render(t, &Resolver{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: t.TempDir()}, ref); err != nil || got != want {
		t.Fatalf("the image renders differently from its directory: %v\n got: %.300s\nwant: %.300s", err, got, want)
	}

	src := resolvePreparsed(t, t.TempDir(), ref)
	defer src.Close()
	var parsed []string
	for k := range src.pre.files {
		parsed = append(parsed, k.path)
	}
	slices.Sort(parsed)
	if want := []string{"a/catalog.json", "sub/catalog.yaml"}; !slices.Equal(parsed, want) {
		t.Errorf("parsed during the extraction: %q, want only the catalog files %q", parsed, want)
	}

	// A file skipped that a later layer's .indexignore lets in is parsed
	// by the walk.
	final := t.TempDir()
	writeFiles(t, final, map[string]string{".indexignore": "# none\n", "a/catalog.json": files["a/catalog.json"], "x.json": zzNew})
	ref = host + "/catalog/unignored:v1"
	imagetest.Push(t, ref, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"},
		imagetest.LayerFromFiles(t, map[string]string{"configs/.indexignore": "x.json\n", "configs/a/catalog.json": files["a/catalog.json"], "configs/x.json": zzNew}),
		imagetest.LayerFromFiles(t, map[string]string{"configs/.indexignore": "# none\n"})))
	if want, err = render(t, &Resolver{}, final); err != nil {
		t.Fatal(err)
	}
	if got, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: t.TempDir()}, ref); err != nil || got != want {
		t.Errorf("the image renders differently from its directory: %v\n got: %.300s\nwant: %.300s", err, got, want)
	}
}

// A catalog image extracted to disk after all (its catalog holds links)
// keeps nothing of what was parsed while it was tried in memory: the walk
// of the directory cannot use it.
func TestRenderImageOnDiskKeepsNoEarlyParse(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, h := range []*tar.Header{
		{Name: "configs/a/catalog.json", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(zzNew))},
		{Name: "configs/b.json", Typeflag: tar.TypeSymlink, Linkname: "a/catalog.json"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(zzNew)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	ref := host + "/catalog/linked:v1"
	imagetest.Push(t, ref, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"}, imagetest.LayerFromTar(t, tb.Bytes())))
	tmp := t.TempDir()
	res := &Resolver{ImageOptions: anonymous, TempDir: tmp, preparse: &preparseConfig{format: declcfg.FormatJSON}}
	src, err := res.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if src.pre != nil {
		t.Errorf("the source keeps what was parsed during the extraction in memory (%d files, and their encoding in scratch storage), which the walk of its directory cannot use", len(src.pre.files))
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmptyDir(t, tmp)

	// And it renders as the directory of its files.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a/catalog.json": zzNew})
	if err := os.Symlink("a/catalog.json", filepath.Join(dir, "b.json")); err != nil {
		t.Fatal(err)
	}
	want, err := render(t, &Resolver{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: tmp}, ref); err != nil || got != want {
		t.Errorf("the image renders differently from its directory: %v\n got: %.300s\nwant: %.300s", err, got, want)
	}
}

// resolvePreparsed resolves the image ref as render does, parsing its
// files while they are extracted; it fails the test when none was.
func resolvePreparsed(t *testing.T, tmp, ref string) *Source {
	t.Helper()
	res := &Resolver{ImageOptions: anonymous, TempDir: tmp, preparse: &preparseConfig{format: declcfg.FormatJSON}}
	src, err := res.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if src.pre == nil {
		src.Close()
		t.Fatal("no files parsed during the extraction")
	}
	return src
}
