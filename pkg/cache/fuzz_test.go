package cache

import (
	"os"
	"testing"

	"github.com/fastopm/fastopm/pkg/registry"
)

// FuzzDecodeIndex feeds damaged indexes to the decoder: it must fail or
// produce an Index that validates or is refused, never panic.
func FuzzDecodeIndex(f *testing.F) {
	snap, _, err := build(f.Context(), os.DirFS("../../testdata/catalogs/fixture-olm-deprecations"), f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(encodeIndex(snap.Index, Fingerprint{Files: []FileSum{{Path: "a.json", Size: 3}}}, "v1", snap.Lines()))
	snap.Close()
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, _, _, lines, err := decodeIndex(b)
		if err != nil {
			return
		}
		if lines != nil {
			// A decoded table answers every query within its section.
			lines.finish()
			for i := range lines.Len() {
				schema, pkg, name := lines.Meta(i)
				for _, sp := range lines.Spans(lines.Select(schema, pkg, name)) {
					if sp.Off < 0 || sp.N <= 0 || sp.Off+sp.N > lines.Size() {
						t.Fatalf("span %+v out of the section of %d bytes", sp, lines.Size())
					}
				}
			}
		}
		if x.Validate() == nil {
			// A valid index must answer its queries without panicking.
			for _, p := range x.ListPackages() {
				x.GetPackage(p)
			}
			for _, ref := range x.ListBundles() {
				h := x.Hit(ref)
				x.GetBundle(h.Package.Name, h.Channel.Name, h.Bundle.Name)
				x.GetChannelEntriesThatReplace(h.Bundle.Name)
				for _, g := range h.Bundle.Provides {
					x.GetDefaultBundleThatProvides(g.Group, g.Version, g.Kind)
				}
			}
		}
	})
}

// FuzzDecodeRecord feeds damaged records to the decoder and joins what
// decodes into a message.
func FuzzDecodeRecord(f *testing.F) {
	rec, err := encodeBundle(nil, &registry.BundleAnswer{CsvName: "b", PackageName: "p", CsvJSON: []byte(`{"kind":"ClusterServiceVersion"}`),
		Objects: [][]byte{[]byte(`{"kind":"ConfigMap"}`), []byte(`{"kind":"ClusterServiceVersion"}`)}, Version: "1.0.0"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rec)
	f.Add(rec[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeRecord(b)
		if err != nil {
			return
		}
		h := registry.Hit{Channel: &registry.Channel{Name: "c"}, Entry: &registry.Entry{Replaces: "r"}, Bundle: &registry.Bundle{}}
		AppendBundle(nil, p, h, Shape{Payload: true, Edges: true})
	})
}
