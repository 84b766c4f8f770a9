package image

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fastopm/fastopm/pkg/bundle"
)

var (
	catalogLabels = map[string]string{ConfigsLabel: "/configs", "maintainer": "me"}
	bundleLabels  = map[string]string{
		bundle.AnnotationPackage:                            "etcd",
		"operators.operatorframework.io.bundle.channels.v1": "alpha",
	}
)

// catalogImage is a catalog image on an "opm" base layer.
func catalogImage(t *testing.T) v1.Image {
	return imageOf(t, catalogLabels,
		layerOf(t, dir("bin"), file("bin/opm", "binary"), symlink("bin/sh", "/usr/bin/busybox")),
		layerOf(t, dir("configs"), file("configs/etcd/catalog.json", `{"schema":"olm.package","name":"etcd"}`)),
		layerOf(t, dir("tmp/cache"), file("tmp/cache/index", "cache")),
	)
}

func bundleImage(t *testing.T) v1.Image {
	return imageOf(t, bundleLabels, layerOf(t,
		file("manifests/etcd.clusterserviceversion.yaml", "kind: ClusterServiceVersion"),
		file("metadata/annotations.yaml", "annotations: {}"),
		file("tests/scorecard/config.yaml", "kind: Configuration"),
	))
}

func TestExtractCatalog(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	ref := reg.push(t, "catalog:v1", catalogImage(t))
	dst := t.TempDir()
	x, err := Extract(context.Background(), ref, dst)
	if err != nil {
		t.Fatal(err)
	}
	if x.Kind != KindCatalog || x.Dir != filepath.Join(dst, "configs") || x.Labels["maintainer"] != "me" {
		t.Errorf("Extract = kind %v, dir %s, labels %v", x.Kind, x.Dir, x.Labels)
	}
	if got, want := tree(t, dst), []string{"configs/", "configs/etcd/", "configs/etcd/catalog.json"}; !equalStrings(got, want) {
		t.Errorf("tree = %q, want %q (only the configs directory)", got, want)
	}
}

func TestExtractBundle(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	ref := reg.push(t, "bundle:v1", bundleImage(t))
	dst := t.TempDir()
	x, err := Extract(context.Background(), ref, dst)
	if err != nil {
		t.Fatal(err)
	}
	if x.Kind != KindBundle || x.Dir != dst {
		t.Errorf("Extract = kind %v, dir %s", x.Kind, x.Dir)
	}
	want := []string{"manifests/", "manifests/etcd.clusterserviceversion.yaml", "metadata/", "metadata/annotations.yaml"}
	if got := tree(t, dst); !equalStrings(got, want) {
		t.Errorf("tree = %q, want %q", got, want)
	}
}

func TestExtractUnknownImage(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{"b": "2", "a": "1"}, "image type could not be determined, found labels\n  a=1\n  b=2"},
		{nil, "image type could not be determined: image has no labels"},
	} {
		ref := reg.push(t, "plain:latest", imageOf(t, tc.labels, layerOf(t, file("x", "x"))))
		_, err := Extract(context.Background(), ref, t.TempDir())
		var ue *UnknownImageError
		if !errors.As(err, &ue) {
			t.Fatalf("Extract: %v, want *UnknownImageError", err)
		}
		if ue.Ref != ref || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ref) {
			t.Errorf("error %q (ref %q), want it to name %s and contain %q", err, ue.Ref, ref, tc.want)
		}
	}
}

func TestExtractCatalogMissingConfigsDir(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	for label, want := range map[string]string{"/nothere": "is not in the image", "../up": "climbs out", "/file": "is not a directory",
		"/dangling": "is not in the image", "/linkfile": "is not a directory"} {
		ref := reg.push(t, "catalog:bad", imageOf(t, map[string]string{ConfigsLabel: label},
			layerOf(t, file("file", "x"), file("configs/a.json", "{}"), symlink("dangling", "nowhere"), symlink("linkfile", "file"))))
		_, err := Extract(context.Background(), ref, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ref) {
			t.Errorf("label %q: Extract: %v, want an error naming %s and saying %q", label, err, ref, want)
		}
	}
}

