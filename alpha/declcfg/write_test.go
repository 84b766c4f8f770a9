package declcfg

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// encodeUpstream is upstream's writer: json.Encoder with a four-space
// indent and HTML escaping off.
func encodeUpstream(t *testing.T, v any) []byte {
	t.Helper()
	b, err := testutil.OpmJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendJSONMatchesEncoder(t *testing.T) {
	values := []any{
		&Package{Schema: SchemaPackage, Name: "p<&>", DefaultChannel: "s", Description: "line\nline \u2028 \"q\"",
			Icon:       &Icon{Data: []byte{0, 1, 2, 255}, MediaType: "image/png"},
			Properties: []property.Property{{Type: "a", Value: json.RawMessage(`{"b":[1,{"c":{}}],"d":[]}`)}, {Type: "n"}}},
		&Package{Schema: SchemaPackage, Name: "p", Icon: &Icon{}},
		&Package{Schema: SchemaPackage, Name: "p", Icon: &Icon{Data: []byte{}}, Properties: []property.Property{}},
		&Channel{Schema: SchemaChannel, Name: "c", Package: "p"},
		&Channel{Schema: SchemaChannel, Name: "c", Package: "p", Entries: []ChannelEntry{}},
		&Channel{Schema: SchemaChannel, Name: "c", Package: "p", Entries: []ChannelEntry{
			{Name: "a", Replaces: "b", Skips: []string{"x", ""}, SkipRange: ">=1.0.0 <2.0.0"}, {Name: "b", Skips: []string{}}}},
		&Bundle{Schema: SchemaBundle, Image: "i"},
		&Bundle{Schema: SchemaBundle, Name: "b", Package: "p", Image: "i",
			Properties:    []property.Property{{Type: "olm.package", Value: json.RawMessage(`{"packageName":"p","version":"1.0.0"}`)}, {Type: "x", Value: json.RawMessage(`"s\u003c"`)}, {Type: "n", Value: json.RawMessage(`null`)}},
			RelatedImages: []RelatedImage{{Image: "r"}, {Name: "n", Image: "q"}}},
		&Deprecation{Schema: SchemaDeprecations, Package: "p"},
		&Deprecation{Schema: SchemaDeprecations, Package: "p", Entries: []DeprecationEntry{
			{Reference: PackageScopedReference{Schema: SchemaPackage}, Message: "m"},
			{Reference: PackageScopedReference{Schema: SchemaBundle, Name: "b"}}}},
		&Meta{Schema: "x", JSON: json.RawMessage(`{"a":{"b":[]},"schema":"x"}`)},
	}
	for _, v := range values {
		want := encodeUpstream(t, v)
		if got := AppendJSON(nil, v); !bytes.Equal(got, want) {
			t.Errorf("%T\n got %s\nwant %s", v, got, want)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, want); err != nil {
			t.Fatal(err)
		}
		if got := AppendCompactJSON(nil, v); !bytes.Equal(got, compact.Bytes()) {
			t.Errorf("%T compact\n got %s\nwant %s", v, got, compact.Bytes())
		}
		var streamed bytes.Buffer
		if _, err := WriteJSON(&streamed, nil, v); err != nil || !bytes.Equal(streamed.Bytes(), want) {
			t.Errorf("%T WriteJSON (%v)\n got %s\nwant %s", v, err, streamed.Bytes(), want)
		}
	}
}

// chunkWriter records the largest single write.
type chunkWriter struct {
	bytes.Buffer
	largest int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.largest = max(w.largest, len(p))
	return w.Buffer.Write(p)
}

// TestWriteJSONDeep: a blob nested 3,000 deep, 6 KB compact and 36 MB
// indented, is written as AppendJSON writes it, in pieces never much over
// canonjson.FlushSize (each line's indentation is at most 12 KB here).
func TestWriteJSONDeep(t *testing.T) {
	const depth = 3000
	deep := `{"schema":"x","value":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}"
	for _, v := range []any{
		&Meta{Schema: "x", JSON: json.RawMessage(deep)},
		&Bundle{Schema: SchemaBundle, Name: "b", Package: "p", Image: "i",
			Properties: []property.Property{{Type: "x", Value: json.RawMessage(strings.Repeat("[", depth) + strings.Repeat("]", depth))}}},
	} {
		want := AppendJSON(nil, v)
		var w chunkWriter
		if _, err := WriteJSON(&w, nil, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.Bytes(), want) {
			t.Fatalf("%T: WriteJSON differs from AppendJSON (%d and %d bytes)", v, w.Len(), len(want))
		}
		if limit := canonjson.FlushSize + 4*depth*2; w.largest > limit {
			t.Errorf("%T: a write of %d bytes, want at most %d", v, w.largest, limit)
		}
	}
}

func TestAppendYAML(t *testing.T) {
	got, err := AppendYAML(nil, &Channel{Schema: SchemaChannel, Name: "c", Package: "p", Entries: []ChannelEntry{{Name: "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "---\nentries:\n- name: a\nname: c\npackage: p\nschema: olm.channel\n"
	if string(got) != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestRenderOrder(t *testing.T) {
	cfg := &DeclarativeConfig{
		Packages: []Package{{Schema: SchemaPackage, Name: "b"}, {Schema: SchemaPackage, Name: "a"}, {Schema: SchemaPackage, Name: ""}},
		Channels: []Channel{{Schema: SchemaChannel, Name: "z", Package: "a"}, {Schema: SchemaChannel, Name: "y", Package: "a"}, {Schema: SchemaChannel, Name: "q", Package: ""}},
		Bundles:  []Bundle{{Schema: SchemaBundle, Name: "b2", Package: "b"}, {Schema: SchemaBundle, Name: "b1", Package: "b"}},
		Others: []Meta{{Schema: "z.other", Package: "a", JSON: json.RawMessage(`{"schema":"z.other"}`)}, {Schema: "global", JSON: json.RawMessage(`{"schema":"global"}`)},
			{Schema: "a.other", Package: "a", JSON: json.RawMessage(`{"schema":"a.other"}`)}},
		Deprecations: []Deprecation{{Schema: SchemaDeprecations, Package: "a"}},
	}
	var got []string
	for _, it := range RenderOrder(cfg.Items()) {
		got = append(got, it.Schema+":"+it.Group+"/"+it.Name)
	}
	want := []string{"olm.package:a/a", "olm.channel:a/y", "olm.channel:a/z", "a.other:a/", "z.other:a/", "olm.deprecations:a/",
		"olm.package:b/b", "olm.bundle:b/b1", "olm.bundle:b/b2", "global:/"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v\nwant %v", got, want)
		}
	}
}
