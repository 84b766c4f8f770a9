package image

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnpackBundle(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	ref := reg.push(t, "bundle:v1", bundleImage(t))

	t.Run("creates the output directory", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "a", "b")
		if err := UnpackBundle(context.Background(), ref, out); err != nil {
			t.Fatal(err)
		}
		want := []string{"manifests/", "manifests/etcd.clusterserviceversion.yaml", "metadata/", "metadata/annotations.yaml",
			"tests/", "tests/scorecard/", "tests/scorecard/config.yaml"}
		if got := tree(t, out); !equalStrings(got, want) {
			t.Errorf("tree = %q, want %q", got, want)
		}
	})

	t.Run("merges into a non-empty directory", func(t *testing.T) {
		out := t.TempDir()
		for p, body := range map[string]string{"mine.txt": "mine", "metadata/annotations.yaml": "stale", "manifests/extra.yaml": "extra"} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(out, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, p), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := UnpackBundle(context.Background(), ref, out); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(out, "mine.txt")); got != "mine" {
			t.Errorf("mine.txt = %q", got)
		}
		if got := readFile(t, filepath.Join(out, "manifests", "extra.yaml")); got != "extra" {
			t.Errorf("manifests/extra.yaml = %q", got)
		}
		if got := readFile(t, filepath.Join(out, "metadata", "annotations.yaml")); got != "annotations: {}" {
			t.Errorf("metadata/annotations.yaml = %q, want the image's", got)
		}
		for _, p := range tree(t, out) {
			if strings.HasPrefix(p, ".unpack-") {
				t.Errorf("temporary directory left behind: %s", p)
			}
		}
	})

	t.Run("check failure writes nothing", func(t *testing.T) {
		out := t.TempDir()
		var checked []string
		check := func(dir string) error {
			checked = tree(t, dir)
			return errors.New("bundle format validation failed: no CSV")
		}
		err := UnpackBundle(context.Background(), ref, out, WithCheck(check))
		if err == nil || !strings.Contains(err.Error(), "no CSV") || !strings.Contains(err.Error(), ref) {
			t.Fatalf("UnpackBundle: %v, want the check's error naming %s", err, ref)
		}
		if len(checked) == 0 {
			t.Error("check saw an empty directory")
		}
		if got := tree(t, out); len(got) != 0 {
			t.Errorf("output directory = %q, want empty", got)
		}
	})

	t.Run("output is a file", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(out, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := UnpackBundle(context.Background(), ref, out); err == nil || !strings.Contains(err.Error(), "is not a directory") {
			t.Errorf("UnpackBundle: %v, want \"is not a directory\"", err)
		}
	})

	t.Run("unsafe layer", func(t *testing.T) {
		bad := reg.push(t, "bundle:bad", imageOf(t, bundleLabels, layerOf(t, file("manifests/ok.yaml", "x"), symlink("metadata", "/etc"))))
		out := t.TempDir()
		err := UnpackBundle(context.Background(), bad, out)
		if !errors.Is(err, ErrUnsafeEntry) || !strings.Contains(err.Error(), bad) {
			t.Fatalf("UnpackBundle: %v, want ErrUnsafeEntry naming %s", err, bad)
		}
		if got := tree(t, out); len(got) != 0 {
			t.Errorf("output directory = %q, want empty", got)
		}
	})
}
