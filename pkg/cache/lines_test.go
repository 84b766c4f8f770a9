package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
	"testing/fstest"
)

// linesCatalog has two files whose blobs must come out in file order and,
// within a file, in the file's order, whatever the parallel load does.
var linesCatalog = fstest.MapFS{
	"a/catalog.yaml": {Data: []byte(`schema: olm.package
name: a
defaultChannel: stable
---
schema: olm.channel
package: a
name: stable
entries:
  - name: a.v1
---
schema: olm.bundle
package: a
name: a.v1
image: x.io/a:1
properties:
  - type: olm.package
    value: {packageName: a, version: 1.0.0}
---
schema: custom.note
package: a
name: stable
text: "<b>&</b>"
`)},
	"b/catalog.json": {Data: []byte(`{"schema":"olm.package","name":"b","defaultChannel":"stable"}
{"schema":"olm.channel","package":"b","name":"stable","entries":[{"name":"b.v1"}]}
{"schema":"olm.bundle","package":"b","name":"b.v1","image":"x.io/b:1","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}}]}
`)},
}

// wantLines is catalogd's catalog.jsonl for linesCatalog: encoding/json's
// encoding of each blob as a map, in walk order.
const wantLines = `{"defaultChannel":"stable","name":"a","schema":"olm.package"}
{"entries":[{"name":"a.v1"}],"name":"stable","package":"a","schema":"olm.channel"}
{"image":"x.io/a:1","name":"a.v1","package":"a","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}],"schema":"olm.bundle"}
{"name":"stable","package":"a","schema":"custom.note","text":"<b>&</b>"}
{"defaultChannel":"stable","name":"b","schema":"olm.package"}
{"entries":[{"name":"b.v1"}],"name":"stable","package":"b","schema":"olm.channel"}
{"image":"x.io/b:1","name":"b.v1","package":"b","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}}],"schema":"olm.bundle"}
`

