// Package template renders catalog templates (`opm alpha render-template`):
// a small input file that names bundle images and some intent (which
// entries, which channels) and expands into a file-based catalog. Each
// template type lives in its own package (basic, semver, ...); this package
// registers them, picks one by type name or by the input's schema, and
// reports errors with upstream opm's wording.
package template

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/template/basic"
	"github.com/fastopm/fastopm/alpha/template/semver"
	"github.com/fastopm/fastopm/alpha/template/substitutes"
)

// RenderFunc renders the template read from r. renderBundle renders one
// bundle image reference; it is safe for concurrent use, and a template
// should render all of its references in parallel (see package bundles)
// before it assembles its output.
type RenderFunc func(ctx context.Context, r io.Reader, renderBundle func(context.Context, string) (*declcfg.DeclarativeConfig, error)) (*declcfg.DeclarativeConfig, error)

// Type is one template type.
type Type struct {
	// Name is what the command line calls it: the last dot-separated
	// part of Schema.
	Name string
	// Schema is the value of the input's "schema" key that selects it.
	Schema string
	// Render renders an input of this type.
	Render RenderFunc
}

// Builtin lists the template types of `opm alpha render-template`.
// Registering another type is one line here.
var Builtin = []Type{
	{Name: "basic", Schema: basic.Schema, Render: basic.Render},
	{Name: "semver", Schema: semver.Schema, Render: semver.Render},
	{Name: "substitutes", Schema: substitutes.Schema, Render: substitutes.Render},
}

// Registry is a set of template types.
type Registry struct {
	types []Type
}

// NewRegistry returns a registry of the given types, or of Builtin when
// none are given.
func NewRegistry(types ...Type) *Registry {
	if len(types) == 0 {
		types = Builtin
	}
	return &Registry{types: slices.Clone(types)}
}

// TypeNames returns the type names, sorted.
func (r *Registry) TypeNames() []string {
	names := make([]string, 0, len(r.types))
	for _, t := range r.types {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// HasType reports whether name is a registered type name.
func (r *Registry) HasType(name string) bool {
	_, ok := r.ByName(name)
	return ok
}

// ByName returns the type called name.
func (r *Registry) ByName(name string) (Type, bool) {
	for _, t := range r.types {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}

// HelpText lists the type names as upstream's help does: a line break,
// then " - name" lines.
func (r *Registry) HelpText() string {
	var b strings.Builder
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	for _, n := range r.TypeNames() {
		fmt.Fprintf(tw, " - %s\n", n)
	}
	_ = tw.Flush() // writes to a strings.Builder cannot fail
	return b.String()
}

// UnknownSchemaError is returned when the input's schema names no type.
type UnknownSchemaError struct{ Schema string }

func (e *UnknownSchemaError) Error() string { return "unknown template schema: " + e.Schema }

// Detect reads the first document of the input (YAML or JSON) and returns
// the type its "schema" key selects, and a reader that replays what was
// read followed by the rest of the input.
func (r *Registry) Detect(in io.Reader) (Type, io.Reader, error) {
	schema, replay, err := detectSchema(in)
	if err != nil {
		return Type{}, nil, err
	}
	for _, t := range r.types {
		if t.Schema == schema {
			return t, replay, nil
		}
	}
	return Type{}, nil, &UnknownSchemaError{Schema: schema}
}

// detectSchema reads the first document and its schema as upstream does:
// apimachinery's YAML-or-JSON decoder, then encoding/json for the key.
func detectSchema(in io.Reader) (string, io.Reader, error) {
	var captured bytes.Buffer
	var doc json.RawMessage
	if err := yaml.NewYAMLOrJSONDecoder(io.TeeReader(in, &captured), 4096).Decode(&doc); err != nil {
		return "", nil, fmt.Errorf("decoding template input: %v", err)
	}
	var s struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return "", nil, fmt.Errorf("unmarshalling template schema: %v", err)
	}
	if s.Schema == "" {
		return "", nil, errors.New("template input missing required 'schema' field")
	}
	return s.Schema, io.MultiReader(&captured, in), nil
}
