package indexignore

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// kept walks fsys like upstream's loader and returns the files it would
// parse.
func kept(t *testing.T, fsys fs.FS, m *Matcher) []string {
	t.Helper()
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !m.Match(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	return files
}

func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

func TestLoadPatterns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fsys fs.FS
		want []string // kept files, in walk order
	}{
		{
			name: "percona-everest layout",
			fsys: mapFS(map[string]string{
				".indexignore":                            perconaEverest,
				"README.md":                               "",
				"Makefile":                                "",
				"everest-operator/catalog.yaml":           "",
				"everest-operator/veneer.yaml":            "",
				"everest-operator/objects/csv.yaml":       "",
				"everest-operator/notes.txt":              "",
				"victoriametrics-operator/catalog.yaml":   "",
				"victoriametrics-operator/veneer.yaml":    "",
				"victoriametrics-operator/objects/a.json": "",
			}),
			want: []string{
				"everest-operator/catalog.yaml",
				"everest-operator/veneer.yaml",
				"victoriametrics-operator/catalog.yaml",
				"victoriametrics-operator/veneer.yaml",
			},
		},
		{
			name: "fixture-deprecations-all-indexignored",
			fsys: os.DirFS("testdata/fixture-deprecations-all-indexignored"),
			want: nil,
		},
		{
			name: "nested files and walk order",
			fsys: mapFS(map[string]string{
				".indexignore":    "*.md\nx",
				"a/.indexignore":  "!x\n/local.yaml",
				"-b/.indexignore": "!x",
				"a/x":             "",
				"a/c/x":           "",
				"a/local.yaml":    "",
				"a/c/local.yaml":  "",
				"-b/x":            "",
				"x":               "",
				"doc.md":          "",
				"a/doc.md":        "",
				"catalog.json":    "",
			}),
			want: []string{"a/c/local.yaml", "a/c/x", "a/x", "catalog.json"},
		},
		{
			name: "no .indexignore",
			fsys: mapFS(map[string]string{"a/b.yaml": "", "c.json": ""}),
			want: []string{"a/b.yaml", "c.json"},
		},
		{
			name: "directory named .indexignore holds no patterns",
			fsys: mapFS(map[string]string{".indexignore/x": "", "x": ""}),
			want: []string{".indexignore/x", "x"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := load(tc.fsys)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := kept(t, tc.fsys, m); !slices.Equal(got, tc.want) {
				t.Errorf("kept files = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPerconaTestdata(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/percona-everest.indexignore")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != perconaEverest {
		t.Errorf("testdata/percona-everest.indexignore differs from perconaEverest:\n%s", b)
	}
}

func TestAddErrors(t *testing.T) {
	t.Parallel()
	// bufio.Scanner's limit: a line of 64 KiB - 1 bytes is fine, one more
	// byte is an error, as in upstream.
	longest := strings.Repeat("a", bufio.MaxScanTokenSize-1)
	tooLong := strings.Repeat("a", bufio.MaxScanTokenSize)
	tests := []struct {
		name    string
		dir     string
		content string
		wantErr error
	}{
		{name: "root", dir: ".", content: "x"},
		{name: "nested", dir: "a/b", content: "x"},
		{name: "longest line", dir: ".", content: "x\n" + longest + "\n"},
		{name: "longest last line", dir: ".", content: "x\n" + longest},
		{name: "line too long", dir: ".", content: "x\n" + tooLong + "\n", wantErr: bufio.ErrTooLong},
		{name: "last line too long", dir: ".", content: tooLong, wantErr: bufio.ErrTooLong},
		{name: "empty dir", dir: "", content: "x", wantErr: fs.ErrInvalid},
		{name: "absolute dir", dir: "/a", content: "x", wantErr: fs.ErrInvalid},
		{name: "trailing slash", dir: "a/", content: "x", wantErr: fs.ErrInvalid},
		{name: "dot-dot", dir: "../a", content: "x", wantErr: fs.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var m Matcher
			err := m.Add(tc.dir, []byte(tc.content))
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("Add = %v, want %v", err, tc.wantErr)
			}
			file := "x"
			if tc.dir != "." && tc.dir != "" {
				file = tc.dir + "/x"
			}
			// Every content starts with the pattern x; a failed Add leaves
			// the Matcher unchanged.
			if got, want := m.Match(file), err == nil; got != want {
				t.Errorf("Match(%q) = %v, want %v", file, got, want)
			}
		})
	}
}

func TestLoadError(t *testing.T) {
	t.Parallel()
	fsys := mapFS(map[string]string{
		"a/.indexignore": strings.Repeat("x", bufio.MaxScanTokenSize),
		"b.yaml":         "",
	})
	m, err := load(fsys)
	if !errors.Is(err, bufio.ErrTooLong) {
		t.Fatalf("Load error = %v, want %v", err, bufio.ErrTooLong)
	}
	if m != nil {
		t.Errorf("Load returned a Matcher with an error")
	}
	if !strings.Contains(err.Error(), "a/.indexignore") {
		t.Errorf("error %q does not name the file", err)
	}

	if _, err := load(fstest.MapFS{}); err != nil {
		t.Errorf("load(empty) = %v", err)
	}
}

func TestAddAppends(t *testing.T) {
	t.Parallel()
	var m Matcher
	for _, content := range []string{"a\nb", "!a"} {
		if err := m.Add("d", []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	for p, want := range map[string]bool{"d/a": false, "d/b": true, "a": false} {
		if got := m.Match(p); got != want {
			t.Errorf("Match(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestZeroMatcher(t *testing.T) {
	t.Parallel()
	var m Matcher
	for p, want := range map[string]bool{"a": false, "": false, "a/.indexignore": true} {
		if got := m.Match(p); got != want {
			t.Errorf("Match(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	var m Matcher
	for dir, content := range map[string]string{".": perconaEverest, "a": "!*.md\n[ab]?.yaml", "a/b": "c/"} {
		if err := m.Add(dir, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"a/b/c/objects/x.yaml", "a/README.md", "catalog.yaml"} {
		if n := testing.AllocsPerRun(100, func() { m.Match(p) }); n != 0 {
			t.Errorf("Match(%q) allocates %v times", p, n)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add([]byte(perconaEverest), "x/y", "x/y/objects/a.json")
	f.Add([]byte("a/**/\n!b\n[\n\\#c\n/d/"), "-a", "-a/b/c")
	f.Add([]byte("**/\n//\n!\n/**\nfoo\\ "), ".", "")
	f.Fuzz(func(t *testing.T, content []byte, dir, p string) {
		var m Matcher
		err := m.Add(dir, content)
		got := m.Match(p)
		if got != m.Match(p) {
			t.Fatalf("Match(%q) is not deterministic", p)
		}
		if strings.HasSuffix("/"+p, "/"+FileName) && !got {
			t.Fatalf("Match(%q) = false for a %s", p, FileName)
		}
		if err != nil || dir == "." {
			return
		}
		// The order of Add calls for different directories does not change
		// verdicts.
		root := []byte("*\n!*.yaml")
		var a, b Matcher
		if a.Add(".", root) != nil || a.Add(dir, content) != nil ||
			b.Add(dir, content) != nil || b.Add(".", root) != nil {
			t.Fatal("Add failed the second time")
		}
		if a.Match(p) != b.Match(p) {
			t.Fatalf("Match(%q) depends on the order of Add", p)
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	var m Matcher
	if err := m.Add(".", []byte(perconaEverest)); err != nil {
		b.Fatal(err)
	}
	var nested Matcher
	for dir, content := range map[string]string{".": perconaEverest, "a": "!*.md", "a/b": "c/"} {
		if err := nested.Add(dir, []byte(content)); err != nil {
			b.Fatal(err)
		}
	}
	paths := []string{
		"percona-server-mongodb-operator/catalog.yaml",
		"percona-server-mongodb-operator/objects/csv.yaml",
		"README.md",
		"a/b/c/d/veneer.yaml",
	}
	for _, bc := range []struct {
		name string
		m    *Matcher
	}{{"root", &m}, {"nested", &nested}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				bc.m.Match(paths[i%len(paths)])
			}
		})
	}
}

func ExampleMatcher() {
	catalog := fstest.MapFS{
		".indexignore":          {Data: []byte("# only catalog data\n*.md\n/scripts/\n")},
		"README.md":             {Data: []byte("# my catalog\n")},
		"scripts/render.sh":     {Data: []byte("#!/bin/sh\n")},
		"etcd/catalog.yaml":     {Data: []byte("schema: olm.package\nname: etcd\n")},
		"etcd/.indexignore":     {Data: []byte("!NOTES.md\n")},
		"etcd/NOTES.md":         {Data: []byte("kept: parsed as catalog data\n")},
		"etcd/CHANGELOG.md":     {Data: []byte("ignored\n")},
		"etcd/scripts/keep.yml": {Data: []byte("kept: /scripts/ is anchored at the root\n")},
	}
	// One walk: each directory's .indexignore is added before its files
	// are matched.
	var m Matcher
	_ = fs.WalkDir(catalog, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			if content, err := fs.ReadFile(catalog, path.Join(p, FileName)); err == nil {
				return m.Add(p, content)
			}
		case d.Name() != FileName && !m.Match(p):
			fmt.Println(p)
		}
		return nil
	})
	// Output:
	// etcd/NOTES.md
	// etcd/catalog.yaml
	// etcd/scripts/keep.yml
}

// load walks fsys once and returns a Matcher with every .indexignore in
// it; the loader (declcfg.ListFiles) adds them as its walk meets them.
func load(fsys fs.FS) (*Matcher, error) {
	m := &Matcher{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != FileName {
			return nil
		}
		content, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return m.Add(path.Dir(p), content)
	})
	if err != nil {
		return nil, fmt.Errorf("load %s files: %w", FileName, err)
	}
	return m, nil
}
