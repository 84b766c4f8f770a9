package template

import (
	"fmt"
	"io"

	"github.com/fastopm/fastopm/alpha/template/basic"
	tdeclcfg "github.com/fastopm/fastopm/alpha/template/internal/declcfg"
	"github.com/fastopm/fastopm/alpha/template/substitutes"
)

// ConvertTypes lists the template types `opm alpha convert-template`
// makes from a catalog, as upstream's.
var ConvertTypes = []string{"basic", "substitutes"}

// Convert reads a file-based catalog stream (JSON or YAML documents) from
// r and writes a template of type typeName ("basic" or "substitutes")
// that renders back to it, in format ("json" or "yaml"), byte for byte as
// upstream's `opm alpha convert-template TYPE`. Nothing is written on
// error.
func Convert(r io.Reader, w io.Writer, typeName, format string) error {
	switch typeName {
	case "basic":
		return basic.Convert(r, w, format)
	case "substitutes":
		return convertSubstitutes(r, w, format)
	default:
		return fmt.Errorf("unknown template type %q, must be one of %v", typeName, ConvertTypes)
	}
}

// substitutesTemplate is the substitutes template convert-template
// writes.
type substitutesTemplate struct {
	Schema        string                   `json:"schema"`
	Entries       []*tdeclcfg.Meta         `json:"entries"`
	Substitutions []substitutes.Substitute `json:"substitutions"`
}

// convertSubstitutes writes a substitutes template holding every entry of
// the catalog as upstream re-encodes it (bundles whole) and no
// substitutions ("substitutions": []); an empty stream gives
// "entries": null, as upstream's.
func convertSubstitutes(r io.Reader, w io.Writer, format string) error {
	entries, err := tdeclcfg.ReadEntries(r, nil)
	if err != nil {
		return err
	}
	return tdeclcfg.WriteTemplate(w, substitutesTemplate{
		Schema:        substitutes.Schema,
		Entries:       entries,
		Substitutions: []substitutes.Substitute{},
	}, format)
}
