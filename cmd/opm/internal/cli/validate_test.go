package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// runTerminal runs opm as on a terminal: stderr is read by a person.
func runTerminal(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Terminal: true}, args)
	return code, out.String(), errb.String()
}

// A copy of a real catalog broken three independent ways (a YAML error in
// one package's file, a default channel that names no channel in another,
// a bundle file deleted in a third): all three are reported in one run,
// and the package of the file that does not parse is named as not fully
// checked.
func TestValidateReportsEveryProblemAfterAParseError(t *testing.T) {
	dir := filepath.Join(goldenRoot, "validate", "okderators-broken")

	// Scripts: upstream's one log line, upstream's words.
	code, _, stderr := run(t, "validate", dir)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	lines := normalizeLog(t, stderr)
	want := []string{
		`servicemeshoperator/servicemeshoperator.yaml:6:3: olm.package "servicemeshoperator": icon.base64data is null; expected a base64 string (or leave the icon out)`,
		`servicemeshoperator/servicemeshoperator.yaml:7:3: olm.package "servicemeshoperator": icon.type is not a field of an icon; its fields are base64data and mediatype (did you mean mediatype?)`,
		"invalid index:",
		"├── lvms-operator/lvms-operator.v4.16.0-2024-09-02-135203.yaml:9: invalid YAML: did not find expected key",
		`├── no olm.bundle blobs found in package "cert-manager-operator" for olm.channel entries [cert-manager-operator.v1.14.0-2024-08-09-204321]`,
		"├── packages not fully checked, because a file of theirs cannot be read:",
		`│   └── package "lvms-operator" (lvms-operator/lvms-operator.v4.16.0-2024-09-02-135203.yaml)`,
		`└── invalid package "servicemeshoperator":`,
		`    └── invalid channel "stabel":`,
		"        └── channel must contain at least one bundle",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if n := strings.Count(stderr, "level=fatal"); n != 1 || strings.Count(stderr, "\n") != 3 {
		t.Errorf("want two warning lines (every problem of the icon) and one fatal line:\n%s", stderr)
	}

	// People: the tree drawn, in words.
	code, _, stderr = runTerminal(t, "validate", dir)
	wantTerm := `warning: servicemeshoperator/servicemeshoperator.yaml:6:3: olm.package "servicemeshoperator": icon.base64data is null; expected a base64 string (or leave the icon out)
warning: servicemeshoperator/servicemeshoperator.yaml:7:3: olm.package "servicemeshoperator": icon.type is not a field of an icon; its fields are base64data and mediatype (did you mean mediatype?)
invalid index:
├── lvms-operator/lvms-operator.v4.16.0-2024-09-02-135203.yaml:9: invalid YAML: did not find expected key
├── no olm.bundle blobs found in package "cert-manager-operator" for olm.channel entries [cert-manager-operator.v1.14.0-2024-08-09-204321]
├── packages not fully checked, because a file of theirs cannot be read:
│   └── package "lvms-operator" (lvms-operator/lvms-operator.v4.16.0-2024-09-02-135203.yaml)
└── invalid package "servicemeshoperator":
    └── default channel "stabel" names no channel of the package; its channels: "alpha"
`
	if code != 1 || stderr != wantTerm {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, stderr, wantTerm)
	}

	// Tools: a problem per finding, with stable rules.
	code, out, _ := run(t, "validate", "-o", "json", dir)
	var res struct {
		Passed   bool `json:"passed"`
		Problems []struct {
			Rule      string   `json:"rule"`
			Severity  string   `json:"severity"`
			Package   string   `json:"package"`
			File      string   `json:"file"`
			Line      int      `json:"line"`
			Field     string   `json:"field"`
			Unchecked []string `json:"uncheckedPackages"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.Passed {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	var got []string
	for _, p := range res.Problems {
		got = append(got, strings.Join([]string{p.Rule, p.Severity, p.Package, p.File, itoa(p.Line), p.Field, strings.Join(p.Unchecked, ",")}, " "))
	}
	wantJSON := []string{
		"parse error  lvms-operator/lvms-operator.v4.16.0-2024-09-02-135203.yaml 9  lvms-operator",
		"entry-without-bundle error cert-manager-operator cert-manager-operator/cert-manager-operator.yaml 6  ",
		"unknown-default-channel error servicemeshoperator servicemeshoperator/servicemeshoperator.yaml 2  ",
		"schema warning servicemeshoperator servicemeshoperator/servicemeshoperator.yaml 6 icon.base64data ",
		"schema warning servicemeshoperator servicemeshoperator/servicemeshoperator.yaml 7 icon.type ",
	}
	if strings.Join(got, "\n") != strings.Join(wantJSON, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantJSON, "\n"))
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// A parse error alone prints as it always has: one line.
func TestValidateLoneParseError(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a/catalog.yaml", "schema: olm.package\nname: a\ndefaultChannel: s\n---\nschema: olm.channel\npackage: a\n  name: s\n")
	code, _, stderr := run(t, "validate", dir)
	if want := `level=fatal msg="a/catalog.yaml:7: invalid YAML: mapping values are not allowed in this context"` + "\n"; code != 1 || !strings.HasSuffix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	// On a terminal, the package it keeps from being checked is named.
	code, _, stderr = runTerminal(t, "validate", dir)
	want := `invalid index:
├── a/catalog.yaml:7: invalid YAML: mapping values are not allowed in this context
└── packages not fully checked, because a file of theirs cannot be read:
    └── package "a" (a/catalog.yaml)
`
	if code != 1 || stderr != want {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = runTerminal(t, "validate", filepath.Join(goldenRoot, "catalogs", "fixture-olm-magiccatalog-duplicate-package"))
	if code != 1 || stderr != "duplicate package \"test-package\"\n" {
		t.Errorf("a lone problem on a terminal: exit %d, %q", code, stderr)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const validCatalog = `{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"p.v1"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"x.io/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`

// A file of NUL bytes (what a write that never completed leaves) is
// refused by validate, render and serve alike, whatever its size.
func TestNULFileRefusedAlike(t *testing.T) {
	for _, size := range []int{100, 4096} {
		dir := t.TempDir()
		write(t, dir, "c.json", validCatalog)
		write(t, dir, "zeros.yaml", string(make([]byte, size)))
		want := "zeros.yaml: not a catalog file: the file holds only NUL bytes"
		if code, _, stderr := run(t, "validate", dir); code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("validate, %d bytes: exit %d, %s", size, code, stderr)
		}
		if code, out, stderr := run(t, "render", dir); code != 1 || out != "" || !strings.Contains(stderr, want) {
			t.Errorf("render, %d bytes: exit %d, %s", size, code, stderr)
		}
		if _, err := runServeCmd(t, dir, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--cache-only", "-t", ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("serve, %d bytes: %v", size, err)
		}
	}
}

// A JSON stream after a byte order mark is read whole; validate, render
// and serve warn that other tools read its first object only.
func TestByteOrderMarkWarning(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "c.json", "\xef\xbb\xbf"+validCatalog)
	want := "c.json:1: the file starts with a UTF-8 byte order mark and holds a JSON stream of 3 objects: opm reads them all, but upstream opm and catalogd read only the first; remove the byte order mark"
	code, _, stderr := run(t, "validate", dir)
	if code != 0 || !strings.Contains(stderr, "level=warning msg=") || !strings.Contains(stderr, strings.ReplaceAll(want, `"`, `\"`)) {
		t.Errorf("validate: exit %d, %s", code, stderr)
	}
	code, out, _ := run(t, "validate", "-o", "json", dir)
	if code != 0 || !strings.Contains(out, `"rule": "read-differently"`) || !strings.Contains(out, `"severity": "warning"`) {
		t.Errorf("validate -o json: exit %d, %s", code, out)
	}
	if code, _, _ := run(t, "validate", "--strict", dir); code != 1 {
		t.Errorf("validate --strict: exit %d", code)
	}
	code, out, stderr = run(t, "render", dir)
	if code != 0 || strings.Count(out, `"schema"`) != 3 || !strings.Contains(stderr, "level=warning") || !strings.Contains(stderr, "c.json:1: the file starts with a UTF-8 byte order mark") {
		t.Errorf("render: exit %d, %d blobs, %s", code, strings.Count(out, `"schema"`), stderr)
	}
	logs, err := runServeCmd(t, dir, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--cache-only", "-t", "")
	if err != nil || !strings.Contains(logs, "level=warning") || !strings.Contains(logs, "c.json:1: the file starts with a UTF-8 byte order mark") {
		t.Errorf("serve: %v, %s", err, logs)
	}
}

// TestBundleDirNotCatalog: validate and serve given a bundle directory say
// so in one line, as query and diff do, rather than one ".indexignore"
// hint for each of its files (issue 27); exit 1, upstream's code for a
// catalog that does not load.
func TestBundleDirNotCatalog(t *testing.T) {
	dir := filepath.Join(goldenRoot, "bundles", "ack-ecrpublic-controller-1.4.1")
	want := dir + ": a bundle, not a catalog: give a catalog directory (opm render " + dir + " makes a catalog of the bundle)"
	for _, args := range [][]string{
		{"validate", dir},
		{"serve", dir, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--cache-only", "-t", ""},
		{"serve", dir, "-p", "0", "-t", ""},
	} {
		code, out, stderr := run(t, args...)
		if code != 1 || out != "" || !strings.Contains(stderr, "level=fatal msg=\""+want+"\"") || strings.Contains(stderr, ".indexignore") {
			t.Errorf("%v: exit %d, stdout %q, stderr %s", args, code, out, stderr)
		}
	}
	// With -o json or yaml, the structured result is printed, as upstream
	// prints it for any directory (a client parses it), its error saying
	// so; exit 1.
	for _, format := range []string{"json", "yaml"} {
		code, out, stderr := run(t, "validate", "-o", format, dir)
		var res struct {
			Passed bool
			Error  struct{ Message string }
		}
		if err := yaml.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.Passed || res.Error.Message != want || stderr != "" {
			t.Errorf("validate -o %s: exit %d (%v), stdout %q, stderr %q", format, code, err, out, stderr)
		}
	}
	// On a terminal too, where validate draws its tree of problems.
	var out, errb bytes.Buffer
	code := Main(t.Context(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Terminal: true}, []string{"validate", dir})
	if code != 1 || !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), ".indexignore") {
		t.Errorf("validate on a terminal: exit %d, %s", code, errb.String())
	}
	// A catalog that holds directories named manifests and metadata is
	// still a catalog: its problems are reported as they are.
	cat := t.TempDir()
	write(t, cat, "manifests/c.json", validCatalog)
	write(t, cat, "metadata/notes.txt", "not a catalog file")
	if code, _, stderr := run(t, "validate", cat); code != 1 || strings.Contains(stderr, "a bundle, not a catalog") || !strings.Contains(stderr, "notes.txt") {
		t.Errorf("a catalog with manifests/ and metadata/: exit %d, %s", code, stderr)
	}
}
