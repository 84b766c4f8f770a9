package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"text/template"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/internal/testutil"
)

// goldenTemplate is the --alpha-image-ref-template the golden files were
// rendered with.
const goldenTemplate = "quay.io/community/{{.Package}}:v{{.Version}}"

// goldenBundles lists the bundle directories under testdata/bundles.
func goldenBundles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", "bundles"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) != 12 {
		t.Fatalf("found %d bundle directories in testdata/bundles, want 12", len(dirs))
	}
	return dirs
}

// postProcess applies what opm render does after rendering a bundle:
// olm.bundle.object and olm.csv.metadata properties move to the end
// (stable) and relatedImages are sorted by image.
func postProcess(b *declcfg.Bundle) {
	var others, objs []property.Property
	for _, p := range b.Properties {
		switch p.Type {
		case property.TypeBundleObject, property.TypeCSVMetadata:
			objs = append(objs, p)
		default:
			others = append(others, p)
		}
	}
	b.Properties = append(others, objs...)
	sort.Slice(b.RelatedImages, func(i, j int) bool {
		return b.RelatedImages[i].Image < b.RelatedImages[j].Image
	})
}

// encodeLikeOpm encodes v as upstream's declcfg.WriteJSON does.
func encodeLikeOpm(t *testing.T, v any) []byte {
	t.Helper()
	b, err := testutil.OpmJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func renderGolden(t *testing.T, dir string) *declcfg.Bundle {
	t.Helper()
	tmpl := template.Must(template.New("image").Parse(goldenTemplate))
	b, warnings, err := RenderDir(filepath.Join("testdata", "bundles", dir), Options{ImageRefTemplate: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		t.Log(w)
	}
	return b
}

// TestGolden is the acceptance test: rendering each real bundle and
// post-processing it as opm render does gives exactly upstream's output.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, dir := range goldenBundles(t) {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			b := renderGolden(t, dir)
			postProcess(b)
			got := encodeLikeOpm(t, b)
			want, err := os.ReadFile(filepath.Join("testdata", "golden", dir+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from testdata/golden/%s.json at byte %d\n%s", dir, firstDiff(got, want), diffContext(got, want))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func diffContext(got, want []byte) string {
	i := firstDiff(got, want)
	clip := func(b []byte) string {
		lo, hi := max(0, i-200), min(len(b), i+200)
		return string(b[lo:hi])
	}
	return "got:  ..." + clip(got) + "...\nwant: ..." + clip(want) + "..."
}

// BenchmarkRenderGolden renders the twelve real bundles.
func BenchmarkRenderGolden(b *testing.B) {
	tmpl := template.Must(template.New("image").Parse(goldenTemplate))
	entries, err := os.ReadDir(filepath.Join("testdata", "bundles"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			if _, _, err := RenderDir(filepath.Join("testdata", "bundles", e.Name()), Options{ImageRefTemplate: tmpl}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
