package action

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
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

// TestGenerateImageOpmBase: without a base image, the image is built on
// this opm itself: its layers hold /bin/opm equal to the running binary,
// the grpc_health_probe given, the catalog and a cache that passes serve's
// checks, with upstream's label, entrypoint and command; the build is
// reproducible, and another platform needs a base image.
func TestGenerateImageOpmBase(t *testing.T) {
	t.Parallel()
	probe := filepath.Join(t.TempDir(), "grpc_health_probe")
	if err := os.WriteFile(probe, []byte("#!probe"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The corpus run puts the running binary (the test) in the image, as
	// opm does; the race suite a small stand-in, since gzip under the race
	// detector takes half a minute for the test binary (docs/tests.md).
	var opm string
	if !testutil.Corpus {
		opm = filepath.Join(t.TempDir(), "opm")
		if err := os.WriteFile(opm, bytes.Repeat([]byte("#!opm\n"), 1<<16), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self := opm
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			t.Fatal(err)
		}
	}
	selfBytes, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	layoutDir := filepath.Join(t.TempDir(), "layout")
	gen := GenerateImage{Dir: exampleCatalog, OpmBinary: opm, ProbeBinary: probe, Destination: image.LayoutPrefix + layoutDir, TempDir: t.TempDir()}
	first, err := gen.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	gen.Destination = image.LayoutPrefix + filepath.Join(t.TempDir(), "layout2")
	second, err := gen.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("two builds: %s and %s", first, second)
	}
	if ents, _ := os.ReadDir(gen.TempDir); len(ents) != 0 {
		t.Errorf("build left %s behind", ents[0].Name())
	}
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(first)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if strings.Join(c.Entrypoint, " ") != "/bin/opm" || strings.Join(c.Cmd, " ") != "serve /configs --cache-dir=/tmp/cache" ||
		c.Labels[image.ConfigsLabel] != "/configs" || c.User != "65532:65532" || cf.OS != runtime.GOOS || cf.Architecture != runtime.GOARCH {
		t.Errorf("config: entrypoint %q cmd %q labels %v user %q platform %s/%s", c.Entrypoint, c.Cmd, c.Labels, c.User, cf.OS, cf.Architecture)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 3 {
		t.Fatalf("%d layers, %v; want opm, configs, cache", len(layers), err)
	}
	// The opm layer as written: /tmp is writable by the image's user.
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(rc)
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, fmt.Sprintf("%s %o", hdr.Name, hdr.Mode))
	}
	rc.Close()
	if got := strings.Join(names, ", "); got != "bin/ 755, bin/grpc_health_probe 755, bin/opm 755, tmp/ 1777" {
		t.Errorf("opm layer: %s", got)
	}
	dst := t.TempDir()
	if err := image.Unpack(context.Background(), img, dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "bin", "opm")); err != nil || !bytes.Equal(b, selfBytes) {
		t.Errorf("/bin/opm is not the running binary (%d bytes, %v; want %d)", len(b), err, len(selfBytes))
	}
	if b, err := os.ReadFile(filepath.Join(dst, "bin", "grpc_health_probe")); err != nil || string(b) != "#!probe" {
		t.Errorf("/bin/grpc_health_probe: %q, %v", b, err)
	}
	want, err := render(t, &Resolver{}, exampleCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := render(t, &Resolver{}, filepath.Join(dst, "configs")); err != nil || got != want {
		t.Errorf("/configs renders differently from the catalog (%v)", err)
	}
	snap, err := cache.OpenDir(filepath.Join(dst, "tmp", "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if err := snap.Fingerprint.Check(context.Background(), os.DirFS(filepath.Join(dst, "configs")), snap.Path); err != nil {
		t.Error(err)
	}
	if err := snap.Verify(context.Background()); err != nil {
		t.Error(err)
	}

	other := &v1.Platform{OS: "linux", Architecture: "s390x"}
	if runtime.GOARCH == "s390x" {
		other.Architecture = "amd64"
	}
	gen.Platform = other
	if _, err := gen.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "--base-image") {
		t.Errorf("build for %s on this opm: %v, want an error naming --base-image", other, err)
	}
	gen.Platform, gen.ProbeBinary = nil, filepath.Join(t.TempDir(), "missing")
	if _, err := gen.Run(context.Background()); err == nil {
		t.Error("build with a missing grpc_health_probe succeeded")
	}
}

// TestGenerateImageZstd: with zstd the catalog and cache layers are zstd
// layers, and the image renders as its catalog directory does.
func TestGenerateImageZstd(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	gen := GenerateImage{Dir: exampleCatalog, BaseImage: "scratch", Zstd: true, Destination: host + "/zstd:v1", ImageOptions: anonymous, TempDir: t.TempDir()}
	digest, err := gen.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	img, err := image.Pull(context.Background(), host+"/zstd@"+digest.String(), anonymous...)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("%d layers, %v", len(layers), err)
	}
	for _, l := range layers {
		if mt, _ := l.MediaType(); mt != "application/vnd.oci.image.layer.v1.tar+zstd" {
			t.Errorf("layer media type %s", mt)
		}
	}
	want, err := render(t, &Resolver{}, exampleCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: t.TempDir()}, host+"/zstd:v1"); err != nil || got != want {
		t.Errorf("render of the zstd image differs from render of the directory (%v)", err)
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
