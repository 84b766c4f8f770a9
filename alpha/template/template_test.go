package template

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	if got := strings.Join(r.TypeNames(), " "); got != "basic semver substitutes" {
		t.Errorf("types %q", got)
	}
	if got, want := r.HelpText(), "\n - basic\n - semver\n - substitutes\n"; got != want {
		t.Errorf("help %q, want %q", got, want)
	}
	if r.HasType("olm.semver") || !r.HasType("semver") {
		t.Error("HasType goes by type name")
	}
}

// TestDetect checks that detection picks the type by the first
// document's schema and replays the whole input, and that a registered
// type is found by its schema.
func TestDetect(t *testing.T) {
	var seen string
	custom := Type{Name: "custom", Schema: "example.com/custom", Render: func(_ context.Context, r io.Reader, _ func(context.Context, string) (*declcfg.DeclarativeConfig, error)) (*declcfg.DeclarativeConfig, error) {
		b, err := io.ReadAll(r)
		seen = string(b)
		return &declcfg.DeclarativeConfig{}, err
	}}
	r := NewRegistry(append(append([]Type(nil), Builtin...), custom)...)
	// Longer than the decoder's 4 KiB buffer, two documents.
	in := "schema: example.com/custom\nnote: " + strings.Repeat("x", 10000) + "\n---\nschema: olm.semver\n"
	typ, replay, err := r.Detect(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if typ.Name != "custom" {
		t.Fatalf("detected %q", typ.Name)
	}
	if _, err := typ.Render(context.Background(), replay, nil); err != nil {
		t.Fatal(err)
	}
	if seen != in {
		t.Errorf("the template read %d bytes of %d", len(seen), len(in))
	}

	for in, want := range map[string]string{
		"":                         "decoding template input: EOF",
		"entries: []\n":            "template input missing required 'schema' field",
		"schema: olm.template.x\n": "unknown template schema: olm.template.x",
		`{"schema": 1}`:            "unmarshalling template schema: json: cannot unmarshal number into Go struct field .schema of type string",
	} {
		_, _, err := r.Detect(strings.NewReader(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
	var use *UnknownSchemaError
	if _, _, err := r.Detect(strings.NewReader("schema: nope\n")); !errors.As(err, &use) || use.Schema != "nope" {
		t.Errorf("error %v, want an UnknownSchemaError", err)
	}
}
