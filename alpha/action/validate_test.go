package action

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fastopm/fastopm/alpha/model"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/validate/*.txtar")

// archive is a txtar-like test case: a comment, then "-- name --" sections.
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct {
	name string
	data string
}

func parseArchive(s string) archive {
	var a archive
	lines := strings.SplitAfter(s, "\n")
	cur := -1
	for _, l := range lines {
		t := strings.TrimRight(l, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			a.files = append(a.files, archiveFile{name: t[3 : len(t)-3]})
			cur = len(a.files) - 1
			continue
		}
		if cur < 0 {
			a.comment += l
		} else {
			a.files[cur].data += l
		}
	}
	return a
}

func (a archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.name, f.data)
	}
	return b.String()
}

// describe renders a result the way the want sections record it: every
// problem, then the error opm prints.
func describe(res *ValidationResult) string {
	var b strings.Builder
	for _, p := range res.Problems {
		fmt.Fprintf(&b, "%s %s %s:%d: %s\n", p.Severity, p.Rule, p.File, p.Line, p.Message)
	}
	if err := res.Err(); err != nil {
		fmt.Fprintf(&b, "== error ==\n%s\n", err)
		if report := res.Problems.Report(); report != err.Error()+"\n" {
			// What a terminal shows, in this project's words.
			fmt.Fprintf(&b, "== report ==\n%s", report)
		}
	} else {
		b.WriteString("== passed ==\n")
	}
	return b.String()
}

func TestValidateCases(t *testing.T) {
	paths, err := filepath.Glob("testdata/validate/*.txtar")
	if err != nil || len(paths) < 25 {
		t.Fatalf("want at least 25 cases, found %d (%v)", len(paths), err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := parseArchive(string(data))
			fsys := fstest.MapFS{}
			var want *archiveFile
			strict := false
			for i := range a.files {
				f := &a.files[i]
				switch f.name {
				case "want":
					want = f
				case "flags":
					strict = strings.Contains(f.data, "strict")
				default:
					fsys[f.name] = &fstest.MapFile{Data: []byte(f.data)}
				}
			}
			if want == nil {
				t.Fatal("no want section")
			}
			res, err := Validate{FS: fsys, Strict: strict}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := describe(res)
			if *update {
				want.data = got
				if err := os.WriteFile(path, []byte(a.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want.data {
				t.Errorf("got:\n%s\nwant:\n%s", got, want.data)
			}
			// The file name says what the verdict must be.
			passed := res.Passed()
			switch {
			case strings.HasPrefix(name, "valid-"):
				if !passed || len(res.Problems) > 0 {
					t.Errorf("a valid case has problems:\n%s", got)
				}
			case strings.HasPrefix(name, "warning-"):
				if !passed || len(res.Problems.Warnings()) == 0 {
					t.Errorf("want a pass with warnings:\n%s", got)
				}
			default:
				if passed {
					t.Errorf("an invalid case passed")
				}
			}
		})
	}
}

func TestValidateBadFiles(t *testing.T) {
	cases := []struct {
		name, content, rule, want string
	}{
		{"binary", "schema: x\x00\x01\x02", "parse", "bin.yaml:1:10: not a catalog file: binary data (byte 0x00)"},
		{"invalid utf-8", "schema: olm.package\nname: \xff\xfe\n", "parse", "bin.yaml:2:7: not a catalog file: binary data (byte 0xff)"},
		{"json then garbage", "{\"schema\":\"x\"}\n]", "parse", "bin.yaml:2:1: invalid JSON: invalid character ']' looking for beginning of value"},
		{"number overflow", "{\"schema\":\"a\"}\n{\"schema\":\"b\"}\n{\"schema\":\"x\",\"n\":1e999}", "parse", "bin.yaml:3:19: invalid JSON: json: cannot unmarshal number 1e999"},
		{"yaml after two json values", "{\"schema\":\"a\"}\n{\"schema\":\"b\"}\n{\"schema\": \"c\",}", "parse", "bin.yaml:3:16: invalid JSON: invalid character '}' looking for beginning of object key string"},
		{"empty document after a separator", "schema: a\n---\n---\n", "parse", "bin.yaml:3: empty YAML document"},
		{"separator then end", "---", "parse", "bin.yaml:1: empty YAML document"},
		{"comment before the first separator", "# c\n---\nschema: a", "parse", "bin.yaml:1: empty YAML document"},
		{"yaml inf", "schema: x\nn: .inf\n", "parse", "bin.yaml:1: invalid YAML: json: unsupported value: +Inf"},
		{"yaml null key", "schema: x\n~: 1\n", "parse", "bin.yaml:1: invalid YAML: unsupported map key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"bin.yaml": &fstest.MapFile{Data: []byte(tc.content)}}
			res, err := Validate{FS: fsys, SkipSchema: true}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed() || len(res.Problems) != 1 {
				t.Fatalf("want exactly one problem, got %v", res.Problems)
			}
			p := res.Problems[0]
			if string(p.Rule) != tc.rule || !strings.HasPrefix(p.Message, tc.want) {
				t.Fatalf("got %s %q, want %s %q...", p.Rule, p.Message, tc.rule, tc.want)
			}
		})
	}
}

func TestValidateUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("loop", filepath.Join(dir, "loop")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link-to-dir")); err != nil {
		t.Fatal(err)
	}
	res, err := Validate{FS: os.DirFS(dir), SkipSchema: true}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range res.Problems {
		msgs = append(msgs, p.Message)
	}
	got := strings.Join(msgs, "\n")
	for _, want := range []string{"link-to-dir: cannot read", "loop: cannot read"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if res.Passed() {
		t.Error("unreadable files must fail validation")
	}
}

func TestValidateModelOnValidCatalog(t *testing.T) {
	res, err := Validate{FS: os.DirFS("../../testdata/example")}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() || len(res.Problems) != 0 {
		t.Fatalf("example catalog: %v", res.Problems)
	}
	pkg := res.Model["example-operator"]
	if pkg == nil || pkg.DefaultChannel == nil || pkg.DefaultChannel.Name != "stable" {
		t.Fatalf("model: %+v", pkg)
	}
	head, err := pkg.Channels["stable"].Head()
	if err != nil || head.Name != "example-operator.v1.2.0" {
		t.Fatalf("head %v %v", head, err)
	}
	if d := pkg.Channels["stable"].Bundles["example-operator.v1.0.0"].Deprecation; d == nil || !strings.Contains(d.Message, "data-loss") {
		t.Fatalf("deprecation %v", d)
	}
	var _ model.Problems = res.Problems
}
