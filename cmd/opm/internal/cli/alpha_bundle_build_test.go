package cli

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fastopm/fastopm/internal/imagetest"
)

// copyBundleManifests copies a test bundle's manifests/ into dir/b/manifests.
func copyBundleManifests(t *testing.T, bundle, dir string) string {
	t.Helper()
	src := filepath.Join(goldenRoot, "bundles", bundle, "manifests")
	dst := filepath.Join(dir, "b", "manifests")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// imageFiles reads an image's files (path to content).
func imageFiles(t *testing.T, img v1.Image) map[string]string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				b, _ := io.ReadAll(tr)
				files[h.Name] = string(b)
			}
		}
		rc.Close()
	}
	return files
}

// TestBundleBuild builds a real bundle into the in-process registry without
// a container engine: the image has the labels and files the generated
// bundle.Dockerfile describes, renders as the directory does, and the
// same input gives the same digest.
func TestBundleBuild(t *testing.T) {
	dir := t.TempDir()
	copyBundleManifests(t, "hyperfoil-bundle-0.26.0", dir)
	t.Chdir(dir)
	reg := imagetest.Registry(t)
	ref := reg + "/hyperfoil-bundle:v0.26.0"
	code, out, errOut := run(t, "--use-http", "alpha", "bundle", "build", "-d", "b/manifests", "-p", "hyperfoil-bundle", "-c", "alpha,stable", "-e", "alpha", "-t", ref)
	if code != 0 || out != "" {
		t.Fatalf("build: exit %d\n%s", code, errOut)
	}
	df, err := os.ReadFile(filepath.Join(dir, "bundle.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	// Every LABEL line of the Dockerfile is a label of the image, and
	// nothing else.
	labels := map[string]string{}
	for _, line := range strings.Split(string(df), "\n") {
		if k, ok := strings.CutPrefix(line, "LABEL "); ok {
			key, val, _ := strings.Cut(k, "=")
			labels[key] = val
		}
	}
	if len(labels) != 6 || len(cf.Config.Labels) != len(labels) {
		t.Errorf("labels %v, Dockerfile's %v", cf.Config.Labels, labels)
	}
	for k, v := range labels {
		if cf.Config.Labels[k] != v {
			t.Errorf("label %s = %q, Dockerfile says %q", k, cf.Config.Labels[k], v)
		}
	}
	// The files are the COPY lines' directories at /manifests/, /metadata/.
	files := imageFiles(t, img)
	want := map[string]string{}
	for _, sub := range []string{"manifests", "metadata"} {
		entries, _ := os.ReadDir(filepath.Join(dir, "b", sub))
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(dir, "b", sub, e.Name()))
			want[sub+"/"+e.Name()] = string(b)
		}
	}
	if len(files) != len(want) || len(want) < 3 {
		t.Errorf("image files %d, want %d", len(files), len(want))
	}
	for p, c := range want {
		if files[p] != c {
			t.Errorf("%s differs in the image", p)
		}
	}
	// The image renders as the directory does.
	_, fromImage, errOut := run(t, "--use-http", "render", ref, "-o", "json")
	_, fromDir, _ := run(t, "render", filepath.Join(dir, "b"), "--alpha-image-ref-template", ref, "-o", "json")
	if fromImage == "" || fromImage != fromDir {
		t.Errorf("render of the image differs from the directory's (%s)\n%s\n%s", errOut, fromImage, fromDir)
	}

	// Reproducible: an OCI layout built again, after the files' times
	// changed, has the same digest as the pushed image.
	pushed, _ := img.Digest()
	later := time.Now().Add(time.Hour)
	_ = filepath.WalkDir(filepath.Join(dir, "b"), func(p string, _ fs.DirEntry, _ error) error { return os.Chtimes(p, later, later) })
	lay := filepath.Join(dir, "layout")
	if code, _, errOut := run(t, "alpha", "bundle", "build", "-d", "b/manifests", "-p", "hyperfoil-bundle", "-c", "alpha,stable", "-e", "alpha", "-t", "oci-layout:"+lay); code != 0 {
		t.Fatalf("build to a layout: %s", errOut)
	}
	p, err := layout.FromPath(lay)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("layout index: %v %v", m, err)
	}
	if m.Manifests[0].Digest != pushed {
		t.Errorf("rebuilt image %s, first build %s", m.Manifests[0].Digest, pushed)
	}
	if !bytes.Contains(df, []byte("COPY b/manifests /manifests/\nCOPY b/metadata /metadata/\n")) {
		t.Errorf("Dockerfile:\n%s", df)
	}
}

