package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fastopm/fastopm/pkg/api"
	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// catalog writes a small valid catalog into a new directory.
func catalog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "p/catalog.json", `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1"},{"name":"p.v2","replaces":"p.v1","skips":["p.v0"],"skipRange":"<2.0.0"}]}
{"schema":"olm.channel","package":"p","name":"beta","entries":[{"name":"p.v2"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"quay.io/p:v1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"olm.gvk","value":{"group":"example.com","kind":"K","version":"v1"}}]}
{"schema":"olm.bundle","name":"p.v2","package":"p","image":"quay.io/p:v2","properties":[{"type":"olm.package","value":{"packageName":"p","version":"2.0.0"}},{"type":"olm.bundle.object","value":{"data":"eyJraW5kIjoiQ2x1c3RlclNlcnZpY2VWZXJzaW9uIiwibWV0YWRhdGEiOnsibmFtZSI6InAudjIifX0="}}]}
{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"p.v1"},"message":"old"}]}
{"schema":"example.custom","package":"p","name":"x","data":{"n":1.5,"ok":true,"l":["a",null]}}
`)
	write(t, dir, "README.md", "not a catalog file\n")
	write(t, dir, ".indexignore", "README.md\n")
	return dir
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bundleMessage reads a bundle answer of snap and decodes it.
func bundleMessage(t *testing.T, snap *Snapshot, h registry.Hit, s Shape) (*api.Bundle, []byte) {
	t.Helper()
	parts, err := snap.ReadBundle(h.Bundle, s.Payload)
	if err != nil {
		t.Fatal(err)
	}
	pieces, n := AppendBundle(nil, parts, h, s)
	wire := bytes.Join(pieces, nil)
	if len(wire) != n {
		t.Errorf("size %d, pieces hold %d bytes", n, len(wire))
	}
	var b api.Bundle
	if err := proto.Unmarshal(wire, &b); err != nil {
		t.Fatalf("answer does not decode: %v", err)
	}
	return &b, wire
}

