package action

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/fastopm/fastopm/alpha/action/migrations"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/pkg/bundle"
	"github.com/fastopm/fastopm/pkg/image"
)

const (
	exampleCatalog = "../../testdata/example"
	bundleDir      = "../../pkg/bundle/testdata/bundles/hyperfoil-bundle-0.26.0"
)

// anonymous keeps the tests away from the credentials of whoever runs
// them: the in-process registries need none.
var anonymous = []image.Option{image.WithAuth(authn.Anonymous)}

func mustTemplate(t *testing.T, s string) *template.Template {
	t.Helper()
	tmpl, err := template.New("t").Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// render renders refs with the resolver and returns the output.
func render(t *testing.T, res SourceResolver, refs ...string) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	err := Render{Refs: refs, Sources: res}.Run(context.Background(), &buf)
	return buf.String(), err
}

// assertEmptyDir fails unless dir holds nothing: no unpacked image was
// left behind.
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("%s holds %d entries after the render, want none (first: %s)", dir, len(ents), ents[0].Name())
	}
}

func TestBareName(t *testing.T) {
	for ref, want := range map[string]bool{
		"catalog": true, "cron-v2/catalog": true, "a/b/c": true,
		"catalog:v1": false, "catalog@sha256:00": false, "quay.io/x/catalog": false,
		"localhost/catalog": false, "localhost:5000/catalog": false, "": false,
	} {
		if got := bareName(ref); got != want {
			t.Errorf("bareName(%q) = %v", ref, got)
		}
	}
}

