package action

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/image"
	"github.com/fastopm/fastopm/pkg/version"
)

// stubCache stands in for the serve cache builder in these tests.
func stubCache(configsDir, cacheDir string) error {
	if err := os.Mkdir(cacheDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(cacheDir, "stub"), []byte("cache of "+filepath.Base(configsDir)), 0o644)
}

func TestGenerateImage(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	baseRef := host + "/opm:latest"
	imagetest.Push(t, baseRef, imagetest.Image(t, map[string]string{"vendor": "opm"},
		imagetest.LayerFromFiles(t, map[string]string{"bin/opm": "opm", "bin/grpc_health_probe": "probe"})))

	// The example catalog (its image's layers and digests are what is
	// tested); TestGenerateImageServeCache builds a real one too.
	const catalog = exampleCatalog
	want, err := render(t, &Resolver{}, catalog)
	if err != nil {
		t.Fatal(err)
	}

	gen := GenerateImage{Dir: catalog, BaseImage: baseRef, Destination: host + "/catalog:v1", Cache: stubCache, ImageOptions: anonymous, TempDir: t.TempDir()}
	first, err := gen.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	gen.Destination = host + "/catalog:v2"
	second, err := gen.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("two builds of the same catalog have digests %s and %s", first, second)
	}
	if ents, _ := os.ReadDir(gen.TempDir); len(ents) != 0 {
		t.Errorf("build left %s behind", ents[0].Name())
	}

	// The pushed image is a catalog image that renders as its directory.
	got, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: t.TempDir()}, host+"/catalog:v1")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Error("render of the built image differs from render of the catalog directory")
	}
	img, err := image.Pull(context.Background(), host+"/catalog@"+first.String(), anonymous...)
	if err != nil {
		t.Fatalf("pull by digest: %v", err)
	}
	dst := t.TempDir()
	if err := image.Unpack(context.Background(), img, dst); err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{"bin/opm": "opm", "tmp/cache/stub": "cache of " + filepath.Base(exampleCatalog)} {
		if data, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(p))); err != nil || string(data) != body {
			t.Errorf("%s in the image: %q, %v; want %q", p, data, err, body)
		}
	}

	// The same image into an OCI layout.
	layoutDir := filepath.Join(t.TempDir(), "layout")
	gen.Destination = image.LayoutPrefix + layoutDir
	third, err := gen.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if third != first {
		t.Errorf("layout image digest %s, want %s", third, first)
	}
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != first {
		t.Errorf("layout index %+v, want the one image %s", im.Manifests, first)
	}
}

func TestGenerateImageErrors(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	tests := []struct {
		name    string
		gen     GenerateImage
		wantIs  error
		wantErr string
	}{
		{name: "missing base image", gen: GenerateImage{Dir: exampleCatalog, BaseImage: host + "/no/such:base", Destination: host + "/x:v1", Cache: stubCache}, wantErr: "base image"},
		{name: "no destination", gen: GenerateImage{Dir: exampleCatalog, BaseImage: "scratch", Cache: stubCache}, wantErr: "destination is unset"},
		{name: "bad destination", gen: GenerateImage{Dir: exampleCatalog, BaseImage: "scratch", Destination: "Not A Ref", Cache: stubCache}, wantErr: "parse image reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.gen.TempDir = t.TempDir()
			tt.gen.ImageOptions = anonymous
			_, err := tt.gen.Run(context.Background())
			switch {
			case err == nil:
				t.Fatal("succeeded")
			case tt.wantIs != nil && !errors.Is(err, tt.wantIs):
				t.Errorf("error %v, want %v", err, tt.wantIs)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
			if ents, _ := os.ReadDir(tt.gen.TempDir); len(ents) != 0 {
				t.Errorf("left %s behind", ents[0].Name())
			}
		})
	}
}

// TestGenerateImageServeCache builds with the real serve cache builder: the
// build is reproducible (the same digest twice, also for a catalog of many
// files, which the cache builder loads in parallel), and the cache in the
// image passes opm serve's integrity check against the image's /configs.
func TestGenerateImageServeCache(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	catalogs := []string{exampleCatalog}
	if testutil.Corpus { // a real catalog of 3 MB, 34 files
		catalogs = append(catalogs, "../../testdata/catalogs/submariner-v4.14")
	}
	for _, catalog := range catalogs {
		t.Run(filepath.Base(catalog), func(t *testing.T) {
			t.Parallel()
			repo := host + "/" + filepath.Base(catalog)
			gen := GenerateImage{Dir: catalog, BaseImage: "scratch", Destination: repo + ":v1", ImageOptions: anonymous, TempDir: t.TempDir()}
			first, err := gen.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			gen.Destination = repo + ":v2"
			second, err := gen.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if first != second {
				t.Fatalf("two builds with the serve cache have digests %s and %s", first, second)
			}
			img, err := image.Pull(context.Background(), repo+"@"+first.String(), anonymous...)
			if err != nil {
				t.Fatal(err)
			}
			dst := t.TempDir()
			if err := image.Unpack(context.Background(), img, dst); err != nil {
				t.Fatal(err)
			}
			snap, err := cache.OpenDir(filepath.Join(dst, "tmp", "cache"))
			if err != nil {
				t.Fatalf("open the image's serve cache: %v", err)
			}
			defer snap.Close()
			if err := snap.Fingerprint.Check(context.Background(), os.DirFS(filepath.Join(dst, "configs")), snap.Path); err != nil {
				t.Fatalf("the image's serve cache fails the integrity check: %v", err)
			}
			if snap.Producer != version.Version {
				t.Errorf("cache built by %q, want %q", snap.Producer, version.Version)
			}
		})
	}
}