func TestLabels(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	ref := reg.push(t, "bundle:v1", bundleImage(t))
	img, err := Pull(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := Labels(img)
	if err != nil {
		t.Fatal(err)
	}
	if KindOf(labels) != KindBundle || labels["operators.operatorframework.io.bundle.channels.v1"] != "alpha" {
		t.Errorf("Labels = %v", labels)
	}
	if before := reg.blobGets.Load(); before != 1 {
		t.Errorf("%d blob requests, want 1 (the config only)", before)
	}
	if l, err := Labels(empty.Image); err != nil || l == nil || len(l) != 0 {
		t.Errorf("Labels(empty) = %v, %v; want an empty map", l, err)
	}
}

func TestCacheDir(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	img := catalogImage(t)
	ref := reg.push(t, "catalog:v1", img)
	cache := t.TempDir()

	pullAll := func() {
		t.Helper()
		dst := t.TempDir()
		x, err := Extract(context.Background(), ref, dst, WithCacheDir(cache))
		if err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(x.Dir, "etcd", "catalog.json")); !strings.Contains(got, "etcd") {
			t.Fatalf("catalog.json = %q", got)
		}
	}
	reg.blobGets.Store(0)
	pullAll()
	if n := reg.blobGets.Load(); n != 4 {
		t.Errorf("first pull: %d blob requests, want 4 (config and 3 layers)", n)
	}
	reg.blobGets.Store(0)
	pullAll()
	if n := reg.blobGets.Load(); n != 0 {
		t.Errorf("second pull: %d blob requests, want 0", n)
	}

	// By digest, the cache answers everything.
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	reg.requests.Store(0)
	if _, err := Extract(context.Background(), reg.host+"/catalog@"+d.String(), t.TempDir(), WithCacheDir(cache)); err != nil {
		t.Fatal(err)
	}
	if n := reg.requests.Load(); n != 0 {
		t.Errorf("pull by digest: %d requests, want 0", n)
	}

	// A corrupt cached layer is detected, dropped and fetched again (once
	// its record, which spares reading it, is gone too).
	if err := os.RemoveAll(filepath.Join(cache, "layers")); err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	ld := digestOf(t, layers[1])
	blob := filepath.Join(cache, "blobs", "sha256", ld.Hex)
	if err := os.WriteFile(blob, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(context.Background(), ref, t.TempDir(), WithCacheDir(cache)); err == nil || !strings.Contains(err.Error(), ld.String()) {
		t.Errorf("Extract with a corrupt cache: %v, want an error naming %s", err, ld)
	}
	if _, err := os.Stat(blob); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("corrupt blob kept: %v", err)
	}
	reg.blobGets.Store(0)
	pullAll()
	if n := reg.blobGets.Load(); n != 1 {
		t.Errorf("after dropping a corrupt blob: %d blob requests, want 1", n)
	}
}

func TestPullIndexPlatforms(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	mk := func(arch string) v1.Image {
		img := imageOf(t, catalogLabels, layerOf(t, file("configs/arch", arch)))
		cf, _ := img.ConfigFile()
		cf = cf.DeepCopy()
		cf.Architecture = arch
		img, err := mutate.ConfigFile(img, cf)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: mk("s390x"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "s390x"}}},
		mutate.IndexAddendum{Add: mk("amd64"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: mk("arm64"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}}},
	)
	ref := reg.host + "/multi:v1"
	r, _ := name.ParseReference(ref)
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatal(err)
	}
	archOf := func(opts ...Option) (string, error) {
		x, err := Extract(context.Background(), ref, t.TempDir(), opts...)
		if err != nil {
			return "", err
		}
		return readFile(t, filepath.Join(x.Dir, "arch")), nil
	}
	want := runtime.GOARCH
	if want != "arm64" && want != "s390x" {
		want = "amd64"
	}
	if got, err := archOf(); err != nil || got != want {
		t.Errorf("default platform: %q, %v; want %q", got, err, want)
	}
	if got, err := archOf(WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"})); err != nil || got != "arm64" {
		t.Errorf("linux/arm64: %q, %v", got, err)
	}
	if _, err := archOf(WithPlatform(v1.Platform{OS: "linux", Architecture: "ppc64le"})); err == nil || !strings.Contains(err.Error(), "linux/ppc64le") {
		t.Errorf("linux/ppc64le: %v, want an error naming the platform", err)
	}
}

func TestPullErrors(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	if _, err := Pull(context.Background(), reg.host+"/missing:v1"); err == nil || !strings.Contains(err.Error(), "missing:v1") {
		t.Errorf("Pull(missing): %v, want an error naming the reference", err)
	}
	if _, err := Pull(context.Background(), "Not A Reference"); err == nil {
		t.Error("Pull(invalid reference): no error")
	}
	ref := reg.push(t, "catalog:v1", catalogImage(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Pull(ctx, ref); !errors.Is(err, context.Canceled) {
		t.Errorf("Pull(canceled): %v, want context.Canceled", err)
	}
	// Canceled after the pull: the lazy layer fetches stop.
	ctx, cancel = context.WithCancel(context.Background())
	img, err := Pull(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := Unpack(ctx, img, t.TempDir()); !errors.Is(err, context.Canceled) {
		t.Errorf("Unpack(canceled): %v, want context.Canceled", err)
	}
}

// TestTLS reaches in-process registries under a host name that is not
// loopback (go-containerregistry always allows plain HTTP to loopback) and
// that httptest's certificate is valid for.
func TestTLS(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewUnstartedServer(registry.New(registry.Logger(discardLogger())))
	tlsSrv.Config.ErrorLog = discardLogger() // refused handshakes are expected
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	tlsAddr := strings.TrimPrefix(tlsSrv.URL, "https://")
	_, port, _ := strings.Cut(tlsAddr, ":")
	ref := "registry.example.com:" + port + "/catalog:v1"
	pushRef, _ := name.ParseReference(ref)
	pushTransport := tlsSrv.Client().Transport.(*http.Transport).Clone()
	pushTransport.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, tlsAddr)
	}
	if err := remote.Write(pushRef, catalogImage(t), remote.WithTransport(pushTransport)); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())

	plain := newRegistry(t, nil)
	plainRef := "registry.example.com:" + strings.Split(plain.host, ":")[1] + "/catalog:v1"
	plain.push(t, "catalog:v1", catalogImage(t))

	for _, tc := range []struct {
		name string
		ref  string
		opts []Option
		ok   bool
	}{
		{"self-signed refused", ref, []Option{withDial(tlsAddr)}, false},
		{"skip TLS verify", ref, []Option{withDial(tlsAddr), WithSkipTLSVerify(true)}, true},
		{"root CAs", ref, []Option{withDial(tlsAddr), WithRootCAs(pool)}, true},
		{"plain HTTP refused", plainRef, []Option{withDial(plain.host)}, false},
		{"plain HTTP allowed", plainRef, []Option{withDial(plain.host), WithPlainHTTP(true)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Pull(context.Background(), tc.ref, tc.opts...)
			if err == nil {
				_, err = Labels(img)
			}
			t.Logf("err: %v", err)
			if (err == nil) != tc.ok {
				t.Fatalf("Pull: %v, want success %v", err, tc.ok)
			}
		})
	}
}