func TestResolverDirectories(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(file, []byte(`{"schema":"olm.package","name":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		res       Resolver
		ref       string
		wantFS    bool
		wantImage string // of the one bundle, when a Config is expected
		wantErr   string
		wantIs    error
	}{
		{name: "catalog directory", ref: exampleCatalog, wantFS: true},
		{name: "bundle directory", ref: bundleDir, wantImage: ""},
		{name: "bundle directory with template", res: Resolver{ImageRefTemplate: mustTemplate(t, "quay.io/x/{{.Package}}:v{{.Version}}-{{.Name}}")},
			ref: bundleDir, wantImage: "quay.io/x/hyperfoil-bundle:v0.26.0-hyperfoil-operator.v0.26.0"},
		{name: "file", ref: file, wantErr: "is a file"},
		{name: "missing path", ref: "./no/such/dir", wantIs: fs.ErrNotExist},
		{name: "invalid reference", ref: "No_Such:Dir:x", wantErr: `parse image reference "No_Such:Dir:x"`},
		{name: "not a directory either", ref: "No_Such:Dir:x", wantErr: `(there is no directory "No_Such:Dir:x" either)`},
		// A name without registry or tag is most likely a mistyped
		// directory: said first (issue 27). Upper case makes it an
		// invalid reference, refused without a pull.
		{name: "a bare name", ref: "NoSuchCatalog", wantErr: `there is no directory "NoSuchCatalog"; as an image reference (no registry, no tag: Docker Hub's) it could not be pulled either: `},
		{name: "a bare path", ref: "Cron/NoSuchCatalog", wantErr: `there is no directory "Cron/NoSuchCatalog"; as an image reference`},
		{name: "bundle directory not allowed", res: Resolver{Allowed: RefCatalogDir | RefCatalogImage}, ref: bundleDir, wantIs: ErrNotAllowed},
		{name: "catalog directory not allowed", res: Resolver{Allowed: RefBundleDir}, ref: exampleCatalog, wantIs: ErrNotAllowed},
		{name: "image not allowed", res: Resolver{Allowed: RefCatalogDir}, ref: "example.com/no/such:image", wantIs: ErrNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.res.TempDir = t.TempDir()
			src, err := tt.res.Resolve(context.Background(), tt.ref)
			switch {
			case tt.wantIs != nil:
				if !errors.Is(err, tt.wantIs) {
					t.Fatalf("error %v, want %v", err, tt.wantIs)
				}
				return
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if tt.wantFS {
				if src.FS == nil || src.Config != nil {
					t.Fatalf("got %+v, want a streamed catalog tree", src)
				}
				return
			}
			if src.Config == nil || len(src.Config.Bundles) != 1 {
				t.Fatalf("got %+v, want one bundle in memory", src)
			}
			b := src.Config.Bundles[0]
			if b.Name != "hyperfoil-operator.v0.26.0" || b.Package != "hyperfoil-bundle" || b.Image != tt.wantImage {
				t.Errorf("bundle %s/%s image %q, want hyperfoil-bundle/hyperfoil-operator.v0.26.0 image %q", b.Package, b.Name, b.Image, tt.wantImage)
			}
			if b.CsvJSON == "" || len(b.Objects) == 0 {
				t.Error("bundle lacks its CSV and objects")
			}
		})
	}
}

func TestResolverImages(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t)
	catalogRef := host + "/catalogs/example:v1"
	imagetest.Push(t, catalogRef, imagetest.Image(t,
		map[string]string{image.ConfigsLabel: "/configs", "maintainer": "me"},
		imagetest.LayerFromFiles(t, map[string]string{"bin/opm": "not really"}),
		imagetest.LayerFromDir(t, exampleCatalog, "configs"),
	))
	bundleRef := host + "/bundles/hyperfoil:v0.26.0"
	imagetest.Push(t, bundleRef, imagetest.BundleImage(t, bundleDir))
	unknownRef := host + "/other/thing:v1"
	imagetest.Push(t, unknownRef, imagetest.Image(t, map[string]string{"vendor": "acme", "a.b": "c"},
		imagetest.LayerFromFiles(t, map[string]string{"hello.txt": "hi"})))

	wantCatalog, err := render(t, &Resolver{}, exampleCatalog)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("catalog image renders as its directory", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		got, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: tmp}, catalogRef)
		if err != nil {
			t.Fatal(err)
		}
		if got != wantCatalog {
			t.Errorf("render of the catalog image differs from render of its directory")
		}
		assertEmptyDir(t, tmp)
	})

	t.Run("bundle image takes its reference as image", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		res := &Resolver{ImageOptions: anonymous, TempDir: tmp, ImageRefTemplate: mustTemplate(t, "ignored/for/images:{{.Version}}")}
		src, err := res.Resolve(context.Background(), bundleRef)
		if err != nil {
			t.Fatal(err)
		}
		assertEmptyDir(t, tmp)
		b := src.Config.Bundles[0]
		if b.Image != bundleRef {
			t.Errorf("image %q, want %q", b.Image, bundleRef)
		}
		found := false
		for _, ri := range b.RelatedImages {
			found = found || ri.Image == bundleRef
		}
		if !found {
			t.Errorf("relatedImages %v lack the bundle image", b.RelatedImages)
		}
		// Same bundle as the directory, except for the image.
		dirSrc, err := (&Resolver{ImageRefTemplate: mustTemplate(t, bundleRef)}).Resolve(context.Background(), bundleDir)
		if err != nil {
			t.Fatal(err)
		}
		got := declcfg.AppendJSON(nil, &b)
		want := declcfg.AppendJSON(nil, &dirSrc.Config.Bundles[0])
		if !bytes.Equal(got, want) {
			t.Errorf("bundle image renders differently from its directory\n got: %.300s\nwant: %.300s", got, want)
		}
	})

	t.Run("mixed references compose", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		got, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: tmp}, catalogRef, bundleDir, bundleRef)
		if err != nil {
			t.Fatal(err)
		}
		assertEmptyDir(t, tmp)
		if !strings.Contains(got, `"name": "example-operator.v1.0.0"`) || strings.Count(got, `"name": "hyperfoil-operator.v0.26.0"`) != 2 {
			t.Errorf("mixed render lacks blobs of some reference:\n%.500s", got)
		}
	})

	t.Run("unknown image names its labels", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		_, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: tmp}, unknownRef)
		var unknown *image.UnknownImageError
		if !errors.As(err, &unknown) {
			t.Fatalf("error %v, want an *image.UnknownImageError", err)
		}
		for _, want := range []string{"image type could not be determined", "\n  a.b=c\n  vendor=acme"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		assertEmptyDir(t, tmp)
	})

	t.Run("bundle image not allowed", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		_, err := (&Resolver{ImageOptions: anonymous, TempDir: tmp, Allowed: RefCatalogDir | RefCatalogImage}).Resolve(context.Background(), bundleRef)
		if !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("error %v, want ErrNotAllowed", err)
		}
		assertEmptyDir(t, tmp)
	})

	t.Run("missing image", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		_, err := render(t, &Resolver{ImageOptions: anonymous, TempDir: tmp}, host+"/no/such:image")
		if err == nil || !strings.Contains(err.Error(), "no/such:image") {
			t.Fatalf("error %v, want one naming the image", err)
		}
		assertEmptyDir(t, tmp)
	})
}

