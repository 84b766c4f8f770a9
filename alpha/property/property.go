// Package property holds the OLM property types that catalogs attach to
// packages, channels and bundles, and parses their values the way upstream
// opm does (encoding/json rules: field names match case-insensitively,
// unknown fields are ignored, a value of the wrong JSON type is an error).
package property

import (
	"encoding/json"
	"fmt"
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
