// Package imagetest helps tests build images from real directories and
// serve them from an in-process registry (go-containerregistry's
// pkg/registry behind httptest). It never touches the network.
package imagetest

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"
)

// Registry starts an in-process registry for the test and returns its
// host:port. It stops when the test ends.
func Registry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// LayerFromDir returns a gzip layer holding the tree at dir under prefix
// (a relative slash path; "" for the root).
func LayerFromDir(t testing.TB, dir, prefix string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		if name == "." || name == "" {
			return nil
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return LayerFromTar(t, buf.Bytes())
}

// LayerFromFiles returns a gzip layer holding the files (slash path to
// content), sorted by path.
func LayerFromFiles(t testing.TB, files map[string]string) v1.Layer {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(files[n]))}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return LayerFromTar(t, buf.Bytes())
}

// LayerFromTar returns a gzip layer of the uncompressed tar stream b.
func LayerFromTar(t testing.TB, b []byte) v1.Layer {
	t.Helper()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Image returns a linux/amd64 image of the layers with the labels.
func Image(t testing.TB, labels map[string]string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Labels = labels
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	return img
}

// Push writes img to ref.
func Push(t testing.TB, ref string, img v1.Image) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}

// BundleLabels reads a bundle directory's metadata/annotations.yaml
// annotations, which bundle images carry as labels.
func BundleLabels(t testing.TB, dir string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Annotations
}

// BundleImage returns a bundle image of the bundle directory dir: its
// manifests/ and metadata/ at the root, its annotations as labels.
func BundleImage(t testing.TB, dir string) v1.Image {
	t.Helper()
	return Image(t, BundleLabels(t, dir), LayerFromDir(t, dir, ""))
}
