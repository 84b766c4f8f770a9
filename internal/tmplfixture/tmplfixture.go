// Package tmplfixture serves the real bundle images of testdata/bundles
// from a local registry, for the template tests, the golden recorder
// (hack/templategolden) and the template benchmark (hack/templatebench):
// bundle images built reproducibly from bundle directories, a registry
// (go-containerregistry's pkg/registry) on a loopback port, optionally
// answering every request after a delay, and the substitution of the
// registry's address into template fixtures. It never touches the network.
package tmplfixture

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"
)

// Placeholder stands for the registry's host:port in template fixtures
// and golden outputs.
const Placeholder = "REGISTRY"

// Server is a running registry.
type Server struct {
	// Host is its host:port.
	Host  string
	srv   *http.Server
	ln    net.Listener
	delay atomic.Int64
}

// SetDelay makes the registry answer every request d after it arrived
// (0: at once), as a distant registry answers.
func (s *Server) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// Close stops the registry.
func (s *Server) Close() error { return s.srv.Close() }

// Start starts a registry on a free loopback port, answering at once
// until SetDelay says otherwise.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Host: ln.Addr().String(), ln: ln}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	s.srv = &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := time.Duration(s.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		reg.ServeHTTP(w, r)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// BundleImage builds the bundle image of the bundle directory dir: one
// layer holding its manifests/ and metadata/ at the root (files sorted,
// no timestamps, so the same directory always gives the same digest) and
// its annotations as labels.
func BundleImage(dir string) (v1.Image, error) {
	files := map[string][]byte{}
	for _, sub := range []string{"manifests", "metadata"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			files[filepath.ToSlash(rel)] = data
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return BundleImageFromFiles(files)
}

// BundleImageFromFiles builds a bundle image of the files (slash path to
// content); labels come from metadata/annotations.yaml.
func BundleImageFromFiles(files map[string][]byte) (v1.Image, error) {
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(files["metadata/annotations.yaml"], &ann); err != nil {
		return nil, fmt.Errorf("metadata/annotations.yaml: %w", err)
	}
	names := make([]string, 0, len(files))
	dirs := map[string]bool{}
	for n := range files {
		names = append(names, n)
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		names = append(names, d+"/")
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		if strings.HasSuffix(n, "/") {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: n, Mode: 0o755}); err != nil {
				return nil, err
			}
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(files[n]))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Labels = ann.Annotations
	return mutate.ConfigFile(img, cf)
}

// Push writes img to ref (plain HTTP to a loopback registry).
func Push(ref string, img v1.Image) error {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return err
	}
	return remote.Write(r, img)
}

// Repo is where the bundle directory named dirName (operator-version) is
// pushed: operator:version under host.
func Repo(host, dirName string) string {
	i := strings.LastIndex(dirName, "-")
	return host + "/" + dirName[:i] + ":" + dirName[i+1:]
}

// PushBundles builds and pushes every bundle directory under root to
// Repo(host, its name), and returns the references pushed, sorted.
func PushBundles(host, root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		img, err := BundleImage(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		ref := Repo(host, e.Name())
		if err := Push(ref, img); err != nil {
			return nil, fmt.Errorf("push %s: %w", ref, err)
		}
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	return refs, nil
}

// Expand replaces the placeholder in a fixture with the registry's host.
func Expand(fixture []byte, host string) []byte {
	return bytes.ReplaceAll(fixture, []byte(Placeholder), []byte(host))
}

// Normalize replaces the registry's host in an output with the
// placeholder.
func Normalize(out []byte, host string) []byte {
	return bytes.ReplaceAll(out, []byte(host), []byte(Placeholder))
}

// SyntheticVersions are the versions of the benchmark's bundles: 1.m.p
// for m in 0..9, p in 0..2 (30 bundles, ten minor versions).
func SyntheticVersions() []string {
	var vs []string
	for m := range 10 {
		for p := range 3 {
			vs = append(vs, fmt.Sprintf("1.%d.%d", m, p))
		}
	}
	return vs
}

// PushSynthetic pushes one bundle image per version of SyntheticVersions,
// made from the real bundle microcks-1.5.2 under bundlesDir with every
// "1.5.2" (CSV name, version, image tags) replaced by the version, to
// host/bench/microcks:VERSION, and returns the semver template that lists
// them all (stable channel, major and minor channels).
func PushSynthetic(host, bundlesDir string) ([]byte, error) {
	src := filepath.Join(bundlesDir, "microcks-1.5.2")
	orig := map[string][]byte{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		orig[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		return nil, err
	}
	var tmpl bytes.Buffer
	tmpl.WriteString("schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\nstable:\n  bundles:\n")
	for _, v := range SyntheticVersions() {
		files := map[string][]byte{}
		for n, data := range orig {
			files[strings.ReplaceAll(n, "1.5.2", v)] = bytes.ReplaceAll(data, []byte("1.5.2"), []byte(v))
		}
		img, err := BundleImageFromFiles(files)
		if err != nil {
			return nil, err
		}
		ref := host + "/bench/microcks:" + v
		if err := Push(ref, img); err != nil {
			return nil, err
		}
		fmt.Fprintf(&tmpl, "    - image: %s\n", ref)
	}
	return tmpl.Bytes(), nil
}