// copyBundle copies the test bundle into a temporary directory and
// rewrites its annotations file.
func copyBundle(t *testing.T, annotations string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(bundleDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "metadata", "annotations.yaml"), []byte(annotations), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestResolverStrictBundles(t *testing.T) {
	t.Parallel()
	noChannel := copyBundle(t, "annotations:\n  operators.operatorframework.io.bundle.package.v1: hyperfoil-bundle\n")
	var warnings []string
	lenient := &Resolver{Warn: func(m string) { warnings = append(warnings, m) }}
	src, err := lenient.Resolve(context.Background(), noChannel)
	if err != nil {
		t.Fatalf("lenient render failed: %v", err)
	}
	if len(src.Config.Bundles) != 1 {
		t.Fatalf("got %d bundles, want 1", len(src.Config.Bundles))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], bundle.ErrNoChannels.Error()) {
		t.Errorf("warnings %q, want one about the missing channel", warnings)
	}

	_, err = (&Resolver{StrictBundles: true}).Resolve(context.Background(), noChannel)
	if !errors.Is(err, bundle.ErrNoChannels) {
		t.Errorf("strict render: error %v, want %v", err, bundle.ErrNoChannels)
	}
}

// catalogOfBundle writes a catalog holding the test bundle rendered as
// upstream renders a bundle directory (with an image), with a package and
// a channel, and returns its directory.
func catalogOfBundle(t *testing.T, image string) string {
	t.Helper()
	src, err := (&Resolver{ImageRefTemplate: mustTemplate(t, image)}).Resolve(context.Background(), bundleDir)
	if err != nil {
		t.Fatal(err)
	}
	b := src.Config.Bundles[0]
	declcfg.PrepareForRender(&b)
	dir := t.TempDir()
	blobs := `{"schema":"olm.package","name":"hyperfoil-bundle","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"hyperfoil-bundle","entries":[{"name":"hyperfoil-operator.v0.26.0"}]}
` + string(declcfg.AppendJSON(nil, &b))
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(blobs), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func propertyTypes(b *declcfg.Bundle) map[string]int {
	n := map[string]int{}
	for _, p := range b.Properties {
		n[p.Type]++
	}
	return n
}

func TestResolverMigrations(t *testing.T) {
	t.Parallel()
	const img = "quay.io/example/hyperfoil-bundle:v0.26.0"
	catalog := catalogOfBundle(t, img)
	m, err := migrations.New(migrations.BundleObjectToCSVMetadata)
	if err != nil {
		t.Fatal(err)
	}

	// The catalog source is loaded into memory and migrated.
	src, err := (&Resolver{Migrations: m}).Resolve(context.Background(), catalog)
	if err != nil {
		t.Fatal(err)
	}
	if src.FS != nil || src.Config == nil || len(src.Config.Bundles) != 1 {
		t.Fatalf("got %+v, want the catalog in memory", src)
	}
	fromCatalog := src.Config.Bundles[0]
	if n := propertyTypes(&fromCatalog); n[property.TypeBundleObject] != 0 || n[property.TypeCSVMetadata] != 1 {
		t.Fatalf("migrated catalog bundle has property types %v, want no %s and one %s", n, property.TypeBundleObject, property.TypeCSVMetadata)
	}

	// The bundle directory, migrated, gives the same bundle.
	dirSrc, err := (&Resolver{Migrations: m, ImageRefTemplate: mustTemplate(t, img)}).Resolve(context.Background(), bundleDir)
	if err != nil {
		t.Fatal(err)
	}
	fromDir := dirSrc.Config.Bundles[0]
	declcfg.PrepareForRender(&fromCatalog)
	declcfg.PrepareForRender(&fromDir)
	if got, want := declcfg.AppendJSON(nil, &fromCatalog), declcfg.AppendJSON(nil, &fromDir); !bytes.Equal(got, want) {
		t.Errorf("migrated catalog bundle differs from migrated bundle directory\n got: %.600s\nwant: %.600s", got, want)
	}

	// Without an image, upstream leaves the bundle alone.
	noImage, err := (&Resolver{Migrations: m}).Resolve(context.Background(), bundleDir)
	if err != nil {
		t.Fatal(err)
	}
	if n := propertyTypes(&noImage.Config.Bundles[0]); n[property.TypeCSVMetadata] != 0 || n[property.TypeBundleObject] == 0 {
		t.Errorf("bundle without image was migrated: %v", n)
	}
}

// TestRenderMigrateRealCatalog migrates a real catalog whose bundles carry
// olm.bundle.object properties.
func TestRenderMigrateRealCatalog(t *testing.T) {
	t.Parallel()
	m, err := migrations.New(migrations.All)
	if err != nil {
		t.Fatal(err)
	}
	const dir = "../../testdata/catalogs/kube-descheduler-v4.12"
	before, err := render(t, &Resolver{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	after, err := render(t, &Resolver{Migrations: m}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(before, `"olm.bundle.object"`) {
		t.Fatal("test catalog has no olm.bundle.object property")
	}
	if strings.Contains(after, `"olm.bundle.object"`) {
		t.Error("migrated render still has olm.bundle.object properties")
	}
	if got, want := strings.Count(after, `"type": "olm.csv.metadata"`), strings.Count(before, `"schema": "olm.bundle"`); got != want {
		t.Errorf("%d olm.csv.metadata properties, want one per bundle (%d)", got, want)
	}
}

func TestLoadBundleObjects(t *testing.T) {
	t.Parallel()
	obj := func(data string) property.Property {
		v, err := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString([]byte(data))})
		if err != nil {
			t.Fatal(err)
		}
		return property.Property{Type: property.TypeBundleObject, Value: v}
	}
	b := declcfg.Bundle{Name: "b", Package: "p", Properties: []property.Property{
		{Type: property.TypePackage, Value: json.RawMessage(`{"packageName":"p","version":"1.0.0"}`)},
		obj("kind: CustomResourceDefinition\napiVersion: apiextensions.k8s.io/v1\n"),
		obj(`{"kind":"ClusterServiceVersion","metadata":{"name":"b"}}`),
		obj("kind: ClusterServiceVersion\nmetadata:\n  name: second\n"),
		// Text that looks like JSON is passed through, as upstream's
		// yaml.ToJSON does, even when it is not.
		obj(" {not json"),
	}}
	if err := LoadBundleObjects(&b); err != nil {
		t.Fatal(err)
	}
	if len(b.Objects) != 4 {
		t.Fatalf("%d objects, want 4", len(b.Objects))
	}
	if b.Objects[3] != " {not json" {
		t.Errorf("JSON-looking object became %q", b.Objects[3])
	}
	if b.Objects[0] != `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition"}` {
		t.Errorf("YAML object converted to %s", b.Objects[0])
	}
	if b.CsvJSON != `{"kind":"ClusterServiceVersion","metadata":{"name":"b"}}` {
		t.Errorf("CsvJSON %s, want the first CSV", b.CsvJSON)
	}

	bad := declcfg.Bundle{Name: "b", Package: "p", Properties: []property.Property{
		{Type: property.TypeBundleObject, Value: json.RawMessage(`{"data":"not base64!"}`)},
	}}
	if err := LoadBundleObjects(&bad); err == nil || !strings.Contains(err.Error(), `bundle "b": parse property at index 0`) {
		t.Errorf("error %v, want one naming the bundle and the property", err)
	}
}
