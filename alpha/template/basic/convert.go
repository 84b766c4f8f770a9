package basic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/alpha/declcfg"
	tdeclcfg "github.com/fastopm/fastopm/alpha/template/internal/declcfg"
)

// rawEntry marshals as the entry's bytes.
type rawEntry []byte

func (e rawEntry) MarshalJSON() ([]byte, error) { return e, nil }

// converted is the template convert-template writes.
type converted struct {
	Schema  string     `json:"schema"`
	Entries []rawEntry `json:"entries"`
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
	t := converted{Schema: Schema}
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		var m tdeclcfg.Meta
		if err := dec.Decode(&m); err != nil {
			if err == io.EOF {
				break
			}
			return err
		}
		if m.Schema == declcfg.SchemaBundle {
			b, err := declcfg.DecodeBundle(bytes.TrimSuffix(m.Blob, []byte("\n")))
			if err != nil {
				return fmt.Errorf("parse bundle: %v", err)
			}
			blob, err := json.Marshal(bundleImage{Schema: b.Schema, Image: b.Image})
			if err != nil {
				return fmt.Errorf("re-serialize bundle: %v", err)
			}
			m.Blob = blob
		}
		t.Entries = append(t.Entries, rawEntry(m.Blob))
	}
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
