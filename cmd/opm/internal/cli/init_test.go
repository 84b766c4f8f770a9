package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitGolden compares `opm init` with upstream's recorded output
// (testdata/golden/init/NOTES.txt says how it was made).
func TestInitGolden(t *testing.T) {
	dir := filepath.Join(goldenRoot, "golden", "init")
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"plain.json", []string{"foo"}},
		{"png.json", []string{"etcd", "-c", "stable", "-d", filepath.Join(dir, "README.md"), "-i", filepath.Join(dir, "a.png")}},
		{"jpg.yaml", []string{"etcd", "-c", "alpha", "-d", filepath.Join(dir, "README.md"), "-i", filepath.Join(dir, "a.jpg"), "-o", "yaml"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			code, out, errOut := run(t, append([]string{"init"}, tc.args...)...)
			if code != 0 || out != string(want) {
				t.Fatalf("exit %d, stderr %q\ngot:\n%s\nwant:\n%s", code, errOut, out, want)
			}
		})
	}
}

func TestInitErrors(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	text, empty := write("icon.txt", "hello"), write("empty", "")
	svg := write("icon.svg", `<svg xmlns="http://www.w3.org/2000/svg"/>`)
	for _, tc := range []struct {
		args    []string
		wantErr string // upstream's message
	}{
		{[]string{"foo", "-i", text}, `msg="detected invalid type \"\": not an image"`},
		{[]string{"foo", "-i", empty}, `msg="detect icon mediatype: Empty buffer"`},
		{[]string{"foo", "-i", filepath.Join(tmp, "nosuch")}, `msg="open icon file: open ` + filepath.Join(tmp, "nosuch") + `: no such file or directory"`},
		{[]string{"foo", "-d", filepath.Join(tmp, "nosuch")}, `msg="open description file: open `},
		{[]string{"foo", "-o", "xml"}, `msg="invalid --output value \"xml\", expected (json|yaml)"`},
		{[]string{}, "Error: accepts 1 arg(s), received 0"},
	} {
		code, out, errOut := run(t, append([]string{"init"}, tc.args...)...)
		if code != 1 || out != "" || !strings.Contains(errOut, tc.wantErr) {
			t.Errorf("init %q: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, out, errOut, tc.wantErr)
		}
	}
	// A self-closing SVG, which upstream refuses, is accepted (docs/init.md).
	code, out, errOut := run(t, "init", "foo", "-i", svg, "-o", "yaml")
	if code != 0 || !strings.Contains(out, "mediatype: image/svg+xml") {
		t.Errorf("svg icon: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestHelpAlpha: the alpha command and --alpha-* flags show in help only
// with HELP_ALPHA=true, as upstream; they work either way.
func TestHelpAlpha(t *testing.T) {
	for _, show := range []bool{false, true} {
		if show {
			t.Setenv("HELP_ALPHA", "true")
		} else {
			t.Setenv("HELP_ALPHA", "")
		}
		_, rootHelp, _ := run(t, "--help")
		_, renderHelp, _ := run(t, "render", "--help")
		if got := strings.Contains(rootHelp, "\n  alpha "); got != show {
			t.Errorf("HELP_ALPHA=%v: alpha listed in help: %v", show, got)
		}
		if got := strings.Contains(renderHelp, "--alpha-image-ref-template string   (ALPHA: This flag will be removed"); got != show {
			t.Errorf("HELP_ALPHA=%v: render's alpha flag listed: %v\n%s", show, got, renderHelp)
		}
		if !strings.Contains(rootHelp, "To view help related to alpha features, set HELP_ALPHA=true in the environment.") {
			t.Errorf("root help lacks upstream's HELP_ALPHA hint:\n%s", rootHelp)
		}
		if code, out, _ := run(t, "alpha", "--help"); code != 0 || !strings.Contains(out, "bundle") {
			t.Errorf("HELP_ALPHA=%v: opm alpha --help: exit %d\n%s", show, code, out)
		}
	}
}
