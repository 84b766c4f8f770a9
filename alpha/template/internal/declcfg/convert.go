package declcfg

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// MarshalJSON writes the entry's blob, as upstream's declcfg.Meta does.
func (m Meta) MarshalJSON() ([]byte, error) { return m.Blob, nil }

// ReadEntries reads every document of a file-based catalog stream (JSON
// or YAML) from r as upstream's declcfg.WalkMetasReader does, calls each
// (which may rewrite the entry's Blob) for every entry in order, and
// returns them. The first error stops the reading.
func ReadEntries(r io.Reader, each func(*Meta) error) ([]*Meta, error) {
	var entries []*Meta
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		m := &Meta{}
		if err := dec.Decode(m); err != nil {
			if errors.Is(err, io.EOF) {
				return entries, nil
			}
			return nil, err
		}
		if each != nil {
			if err := each(m); err != nil {
				return nil, err
			}
		}
		entries = append(entries, m)
	}
}

// WriteTemplate writes t as `opm alpha convert-template` prints a
// template, byte for byte: encoding/json with four-space indentation (and
// its HTML escaping), or with format "yaml" sigs.k8s.io/yaml's rendering
// of that JSON after a "---" line; then a line break. Nothing is written
// when t does not encode.
func WriteTemplate(w io.Writer, t any, format string) error {
	out, err := json.MarshalIndent(t, "", "    ")
	if err != nil {
		return err
	}
	if format != "json" {
		y, err := sigsyaml.JSONToYAML(out)
		if err != nil {
			return err
		}
		out = append([]byte("---\n"), y...)
	}
	out = append(out, '\n')
	_, err = w.Write(out)
	return err
}

// Bundle, RelatedImage and Property have the shape of upstream's
// declcfg.Bundle and property.Property, so that encoding/json reports a
// field of the wrong type in upstream's words (DecodeBundle's words
// differ).
type Bundle struct {
	Schema        string         `json:"schema"`
	Name          string         `json:"name,omitempty"`
	Package       string         `json:"package,omitempty"`
	Image         string         `json:"image"`
	Properties    []Property     `json:"properties,omitempty"`
	RelatedImages []RelatedImage `json:"relatedImages,omitempty"`
}

// RelatedImage is upstream's declcfg.RelatedImage.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Property is upstream's property.Property.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// UnmarshalBundle decodes a bundle blob as upstream's convert-template
// does (json.Unmarshal into declcfg.Bundle), with its errors.
func UnmarshalBundle(blob []byte) (*Bundle, error) {
	var b Bundle
	if err := json.Unmarshal(blob, &b); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Upstream's Property lives in package property.
			return nil, errors.New(strings.ReplaceAll(err.Error(), "declcfg.Property", "property.Property"))
		}
		return nil, err
	}
	return &b, nil
}