func TestPushAndWrite(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, basicAuth("builder", "s3cret"))
	img := catalogImage(t)
	ref := reg.host + "/pushed:v1"
	auth := WithAuth(staticAuth("builder", "s3cret"))
	if err := Push(context.Background(), img, ref, auth); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), img, ref+"-again", auth); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{ref, ref + "-again"} {
		got, err := Pull(context.Background(), r, auth)
		if err != nil {
			t.Fatal(err)
		}
		gd, _ := got.Digest()
		wd, _ := img.Digest()
		if gd != wd {
			t.Errorf("%s: digest %s, want %s", r, gd, wd)
		}
	}
	if err := Push(context.Background(), img, reg.host+"/denied:v1"); err == nil {
		t.Error("Push without credentials: no error")
	}
}

func TestWriteLayout(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "layout")
	a, b := catalogImage(t), bundleImage(t)
	manifests := func() []v1.Descriptor {
		t.Helper()
		p, err := os.ReadFile(filepath.Join(dir, "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		im, err := v1.ParseIndexManifest(strings.NewReader(string(p)))
		if err != nil {
			t.Fatal(err)
		}
		return im.Manifests
	}
	if err := Write(context.Background(), a, LayoutPrefix+dir); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), b, LayoutPrefix+dir); err != nil {
		t.Fatal(err)
	}
	bd, _ := b.Digest()
	if m := manifests(); len(m) != 1 || m[0].Digest != bd || m[0].MediaType != types.DockerManifestSchema2 {
		t.Errorf("index.json lists %v, want only %s", m, bd)
	}
	if err := WriteLayout(dir, a, "catalog:v1"); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, b, "catalog:v1"); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, a, "other:v1"); err != nil {
		t.Fatal(err)
	}
	if m := manifests(); len(m) != 3 {
		t.Errorf("index.json lists %d images, want 3", len(m))
	}
	if err := Write(context.Background(), a, LayoutPrefix); err == nil {
		t.Error("Write to an empty layout path: no error")
	}
}

// Ensure the test registry's request counting sees plain GETs.
var _ http.Handler = registry.New()

func TestPrefetchedLayers(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var missing atomic.Value
	missing.Store("none")
	reg := newRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, missing.Load().(string)) {
				http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN","message":"gone"}]}`, http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	var layers []v1.Layer
	for i := range 5 {
		layers = append(layers, layerOf(t, file(fmt.Sprintf("configs/%d.json", i), "{}"), file("configs/last", strconv.Itoa(i))))
	}
	ref := reg.push(t, "catalog:v1", imageOf(t, catalogLabels, layers...))

	x, err := Extract(context.Background(), ref, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(x.Dir, "last")); got != "4" {
		t.Errorf("configs/last = %q, want the last layer's 4", got)
	}

	bad := digestOf(t, layers[3])
	missing.Store(bad.String())
	_, err = Extract(context.Background(), ref, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "layer "+bad.String()) {
		t.Errorf("Extract with a missing layer: %v, want an error naming layer %s", err, bad)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestSniffMediaType(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]types.MediaType{
		`{"mediaType":"application/vnd.docker.distribution.manifest.v2+json"}`: types.DockerManifestSchema2,
		`{"schemaVersion":2,"manifests":[]}`:                                   types.OCIImageIndex,
		`{"schemaVersion":2,"config":{},"layers":[]}`:                          types.OCIManifestSchema1,
		`{"schemaVersion":1,"fsLayers":[]}`:                                    types.DockerManifestSchema1,
		`not json`:                                                             "",
	} {
		if got := sniffMediaType([]byte(raw)); got != want {
			t.Errorf("sniffMediaType(%s) = %q, want %q", raw, got, want)
		}
	}
}
