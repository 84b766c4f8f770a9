package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilterFlags: -o is the format, as for render and migrate, and the
// output directory the argument after INDEX; errors are "Error: ..."
// lines naming the configuration's line, with a suggestion; a summary on
// a terminal only.
func TestFilterFlags(t *testing.T) {
	catalog, err := filepath.Abs(goldenRoot + "/updates")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "filter.yaml")
	write := func(s string) {
		if err := os.WriteFile(conf, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("full: true\npackages:\n  - name: etcd\n")

	code, jsonOut, errOut := run(t, "alpha", "filter", catalog, "--config", conf)
	if code != 0 || !strings.HasPrefix(jsonOut, "{\n    \"schema\": \"olm.package\"") || errOut != "" {
		t.Fatalf("json: exit %d, stderr %q, stdout %.60q", code, errOut, jsonOut)
	}
	code, yamlOut, _ := run(t, "alpha", "filter", catalog, "--config", conf, "-o", "yaml")
	if code != 0 || !strings.HasPrefix(yamlOut, "---\ndefaultChannel: stable\n") {
		t.Fatalf("yaml: exit %d, stdout %.60q", code, yamlOut)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if code, out, errOut := run(t, "alpha", "filter", catalog, dir, "--config", conf, "-o", "yaml"); code != 0 || out != "" {
		t.Fatalf("directory: exit %d, %s", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "etcd", "catalog.yaml")); err != nil || string(b) != yamlOut {
		t.Errorf("the directory's etcd/catalog.yaml is not the stream (%v)", err)
	}

	// The old meaning of -o, a directory, is refused with a hint, and no
	// directory is made.
	wd := t.TempDir()
	t.Chdir(wd)
	code, _, errOut = run(t, "alpha", "filter", catalog, "--config", conf, "-o", "yaml-dir")
	if code != 2 || !strings.HasPrefix(errOut, `Error: invalid --output value "yaml-dir", expected (json|yaml): -o is the format, as in opm render; the output directory is the argument after INDEX`) {
		t.Errorf("-o DIR: exit %d, %q", code, errOut)
	}
	if ents, _ := os.ReadDir(wd); len(ents) != 0 {
		t.Errorf("-o DIR made %v", ents)
	}

	for _, tc := range []struct{ conf, want string }{
		{"packages:\n  - name: etcd\n    minversion: 0.9.2\n", conf + `:3: packages[0]: unknown key "minversion" (known keys: name, defaultChannel, minVersion, maxVersion, channels); did you mean minVersion?` + "\n"},
		{"packages:\n  - name: etdc\n", conf + `:2: packages: package "etdc" is not in the catalog; did you mean etcd?` + "\n"},
	} {
		write(tc.conf)
		code, out, errOut := run(t, "alpha", "filter", catalog, "--config", conf)
		if code != 2 || out != "" || errOut != "Error: "+tc.want {
			t.Errorf("exit %d, stdout %q, stderr %q\nwant Error: %s", code, out, errOut, tc.want)
		}
	}

	// An output directory that cannot be one: the error names it, as the
	// user wrote it (not a temporary directory of ours), and nothing is
	// left behind.
	write("full: true\n")
	file := filepath.Join(wd, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(file, "out") // its parent is a file
	for dir, want := range map[string]string{
		file:   `Error: output directory "` + file + `" is a file, not a directory` + "\n",
		notDir: `Error: mkdir ` + file + `: not a directory` + "\n",
	} {
		if code, out, errOut := run(t, "alpha", "filter", catalog, dir, "--config", conf); code != 2 || out != "" || errOut != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q, want %q", dir, code, out, errOut, want)
		}
	}
	if ents, _ := os.ReadDir(wd); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}

	var out, errb bytes.Buffer
	code = Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Terminal: true}, []string{"alpha", "filter", catalog, "--config", conf})
	if code != 0 || !strings.HasSuffix(errb.String(), "kept 1 package, 2 channels, 5 bundles\n") {
		t.Errorf("terminal: exit %d, stderr %q", code, errb.String())
	}
}
