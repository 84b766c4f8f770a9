package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const bundleTestdata = "../../../../pkg/bundle/testdata"

// goldenTemplate is the --alpha-image-ref-template the bundle golden files
// were rendered with by upstream opm.
const goldenTemplate = "quay.io/community/{{.Package}}:v{{.Version}}"

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
// prints upstream opm's bytes.
func TestRenderBundleDirGolden(t *testing.T) {
	t.Parallel()
	for _, dir := range bundleDirs(t) {
		name := filepath.Base(dir)
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
