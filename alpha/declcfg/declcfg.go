// Package declcfg is the file-based catalog (FBC) wire format: the typed
// blobs of the olm.package, olm.channel, olm.bundle and olm.deprecations
// schemas, a fast loader for catalog trees (see Walk and LoadFS), and
// writers that produce upstream opm's JSON and YAML output byte for byte.
//
// Every blob is held as canonical JSON: the form upstream opm gives a blob
// after decoding it (object keys sorted, numbers as float64, no HTML
// escaping; see package canonjson). Typed views decode only the fields they
// need from those bytes and keep property values as raw canonical slices.
package declcfg

import (
	"encoding/json"

	"github.com/fastopm/fastopm/alpha/property"
)

// The schemas with typed meaning. Every other schema is kept as an opaque
// Meta blob.
const (
	SchemaPackage      = "olm.package"
	SchemaChannel      = "olm.channel"
	SchemaBundle       = "olm.bundle"
	SchemaDeprecations = "olm.deprecations"
)

// DeclarativeConfig is a whole catalog held in memory. The streaming loader
// (Walk) is the fast path for large catalogs; DeclarativeConfig is the
// convenient one for small inputs, bundle rendering and tests.
type DeclarativeConfig struct {
	Packages     []Package
	Channels     []Channel
	Bundles      []Bundle
	Deprecations []Deprecation
	Others       []Meta
}

// Merge appends every blob of src to dst, in upstream's order of kinds.
func (dst *DeclarativeConfig) Merge(src *DeclarativeConfig) {
	dst.Packages = append(dst.Packages, src.Packages...)
	dst.Channels = append(dst.Channels, src.Channels...)
	dst.Bundles = append(dst.Bundles, src.Bundles...)
	dst.Others = append(dst.Others, src.Others...)
	dst.Deprecations = append(dst.Deprecations, src.Deprecations...)
}

// Package is an olm.package blob.
type Package struct {
	Schema         string              `json:"schema"`
	Name           string              `json:"name"`
	DefaultChannel string              `json:"defaultChannel"`
	Icon           *Icon               `json:"icon,omitempty"`
	Description    string              `json:"description,omitempty"`
	Properties     []property.Property `json:"properties,omitempty"`
}

// Icon is a package icon. Data holds the decoded bytes of base64data.
type Icon struct {
	Data      []byte `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// Channel is an olm.channel blob.
type Channel struct {
	Schema     string              `json:"schema"`
	Name       string              `json:"name"`
	Package    string              `json:"package"`
	Entries    []ChannelEntry      `json:"entries"`
	Properties []property.Property `json:"properties,omitempty"`
}

// ChannelEntry is one bundle of a channel with its upgrade edges.
type ChannelEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

// Bundle is an olm.bundle blob.
type Bundle struct {
	Schema        string              `json:"schema"`
	Name          string              `json:"name,omitempty"`
	Package       string              `json:"package,omitempty"`
	Image         string              `json:"image"`
	Properties    []property.Property `json:"properties,omitempty"`
	RelatedImages []RelatedImage      `json:"relatedImages,omitempty"`

	// CsvJSON and Objects are not part of the blob: they carry the decoded
	// olm.bundle.object manifests of bundles rendered from bundle
	// directories and images, for the serve cache and migrations.
	CsvJSON string   `json:"-"`
	Objects []string `json:"-"`
}

// RelatedImage is an image a bundle refers to.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Deprecation is an olm.deprecations blob.
type Deprecation struct {
	Schema  string             `json:"schema"`
	Package string             `json:"package"`
	Entries []DeprecationEntry `json:"entries"`
}

// DeprecationEntry deprecates the package, a channel or a bundle.
type DeprecationEntry struct {
	Reference PackageScopedReference `json:"reference"`
	Message   string                 `json:"message"`
}

// PackageScopedReference names an object inside the deprecation's package.
// Name is empty for the olm.package schema.
type PackageScopedReference struct {
	Schema string `json:"schema"`
	Name   string `json:"name,omitempty"`
}

// Meta is a blob of any schema: its identifying keys and its canonical JSON.
type Meta struct {
	Schema  string
	Package string
	Name    string

	// JSON is the canonical JSON of the whole object.
	JSON json.RawMessage
}

// MarshalJSON returns the blob itself.
func (m Meta) MarshalJSON() ([]byte, error) { return m.JSON, nil }
