package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

const bundleTestdata = "../../../../pkg/bundle/testdata"

// goldenTemplate is the --alpha-image-ref-template the bundle golden files
// were rendered with by upstream opm.
const goldenTemplate = "quay.io/community/{{.Package}}:v{{.Version}}"

// largeBundles are the three largest bundles of pkg/bundle/testdata.
var largeBundles = map[string]bool{
	"redkey-operator-0.2.0":            true,
	"3scale-community-operator-0.11.0": true,
	"external-secrets-operator-0.11.0": true,
}

func bundleDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(bundleTestdata, "bundles", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	if len(out) != 12 {
		t.Fatalf("found %d bundle directories, want 12", len(out))
	}
	return out
}

// TestRenderBundleDirGolden: opm render of each real bundle directory
// prints upstream opm's bytes. The race suite leaves out the three
// largest (1 to 2 MB), whose bytes pkg/bundle's TestGolden checks there
// too; the corpus build renders them all.
func TestRenderBundleDirGolden(t *testing.T) {
	t.Parallel()
	for _, dir := range bundleDirs(t) {
		name := filepath.Base(dir)
		if !testutil.Corpus && largeBundles[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(bundleTestdata, "golden", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			code, out, errOut := run(t, "render", dir, "--alpha-image-ref-template", goldenTemplate, "-o", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if out != string(want) {
				t.Errorf("render differs from upstream's golden output\n got: %.400s\nwant: %.400s", out, want)
			}
			if strings.Contains(errOut, "level=fatal") {
				t.Errorf("unexpected fatal log: %s", errOut)
			}
		})
	}
}
