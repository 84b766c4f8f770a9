package property

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/fastopm/fastopm/pkg/csv"
)

// CSVMetadata is the value of an olm.csv.metadata property: the parts of a
// bundle's ClusterServiceVersion that clients show, without the install
// strategy. Field order, JSON names and omitempty rules are upstream's, so
// values built here are byte-identical to upstream opm's.
//
// Note that omitempty has no effect on the struct-typed fields
// (apiServiceDefinitions, crdDescriptions, provider): like upstream, they are
// always written, as {} when empty.
type CSVMetadata struct {
	Annotations               map[string]string             `json:"annotations,omitempty"`
	APIServiceDefinitions     csv.APIServiceDefinitions     `json:"apiServiceDefinitions,omitempty"`
	CustomResourceDefinitions csv.CustomResourceDefinitions `json:"crdDescriptions,omitempty"`
	Description               string                        `json:"description,omitempty"`
	DisplayName               string                        `json:"displayName,omitempty"`
	InstallModes              []csv.InstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                      `json:"keywords,omitempty"`
	Labels                    map[string]string             `json:"labels,omitempty"`
	Links                     []csv.AppLink                 `json:"links,omitempty"`
	Maintainers               []csv.Maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                        `json:"maturity,omitempty"`
	MinKubeVersion            string                        `json:"minKubeVersion,omitempty"`
	NativeAPIs                []csv.GroupVersionKind        `json:"nativeAPIs,omitempty"`
	Provider                  csv.AppLink                   `json:"provider,omitempty"`
}

// NewCSVMetadata copies the metadata fields of c.
func NewCSVMetadata(c *csv.ClusterServiceVersion) CSVMetadata {
	return CSVMetadata{
		Annotations:               c.Annotations,
		APIServiceDefinitions:     c.Spec.APIServiceDefinitions,
		CustomResourceDefinitions: c.Spec.CustomResourceDefinitions,
		Description:               c.Spec.Description,
		DisplayName:               c.Spec.DisplayName,
		InstallModes:              c.Spec.InstallModes,
		Keywords:                  c.Spec.Keywords,
		Labels:                    c.Labels,
		Links:                     c.Spec.Links,
		Maintainers:               c.Spec.Maintainers,
		Maturity:                  c.Spec.Maturity,
		MinKubeVersion:            c.Spec.MinKubeVersion,
		NativeAPIs:                c.Spec.NativeAPIs,
		Provider:                  c.Spec.Provider,
	}
}

// BuildCSVMetadata returns the olm.csv.metadata property of c, encoded as
// upstream's property.MustBuildCSVMetadata encodes it: compact JSON in
// struct field order, map keys sorted, '<', '>' and '&' not escaped.
func BuildCSVMetadata(c *csv.ClusterServiceVersion) (Property, error) {
	m := NewCSVMetadata(c)
	v, err := m.MarshalValue()
	if err != nil {
		return Property{}, err
	}
	return Property{Type: TypeCSVMetadata, Value: v}, nil
}

// MarshalValue encodes m as a property value, byte for byte as upstream
// does.
func (m CSVMetadata) MarshalValue() (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode %s value: %w", TypeCSVMetadata, err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("compact %s value: %w", TypeCSVMetadata, err)
	}
	return out.Bytes(), nil
}
