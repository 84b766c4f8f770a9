package basic

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/fastopm/fastopm/alpha/declcfg"
	tdeclcfg "github.com/fastopm/fastopm/alpha/template/internal/declcfg"
)

// converted is the template convert-template writes.
type converted struct {
	Schema  string           `json:"schema"`
	Entries []*tdeclcfg.Meta `json:"entries"`
}

// bundleImage is what a bundle entry keeps.
type bundleImage struct {
	Schema string `json:"schema"`
	Image  string `json:"image"`
}

// Convert reads a file-based catalog stream (JSON or YAML documents) from
// r and writes the basic template that renders back to it, in format
// ("json" or "yaml"), byte for byte as upstream's
// `opm alpha convert-template basic`: every entry as upstream re-encodes
// it, bundles reduced to their schema and image, four-space indentation
// (YAML: sigs.k8s.io/yaml's rendering after a "---" line), a trailing
// blank line. Nothing is written on error.
func Convert(r io.Reader, w io.Writer, format string) error {
	entries, err := tdeclcfg.ReadEntries(r, func(m *tdeclcfg.Meta) error {
		if m.Schema != declcfg.SchemaBundle {
			return nil
		}
		b, err := tdeclcfg.UnmarshalBundle(m.Blob)
		if err != nil {
			return fmt.Errorf("parse bundle: %v", err)
		}
		blob, err := json.Marshal(bundleImage{Schema: b.Schema, Image: b.Image})
		if err != nil {
			return fmt.Errorf("re-serialize bundle: %v", err)
		}
		m.Blob = blob
		return nil
	})
	if err != nil {
		return err
	}
	return tdeclcfg.WriteTemplate(w, converted{Schema: Schema, Entries: entries}, format)
}
