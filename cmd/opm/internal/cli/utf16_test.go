package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16Text is s in UTF-16, little- or big-endian, after its byte order
// mark: what Windows PowerShell 5's Out-File and ">" write.
func utf16Text(s string, bigEndian bool) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune("\ufeff" + s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// TestUTF16Refused: a filter configuration in UTF-16 is refused, naming
// the file and the encoding, as validate and render refuse a catalog file
// in UTF-16 (opm reads both as UTF-8; upstream opm reads such a catalog's
// first object only); nothing is written.
func TestUTF16Refused(t *testing.T) {
	dir := t.TempDir()
	const conf = "schema: olm.filter.v1\npackages:\n- name: etcd\n"
	cat, err := os.ReadFile(filepath.Join(goldenRoot, "updates", "etcd", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []struct {
		name string
		big  bool
	}{{"UTF-16LE", false}, {"UTF-16BE", true}} {
		cfg := filepath.Join(dir, enc.name+".yaml")
		if err := os.WriteFile(cfg, utf16Text(conf, enc.big), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, enc.name+"-out")
		code, stdout, errOut := run(t, "alpha", "filter", filepath.Join(goldenRoot, "updates"), out, "--config", cfg)
		want := "Error: " + cfg + ": " + enc.name + " text (the file starts with a " + enc.name + " byte order mark): opm reads configurations and catalogs as UTF-8; save it as UTF-8\n"
		if code != 2 || stdout != "" || errOut != want {
			t.Errorf("filter %s: exit %d, stdout %q, stderr %q; want exit 2, stderr %q", enc.name, code, stdout, errOut, want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("filter %s: %s written", enc.name, out)
		}

		catDir := filepath.Join(dir, enc.name+"-catalog")
		if err := os.MkdirAll(catDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(catDir, "catalog.yaml"), utf16Text(string(cat), enc.big), 0o644); err != nil {
			t.Fatal(err)
		}
		wantCat := "catalog.yaml:1:1: not a catalog file: " + enc.name + " text (the file starts with a " + enc.name + " byte order mark): opm reads configurations and catalogs as UTF-8; save it as UTF-8"
		for _, verb := range []string{"validate", "render"} {
			code, _, errOut := run(t, verb, catDir)
			if code == 0 || !strings.Contains(errOut, wantCat) {
				t.Errorf("%s %s: exit %d, stderr %q; want %q", verb, enc.name, code, errOut, wantCat)
			}
		}
	}
}