func TestLines(t *testing.T) {
	check := func(t *testing.T, snap *Snapshot) {
		t.Helper()
		l := snap.Lines()
		if l == nil {
			t.Fatal("no lines")
		}
		got, err := io.ReadAll(l.All())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != wantLines {
			t.Fatalf("lines:\n%s\nwant:\n%s", got, wantLines)
		}
		if l.Len() != 7 || l.Size() != int64(len(wantLines)) {
			t.Errorf("%d lines, %d bytes", l.Len(), l.Size())
		}
		for _, tc := range []struct {
			schema, pkg, name string
			want              []int32
		}{
			{"", "", "", []int32{0, 1, 2, 3, 4, 5, 6}},
			{"olm.package", "", "", []int32{0, 4}},
			{"", "a", "", []int32{1, 2, 3}}, // an olm.package has no package key
			{"", "", "a", []int32{0}},
			{"", "", "stable", []int32{1, 3, 5}},
			{"olm.channel", "", "stable", []int32{1, 5}},
			{"", "b", "stable", []int32{5}},
			{"olm.channel", "b", "stable", []int32{5}},
			{"olm.bundle", "a", "", []int32{2}},
			{"olm.bundle", "b", "a.v1", nil},
			{"nope", "", "", nil},
			{"", "nope", "", nil},
			{"", "", "nope", nil},
		} {
			got := l.Select(tc.schema, tc.pkg, tc.name)
			if !slicesEqual(got, tc.want) {
				t.Errorf("Select(%q, %q, %q) = %v, want %v", tc.schema, tc.pkg, tc.name, got, tc.want)
			}
		}
		spans := l.Spans(l.Select("", "a", ""))
		if len(spans) != 1 {
			t.Fatalf("spans %v: adjacent lines are one run", spans)
		}
		buf := make([]byte, spans[0].N)
		if _, err := l.ReadAt(buf, spans[0].Off); err != nil {
			t.Fatal(err)
		}
		if want := strings.Join(strings.Split(wantLines, "\n")[1:4], "\n") + "\n"; string(buf) != want {
			t.Errorf("package a:\n%s\nwant\n%s", buf, want)
		}
		for i := range l.Len() {
			off, n := l.Line(i)
			line := make([]byte, n)
			if _, err := l.ReadAt(line, off); err != nil {
				t.Fatal(err)
			}
			var m struct{ Schema, Package, Name string }
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatal(err)
			}
			if s, p, nm := l.Meta(i); s != m.Schema || p != m.Package || nm != m.Name {
				t.Errorf("line %d: meta %q %q %q, line %s", i, s, p, nm, line)
			}
		}
		if snap.Modified.IsZero() {
			t.Error("no modification time")
		}
	}
	t.Run("cold start", func(t *testing.T) {
		for range 5 { // the parallel load's order varies
			snap, _, err := build(t.Context(), linesCatalog, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			check(t, snap)
			snap.Close()
		}
	})
	t.Run("saved", func(t *testing.T) {
		dir := t.TempDir()
		snap, err := buildDir(t.Context(), linesCatalog, dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		check(t, snap)
		snap.Close()
		snap, err = OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		if err := snap.Verify(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := snap.VerifyLines(t.Context()); err != nil {
			t.Fatal(err)
		}
		check(t, snap)
	})
}

// A cache built without the lines holds none, is smaller, and gets
// catalogd's lines, the same as a cache built with them, from the catalog.
func TestLinesDerived(t *testing.T) {
	with, without := t.TempDir(), t.TempDir()
	snap, err := buildDir(t.Context(), linesCatalog, with, "test")
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	if snap, err = buildDirLines(t.Context(), linesCatalog, without, "test", false); err != nil {
		t.Fatal(err)
	}
	snap.Close()
	a, _ := os.Stat(filepath.Join(with, FileName))
	b, _ := os.Stat(filepath.Join(without, FileName))
	if b.Size() >= a.Size()-int64(len(wantLines)) {
		t.Errorf("cache without lines: %d bytes, with: %d; the lines are %d", b.Size(), a.Size(), len(wantLines))
	}
	for range 3 { // the parallel walk's order varies
		snap, err := OpenDir(without)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Lines() != nil {
			t.Fatal("a cache built without lines has lines")
		}
		if err := snap.Verify(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := snap.VerifyLines(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := deriveLines(t.Context(), linesCatalog, snap, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if err := snap.AddLines(nil); err == nil {
			t.Error("AddLines twice: no error")
		}
		got, err := io.ReadAll(snap.Lines().All())
		if err != nil || string(got) != wantLines {
			t.Fatalf("derived lines: %v\n%s\nwant\n%s", err, got, wantLines)
		}
		if l := snap.Lines(); len(l.Select("olm.channel", "", "stable")) != 2 || len(l.Select("", "a", "")) != 3 {
			t.Error("the derived lines' index does not answer")
		}
		snap.Close()
	}
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A damaged byte in the lines makes the cache corrupt for VerifyLines
// (and only for it: Verify checks what gRPC serves).
func TestLinesVerify(t *testing.T) {
	dir := t.TempDir()
	snap, err := buildDir(t.Context(), linesCatalog, dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	off := snap.Lines().off + 10
	snap.Close()
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[off] ^= 0x20
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err = OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if err := snap.Verify(t.Context()); err != nil {
		t.Fatalf("Verify reads the lines: %v", err)
	}
	err = snap.VerifyLines(t.Context())
	var rej *RejectedError
	if !errors.As(err, &rej) || rej.Reason != Corrupt || !strings.Contains(err.Error(), "JSON lines") {
		t.Fatalf("VerifyLines = %v, want a corrupt cache naming the JSON lines", err)
	}
}

// The lines of the real catalogs are their blobs, one per line, each
// canonical JSON; a saved cache's lines equal a cold start's.
func TestLinesRealCatalogs(t *testing.T) {
	names := []string{"kube-descheduler-v4.12"}
	if testutil.Corpus {
		names = append(names, "percona-everest")
	}
	for _, name := range names {
		fsys := os.DirFS(filepath.Join("../../testdata/catalogs", name))
		cold, _, err := build(t.Context(), fsys, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		saved, err := buildDir(t.Context(), fsys, t.TempDir(), "test")
		if err != nil {
			t.Fatal(err)
		}
		grpcOnly, err := buildDirLines(t.Context(), fsys, t.TempDir(), "test", false)
		if err != nil {
			t.Fatal(err)
		}
		if err := deriveLines(t.Context(), fsys, grpcOnly, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		a, _ := io.ReadAll(cold.Lines().All())
		b, _ := io.ReadAll(saved.Lines().All())
		c, _ := io.ReadAll(grpcOnly.Lines().All())
		cold.Close()
		saved.Close()
		grpcOnly.Close()
		if !bytes.Equal(a, b) || !bytes.Equal(a, c) || len(a) == 0 {
			t.Fatalf("%s: cold start, saved cache and derived lines differ (%d, %d, %d bytes)", name, len(a), len(b), len(c))
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(a, []byte("\n")), []byte("\n")) {
			if !json.Valid(line) {
				t.Fatalf("%s: line %d is not JSON", name, i+1)
			}
		}
	}
}
