// Package property holds the OLM property types that catalogs attach to
// packages, channels and bundles, and parses their values the way upstream
// opm does (encoding/json rules: field names match case-insensitively,
// unknown fields are ignored, a value of the wrong JSON type is an error).
package property

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Property is one entry of a blob's properties list. Value is the
// property's canonical JSON.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// Well-known property types.
const (
	TypePackage         = "olm.package"
	TypePackageRequired = "olm.package.required"
	TypeGVK             = "olm.gvk"
	TypeGVKRequired     = "olm.gvk.required"
	TypeBundleObject    = "olm.bundle.object"
	TypeCSVMetadata     = "olm.csv.metadata"
	TypeChannel         = "olm.channel"
	TypeConstraint      = "olm.constraint"
	TypeDeprecated      = "olm.deprecated"
)

// Package is the value of an olm.package property: the bundle's package and
// version.
type Package struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	// Release is an optional release of the version (dot-separated
	// pre-release-style identifiers, at most 20 characters).
	Release string `json:"release,omitzero"`
}

// PackageRequired is the value of an olm.package.required property.
type PackageRequired struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

// GVK is the value of an olm.gvk property: an API the bundle provides.
type GVK struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// GVKRequired is the value of an olm.gvk.required property.
type GVKRequired struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// Channel is the value of the legacy olm.channel bundle property.
type Channel struct {
	ChannelName string `json:"channelName"`
	Priority    int    `json:"priority"`
}

// BundleObject is the value of an olm.bundle.object property: a Kubernetes
// manifest, base64 in JSON.
type BundleObject struct {
	Data []byte `json:"data"`
}

// ParseError reports a property value that does not decode for its type.
type ParseError struct {
	Idx int
	Typ string
	Err error
}

func (e ParseError) Error() string {
	return fmt.Sprintf("parse property[%d] of type %q: %v", e.Idx, e.Typ, e.Err)
}

func (e ParseError) Unwrap() error { return e.Err }

// Explain says in words what is wrong with the value, when the error is
// one of encoding/json's type errors: `"version" must be a string, found
// a number`. It returns "" otherwise.
func (e ParseError) Explain() string { return ExplainTypeError(e.Err) }

// ExplainTypeError says in words what is wrong with a value when err is
// one of encoding/json's type errors (`"version" must be a string, found
// a number`, the field named by its path of JSON names); "" otherwise.
func ExplainTypeError(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return ""
	}
	found := strings.TrimSpace(te.Value)
	switch {
	case found == "array":
		found = "a list"
	case found == "object", found == "number", found == "string", found == "bool":
		found = map[string]string{"object": "an object", "number": "a number", "string": "a string", "bool": "a boolean"}[found]
	case strings.HasPrefix(found, "number "):
		found = "the number " + strings.TrimPrefix(found, "number ")
	}
	want := jsonKind(te.Type)
	if te.Field == "" {
		return fmt.Sprintf("the value must be %s, found %s", want, found)
	}
	return fmt.Sprintf("%q must be %s, found %s", te.Field, want, found)
}

// jsonKind names what a value of Go type t must be in JSON.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "a list of " + plural(jsonKind(t.Elem()))
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a " + t.String()
}

func plural(kind string) string {
	kind = strings.TrimPrefix(strings.TrimPrefix(kind, "an "), "a ")
	if strings.HasPrefix(kind, "list of ") {
		return "lists of " + strings.TrimPrefix(kind, "list of ")
	}
	return kind + "s"
}

// Properties is a properties list sorted by kind.
type Properties struct {
	Packages         []Package
	PackagesRequired []PackageRequired
	GVKs             []GVK
	GVKsRequired     []GVKRequired
	BundleObjects    []BundleObject
	CSVMetadatas     []CSVMetadata
	Channels         []Channel
	Others           []Property
}

// Parse decodes every well-known property of in. Values of other types are
// only required to be JSON.
func Parse(in []Property) (*Properties, error) {
	var out Properties
	for i, p := range in {
		var err error
		switch p.Type {
		case TypePackage:
			err = decodeInto(p.Value, &out.Packages)
		case TypePackageRequired:
			err = decodeInto(p.Value, &out.PackagesRequired)
		case TypeGVK:
			err = decodeInto(p.Value, &out.GVKs)
		case TypeGVKRequired:
			err = decodeInto(p.Value, &out.GVKsRequired)
		case TypeBundleObject:
			err = decodeInto(p.Value, &out.BundleObjects)
		case TypeCSVMetadata:
			err = decodeInto(p.Value, &out.CSVMetadatas)
		case TypeChannel:
			err = decodeInto(p.Value, &out.Channels)
		default:
			var raw json.RawMessage
			if err = json.Unmarshal(p.Value, &raw); err == nil {
				out.Others = append(out.Others, p)
			}
		}
		if err != nil {
			return nil, ParseError{Idx: i, Typ: p.Type, Err: err}
		}
	}
	return &out, nil
}

func decodeInto[T any](raw json.RawMessage, dst *[]T) error {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	*dst = append(*dst, v)
	return nil
}