func TestBundleGenerateErrors(t *testing.T) {
	dir := t.TempDir()
	copyBundleManifests(t, "hyperfoil-bundle-0.26.0", dir)
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"generate", "-d", "nope", "-p", "a", "-c", "b"}, "Error: stat " + filepath.Join(dir, "nope") + ": no such file or directory\nUsage:"},
		{[]string{"generate", "-d", "b/manifests", "-p", "a"}, "Error: please manually input channels and packageName"},
		{[]string{"generate", "-p", "a"}, `Error: required flag(s) "directory" not set`},
		{[]string{"build", "-d", "b/manifests", "-p", "a", "-c", "b", "-t", "x", "-b", "kaniko"}, "Error: kaniko is not supported image builder"},
	} {
		code, _, errOut := run(t, append([]string{"alpha", "bundle"}, tc.args...)...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
	// An existing annotations.yaml that disagrees stops build without
	// --overwrite, with upstream's words.
	if err := os.MkdirAll(filepath.Join(dir, "b", "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b", "metadata", "annotations.yaml"), []byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "alpha", "bundle", "build", "-d", "b/manifests", "-p", "a", "-c", "b", "-t", "oci-layout:"+filepath.Join(dir, "l"))
	if code != 1 || !strings.Contains(errOut, `Expect field "operators.operatorframework.io.bundle.package.v1" to have value "a" instead of "other"`) {
		t.Errorf("disagreeing annotations: exit %d, %s", code, errOut)
	}
}

// TestBundleGenerateGolden compares the generated files with upstream's
// (testdata/golden/bundle-generate/NOTES.txt).
func TestBundleGenerateGolden(t *testing.T) {
	golden, err := filepath.Abs(filepath.Join(goldenRoot, "golden", "bundle-generate"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, metadata string
		args           []string
	}{
		{"plain", "b/metadata", []string{"-d", "../b/manifests", "-p", "hyperfoil", "-c", "alpha,stable", "-e", "stable"}},
		{"nodefault", "b/metadata", []string{"-d", "../b/manifests", "-p", "hyperfoil", "-c", "alpha"}},
		{"outdir", "out/metadata", []string{"-d", "../b/manifests", "-p", "hyperfoil", "-c", "alpha", "-e", "alpha", "-u", "../out"}},
		{"base", "b/metadata", []string{"-d", "../b/manifests/", "-p", "hyperfoil", "-c", "alpha", "--base-image", "quay.io/x/y:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyBundleManifests(t, "hyperfoil-bundle-0.26.0", dir)
			if err := os.Mkdir(filepath.Join(dir, "wd"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(filepath.Join(dir, "wd"))
			if code, _, errOut := run(t, append([]string{"alpha", "bundle", "generate"}, tc.args...)...); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for file, at := range map[string]string{"bundle.Dockerfile": "wd", "annotations.yaml": tc.metadata} {
				got, err := os.ReadFile(filepath.Join(dir, at, file))
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(filepath.Join(golden, tc.name, file))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s:\n%s\nupstream:\n%s", file, got, want)
				}
			}
			if tc.name == "outdir" {
				if _, err := os.Stat(filepath.Join(dir, "out", "manifests", "hyperfoil-operator.clusterserviceversion.yaml")); err != nil {
					t.Errorf("manifests not copied to the output directory: %v", err)
				}
			}
		})
	}
}