func TestBundleEncoding(t *testing.T) {
	t.Parallel()
	snap, _, err := build(t.Context(), os.DirFS(catalog(t)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	x := snap.Index
	csv := `{"kind":"ClusterServiceVersion","metadata":{"name":"p.v2"}}`
	for _, tc := range []struct {
		name            string
		pkg, ch, bundle string
		shape           Shape
		want            *api.Bundle
	}{
		{"full with edges", "p", "stable", "p.v2", Shape{Payload: true, Edges: true}, &api.Bundle{
			CsvName: "p.v2", PackageName: "p", ChannelName: "stable", CsvJson: csv, Object: []string{csv}, BundlePath: "quay.io/p:v2",
			Version: "2.0.0", SkipRange: "<2.0.0", Replaces: "p.v1", Skips: []string{"p.v0"},
			Properties: []*api.Property{{Type: "olm.package", Value: `{"packageName":"p","version":"2.0.0"}`}},
		}},
		{"unary (edges cleared)", "p", "beta", "p.v2", Shape{Payload: true}, &api.Bundle{
			CsvName: "p.v2", PackageName: "p", ChannelName: "beta", CsvJson: csv, Object: []string{csv}, BundlePath: "quay.io/p:v2",
			Version: "2.0.0", Properties: []*api.Property{{Type: "olm.package", Value: `{"packageName":"p","version":"2.0.0"}`}},
		}},
		{"objects dropped", "p", "beta", "p.v2", Shape{Payload: true, DropObjects: true}, &api.Bundle{
			CsvName: "p.v2", PackageName: "p", ChannelName: "beta", CsvJson: csv, BundlePath: "quay.io/p:v2",
			Version: "2.0.0", Properties: []*api.Property{{Type: "olm.package", Value: `{"packageName":"p","version":"2.0.0"}`}},
		}},
		{"list (no payload), deprecated", "p", "stable", "p.v1", Shape{Edges: true}, &api.Bundle{
			CsvName: "p.v1", PackageName: "p", ChannelName: "stable", BundlePath: "quay.io/p:v1", Version: "1.0.0",
			ProvidedApis: []*api.GroupVersionKind{{Group: "example.com", Version: "v1", Kind: "K"}},
			Properties: []*api.Property{
				{Type: "olm.package", Value: `{"packageName":"p","version":"1.0.0"}`},
				{Type: "olm.gvk", Value: `{"group":"example.com","kind":"K","version":"v1"}`},
			},
			Deprecation: &api.Deprecation{Message: "old"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := x.GetBundle(tc.pkg, tc.ch, tc.bundle)
			if err != nil {
				t.Fatal(err)
			}
			got, wire := bundleMessage(t, snap, h, tc.shape)
			if !proto.Equal(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
			// The pieces are in field order: the bytes are exactly a
			// deterministic marshal of the message.
			want, err := proto.MarshalOptions{Deterministic: true}.Marshal(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(wire, want) {
				t.Errorf("wire bytes differ from proto.Marshal's")
			}
		})
	}
}

// TestFieldNumbers pins the field numbers the encoder uses to the
// generated descriptor of api.Bundle.
func TestFieldNumbers(t *testing.T) {
	t.Parallel()
	fields := (&api.Bundle{}).ProtoReflect().Descriptor().Fields()
	for name, num := range map[protoreflect.Name]int32{
		"csvName": int32(fieldCsvName), "packageName": int32(fieldPackageName), "channelName": int32(fieldChannelName),
		"csvJson": int32(fieldCsvJSON), "object": int32(fieldObject), "bundlePath": int32(fieldBundlePath),
		"providedApis": int32(fieldProvidedAPIs), "requiredApis": int32(fieldRequiredAPIs), "version": int32(fieldVersion),
		"skipRange": int32(fieldSkipRange), "dependencies": int32(fieldDependencies), "properties": int32(fieldProperties),
		"replaces": int32(fieldReplaces), "skips": int32(fieldSkips), "deprecation": int32(fieldDeprecation),
	} {
		f := fields.ByName(name)
		if f == nil || int32(f.Number()) != num {
			t.Errorf("field %s: descriptor %v, encoder %d", name, f, num)
		}
	}
}

func TestSaveAndOpen(t *testing.T) {
	t.Parallel()
	cat := catalog(t)
	dir := filepath.Join(t.TempDir(), "cache")
	built, err := buildDir(t.Context(), os.DirFS(cat), dir, "v-test")
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	st, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("cache file mode %v, want world-readable 0644", st.Mode().Perm())
	}
	snap, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if snap.Producer != "v-test" {
		t.Errorf("producer %q", snap.Producer)
	}
	if err := snap.Fingerprint.Check(t.Context(), os.DirFS(cat), snap.Path); err != nil {
		t.Fatalf("fresh cache: %v", err)
	}
	var paths []string
	for _, f := range snap.Fingerprint.Files {
		paths = append(paths, f.Path)
	}
	if want := []string{".indexignore", "p/catalog.json"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("fingerprint covers %v, want %v (ignored files left out)", paths, want)
	}
	// The decoded index equals the built one.
	if !reflect.DeepEqual(exported(snap.Index), exported(built.Index)) {
		t.Errorf("decoded index differs from the built one")
	}
	// Every answer reads back the same from both.
	for _, ref := range snap.Index.ListBundles() {
		h := snap.Index.Hit(ref)
		a, _ := bundleMessage(t, snap, h, Shape{Payload: true, Edges: true})
		b, _ := bundleMessage(t, built, built.Index.Hit(ref), Shape{Payload: true, Edges: true})
		if !proto.Equal(a, b) {
			t.Errorf("%s: answers differ", h.Bundle.Name)
		}
	}
	metas := snap.Index.CustomMetas("example.custom", "p")
	if len(metas) != 1 {
		t.Fatalf("custom blobs: %v", metas)
	}
	raw, err := snap.ReadMeta(&metas[0])
	if err != nil {
		t.Fatal(err)
	}
	var s structpb.Struct
	if err := proto.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if got := s.GetFields()["data"].GetStructValue().GetFields()["n"].GetNumberValue(); got != 1.5 {
		t.Errorf("custom blob data.n = %v", got)
	}
}

// exported copies the exported fields of an Index for comparison.
func exported(x *registry.Index) [3]any { return [3]any{x.Packages, x.Bundles, x.Metas} }

func TestRejections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, cat, dir string)
		reason Reason
		empty  bool
		detail string
	}{
		{"missing directory", func(t *testing.T, _, dir string) { os.RemoveAll(dir) }, Missing, true, "does not exist"},
		{"empty directory", func(t *testing.T, _, dir string) { os.Remove(filepath.Join(dir, FileName)) }, Missing, true, "is empty"},
		{"other content", func(t *testing.T, _, dir string) {
			os.Remove(filepath.Join(dir, FileName))
			write(t, dir, "notes.txt", "x")
		}, Missing, false, "it holds: notes.txt"},
		{"upstream cache", func(t *testing.T, _, dir string) {
			os.Remove(filepath.Join(dir, FileName))
			write(t, dir, "pogreb.v1/digest", "abc")
		}, OtherFormat, false, "upstream opm (pogreb.v1)"},
		{"other format version", func(t *testing.T, _, dir string) {
			patch(t, filepath.Join(dir, FileName), 8, func(b []byte) { binary.LittleEndian.PutUint32(b, FormatVersion+1) })
		}, OtherFormat, false, fmt.Sprintf("format version %d; this opm reads version %d", FormatVersion+1, FormatVersion)},
		// Format 2 (the JSON lines always in, SHA-256 fingerprints):
		// rebuilt, or refused with enforcement, like any other format.
		{"format 2", func(t *testing.T, _, dir string) {
			patch(t, filepath.Join(dir, FileName), 8, func(b []byte) { binary.LittleEndian.PutUint32(b, 2) })
		}, OtherFormat, false, "format version 2; this opm reads version 3"},
		{"bad magic", func(t *testing.T, _, dir string) {
			patch(t, filepath.Join(dir, FileName), 0, func(b []byte) { b[0] ^= 0xff })
		}, Corrupt, false, "bad magic"},
		{"truncated", func(t *testing.T, _, dir string) {
			p := filepath.Join(dir, FileName)
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-7)
		}, Corrupt, false, "no index"},
		{"index damaged", func(t *testing.T, _, dir string) {
			p := filepath.Join(dir, FileName)
			st, _ := os.Stat(p)
			patch(t, p, st.Size()-trailerSize-3, func(b []byte) { b[0] ^= 0x55 })
		}, Corrupt, false, "checksum"},
		{"catalog file changed", func(t *testing.T, cat, _ string) {
			p := filepath.Join(cat, "p/catalog.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"old"`), []byte(`"new"`), 1), 0o644)
		}, Stale, false, `file "p/catalog.json" changed (xxh64`},
		{"catalog file added", func(t *testing.T, cat, _ string) { write(t, cat, "q/catalog.json", "{}") }, Stale, false, `file "q/catalog.json" was added`},
		{"catalog file removed", func(t *testing.T, cat, _ string) { os.Remove(filepath.Join(cat, ".indexignore")) }, Stale, false, `file ".indexignore" was removed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cat := catalog(t)
			dir := filepath.Join(t.TempDir(), "cache")
			snap, err := buildDir(t.Context(), os.DirFS(cat), dir, "v")
			if err != nil {
				t.Fatal(err)
			}
			snap.Close()
			tc.damage(t, cat, dir)
			snap, err = OpenDir(dir)
			if err == nil {
				err = snap.Fingerprint.Check(t.Context(), os.DirFS(cat), snap.Path)
				snap.Close()
			}
			var rej *RejectedError
			if !errors.As(err, &rej) {
				t.Fatalf("error %v, want a rejection", err)
			}
			if rej.Reason != tc.reason || rej.Empty != tc.empty || !strings.Contains(rej.Detail, tc.detail) {
				t.Errorf("rejected as %v (empty %v): %q; want %v (empty %v) with %q", rej.Reason, rej.Empty, rej.Detail, tc.reason, tc.empty, tc.detail)
			}
		})
	}
}

// patch rewrites bytes of a file at off.
func patch(t *testing.T, path string, off int64, fn func([]byte)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fn(b[off:])
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptAnswer(t *testing.T) {
	t.Parallel()
	cat := catalog(t)
	dir := t.TempDir()
	snap, err := buildDir(t.Context(), os.DirFS(cat), dir, "v")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := snap.Index.GetBundle("p", "stable", "p.v2")
	snap.Close()
	// Flip a byte of p.v2's csvJson segment: the index is intact, so the
	// cache opens, and the damage is found when the answer is read.
	patch(t, filepath.Join(dir, FileName), int64(h.Bundle.Body.Off)+int64(h.Bundle.Body.Len)-2, func(b []byte) { b[0] ^= 1 })
	snap, err = OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if _, err := snap.ReadBundle(h.Bundle, false); err != nil {
		t.Errorf("list prefix is intact, got %v", err)
	}
	if _, err := snap.ReadBundle(h.Bundle, true); !errors.Is(err, ErrCorruptAnswer) {
		t.Errorf("ReadBundle = %v, want ErrCorruptAnswer", err)
	}
}

func TestReadOnlyCache(t *testing.T) {
	t.Parallel()
	cat := catalog(t)
	dir := t.TempDir()
	snap, err := buildDir(t.Context(), os.DirFS(cat), dir, "v")
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	p := filepath.Join(dir, FileName)
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	snap, err = OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Fingerprint.Check(t.Context(), os.DirFS(cat), snap.Path); err != nil {
		t.Fatal(err)
	}
	h, _ := snap.Index.GetBundleForChannel("p", "stable")
	if _, err := snap.ReadBundle(h.Bundle, true); err != nil {
		t.Fatal(err)
	}
	snap.Close()
	after, _ := os.Stat(p)
	if !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("opening a cache wrote to it")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("cache directory holds %d entries after a read", len(entries))
	}
}

func TestMemoryStorage(t *testing.T) {
	t.Parallel()
	m := new(scratch.File)
	w, err := NewWriter(m)
	if err != nil {
		t.Fatal(err)
	}
	x, err := registry.Load(context.Background(), os.DirFS(catalog(t)), registry.Options{Sink: w})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := w.Snapshot(x)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	h, _ := x.GetBundle("p", "beta", "p.v2")
	if b, _ := bundleMessage(t, snap, h, Shape{Payload: true}); b.GetCsvJson() == "" {
		t.Errorf("no csvJson from memory storage")
	}
}

func TestInvalidUTF8Object(t *testing.T) {
	t.Parallel()
	_, err := encodeBundle(nil, &registry.BundleAnswer{CsvName: "b", Objects: [][]byte{{'{', 0xff, '}'}}})
	if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("error %v, want invalid UTF-8", err)
	}
}
