package action

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/action/migrations"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/pkg/image"
)

// treeFiles lists the regular files under dir, as slash paths.
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	catalogRef := host + "/catalogs/example:v1"
	imagetest.Push(t, catalogRef, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"},
		imagetest.LayerFromDir(t, exampleCatalog, "configs")))
	bundleRef := host + "/bundles/hyperfoil:v0.26.0"
	imagetest.Push(t, bundleRef, imagetest.BundleImage(t, bundleDir))

	// What render prints, package by package, is what migrate writes.
	wantRender, err := render(t, &Resolver{}, exampleCatalog)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		ref       string
		format    declcfg.Format
		level     string
		outExists bool // the output path is a symbolic link to an empty directory
		wantFiles []string
	}{
		{name: "into a link to an empty directory", ref: exampleCatalog, outExists: true, wantFiles: []string{"example-operator/catalog.json", "memcached/catalog.json"}},
		{name: "directory", ref: exampleCatalog, wantFiles: []string{"example-operator/catalog.json", "memcached/catalog.json"}},
		{name: "image", ref: catalogRef, wantFiles: []string{"example-operator/catalog.json", "memcached/catalog.json"}},
		{name: "yaml", ref: exampleCatalog, format: declcfg.FormatYAML, wantFiles: []string{"example-operator/catalog.yaml", "memcached/catalog.yaml"}},
		{name: "migrated", ref: exampleCatalog, level: migrations.BundleObjectToCSVMetadata, wantFiles: []string{"example-operator/catalog.json", "memcached/catalog.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			outArg := out
			if tt.outExists {
				// Upstream writes through the link; renaming a new tree
				// over it would replace the link instead.
				real := filepath.Join(t.TempDir(), "real")
				if err := os.Mkdir(real, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(real, out); err != nil {
					t.Fatal(err)
				}
				link := out
				t.Cleanup(func() {
					if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
						t.Errorf("the output link was replaced")
					}
				})
				out = real // where the files must be
			}
			m := Migrate{CatalogRef: tt.ref, OutputDir: outArg, Format: tt.format, Sources: &Resolver{ImageOptions: anonymous, TempDir: t.TempDir()}}
			if tt.level != "" {
				var err error
				if m.Migrations, err = migrations.New(tt.level); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			files := treeFiles(t, out)
			if strings.Join(files, " ") != strings.Join(tt.wantFiles, " ") {
				t.Fatalf("files %v, want %v", files, tt.wantFiles)
			}
			if tt.format == declcfg.FormatYAML {
				data, err := os.ReadFile(filepath.Join(out, files[1]))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(data), "---\ndefaultChannel: alpha\nname: memcached\n") {
					t.Errorf("yaml file starts %.60q", data)
				}
				return
			}
			var joined strings.Builder
			for _, f := range files {
				data, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				joined.Write(data)
			}
			if joined.String() != wantRender {
				t.Errorf("package files do not add up to opm render's output")
			}
			// The migrated tree renders the same as the original.
			again, err := render(t, &Resolver{}, out)
			if err != nil {
				t.Fatal(err)
			}
			if again != wantRender {
				t.Errorf("render of the migrated tree differs from render of the original")
			}
		})
	}

	t.Run("package-less blobs go to the root file", func(t *testing.T) {
		t.Parallel()
		src := t.TempDir()
		blobs := `{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"custom.global","name":"g"}
{"schema":"custom.pkg","package":"p","name":"x"}
`
		if err := os.WriteFile(filepath.Join(src, "c.json"), []byte(blobs), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		if err := (Migrate{CatalogRef: src, OutputDir: out}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(treeFiles(t, out), " "); got != "catalog.json p/catalog.json" {
			t.Fatalf("files %s", got)
		}
		root, err := os.ReadFile(filepath.Join(out, "catalog.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(root), `"custom.global"`) || strings.Contains(string(root), `"custom.pkg"`) {
			t.Errorf("root file holds %s", root)
		}
	})

	failures := []struct {
		name    string
		ref     string
		prepare func(t *testing.T, out string)
		wantErr string
		wantIs  error
	}{
		{name: "non-empty output", ref: exampleCatalog, wantErr: "must be empty", prepare: func(t *testing.T, out string) {
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, "keep"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "bundle directory", ref: bundleDir, wantIs: ErrNotAllowed},
		{name: "bundle image", ref: bundleRef, wantIs: ErrNotAllowed},
		{name: "invalid catalog", ref: brokenCatalog(t), wantErr: "render catalog image"},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			if tt.prepare != nil {
				tt.prepare(t, out)
			}
			err := Migrate{CatalogRef: tt.ref, OutputDir: out, Sources: &Resolver{ImageOptions: anonymous, TempDir: t.TempDir()}}.Run(context.Background())
			switch {
			case err == nil:
				t.Fatal("migrate succeeded")
			case tt.wantIs != nil && !errors.Is(err, tt.wantIs):
				t.Fatalf("error %v, want %v", err, tt.wantIs)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			// Nothing half-written: only what the test put there.
			ents, _ := os.ReadDir(parent)
			for _, e := range ents {
				if e.Name() != "out" || tt.prepare == nil {
					t.Errorf("left behind %s", e.Name())
				}
			}
		})
	}
}

// brokenCatalog returns a catalog directory with a file that does not
// parse.
func brokenCatalog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"schema":"olm.package","name":`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestWriteTreeRefusesBadPackageNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"..", "a/b", `a\b`, "/abs"} {
		cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: name}}}
		if _, err := splitByPackage(cfg, declcfg.FormatJSON); err == nil || !strings.Contains(err.Error(), "invalid package name") {
			t.Errorf("package %q: error %v, want an invalid package name", name, err)
		}
	}
}

// "opm migrate SRC ." works in an empty working directory, as upstream.
func TestMigrateIntoWorkingDirectory(t *testing.T) {
	src, err := filepath.Abs(exampleCatalog)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	t.Chdir(out)
	m := Migrate{CatalogRef: src, OutputDir: ".", Sources: &Resolver{}}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if files := treeFiles(t, out); strings.Join(files, " ") != "example-operator/catalog.json memcached/catalog.json" {
		t.Errorf("files %v", files)
	}
}

// An output directory whose parent refuses a new directory is named in
// the error as the user gave it, as upstream names it ("mkdir DIR: ..."),
// not the temporary directory the tree is staged in. /proc, where no
// directory can be made even by root, stands for such a parent.
func TestWriteTreeNamesTheDirectory(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc: ", err)
	}
	err := writeTree("/proc/opm-test-out", map[string][]byte{"p/catalog.json": []byte("{}")})
	if err == nil || err.Error() != "mkdir /proc/opm-test-out: no such file or directory" {
		t.Errorf("error %v", err)
	}
}
