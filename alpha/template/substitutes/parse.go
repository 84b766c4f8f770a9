package substitutes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"golang.org/x/text/cases"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// Substitute says that the bundle in the image Name takes the place of the
// bundle named Base in every channel that lists Base.
type Substitute struct {
	Name string `json:"name"` // the substitute's bundle image reference
	Base string `json:"base"` // the name of the bundle it substitutes for
}

// SubstitutesTemplateData is the template document. The type's name and
// its fields' names appear in encoding/json's messages for a template of
// the wrong shape, which are upstream's (its type has the same name).
type SubstitutesTemplateData struct {
	Schema        string            `json:"schema"`
	Entries       []json.RawMessage `json:"entries"`
	Substitutions []Substitute      `json:"substitutions"`
}

// template is a parsed template: its entries as blobs, in template order.
type template struct {
	entries       []declcfg.Meta
	substitutions []Substitute
}

// parse reads the template's first document as upstream does (JSON when the
// first non-space byte of the first 4096 is '{', with a fall back to YAML
// when that fails; YAML otherwise) and checks its shape and schema. Errors
// carry upstream's words.
func parse(r io.Reader) (*template, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("decoding template schema: %w", err)
	}
	doc, err := firstDocument(data)
	if err != nil {
		return nil, fmt.Errorf("decoding template schema: %w", err)
	}
	var st SubstitutesTemplateData
	if err := json.Unmarshal(doc, &st); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field == "entries" {
			// Upstream decodes entries into []*declcfg.Meta.
			err = fmt.Errorf("json: cannot unmarshal %s into Go struct field SubstitutesTemplateData.entries of type []*declcfg.Meta", ute.Value)
		}
		return nil, fmt.Errorf("unmarshalling template: %w", err)
	}
	t := &template{substitutions: st.Substitutions}
	for i, raw := range st.Entries {
		m, err := entryMeta(raw)
		if err != nil {
			return nil, fmt.Errorf("unmarshalling template: entries[%d]: %w", i, err)
		}
		t.entries = append(t.entries, m)
	}
	if st.Schema != Schema {
		return nil, fmt.Errorf("template has unknown schema (%q), should be %q", st.Schema, Schema)
	}
	return t, nil
}

// firstDocument returns the JSON of data's first document, as upstream's
// YAMLOrJSONDecoder hands it over: nil for a YAML document that holds
// nothing (blank, comments, null).
func firstDocument(data []byte) ([]byte, error) {
	if len(data) == 0 {
		return nil, io.EOF
	}
	if !canonjson.IsJSONStream(data) {
		return firstYAML(data)
	}
	var raw json.RawMessage
	err := json.NewDecoder(bytes.NewReader(data)).Decode(&raw)
	if err == nil {
		return raw, nil
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		err = fmt.Errorf("json: offset %d: %w", syn.Offset, syn)
	}
	// Upstream tries the stream as YAML before it reports the JSON error.
	if doc, yerr := firstYAML(data); yerr == nil {
		return doc, nil
	}
	return nil, err
}

var errStop = errors.New("stop")

func firstYAML(data []byte) ([]byte, error) {
	var (
		doc   canonjson.YAMLDoc
		found bool
	)
	err := canonjson.SplitYAML(data, func(d canonjson.YAMLDoc) error {
		doc, found = d, true
		return errStop
	})
	var le *canonjson.LineError
	switch {
	case err == nil, errors.Is(err, errStop):
	case errors.Is(err, canonjson.ErrBadSeparator) && errors.As(err, &le):
		// Upstream's words: what follows the "---".
		line := strings.Split(string(data), "\n")[le.Line-1]
		return nil, fmt.Errorf("invalid Yaml document separator: %s", strings.TrimSpace(strings.TrimSuffix(line, "\r")[3:]))
	default:
		return nil, err
	}
	if !found {
		return nil, io.EOF
	}
	js, err := canonjson.FromYAML(nil, doc.Data)
	if err != nil {
		if doc.Line > 1 {
			// The document follows a "---" line, which upstream's reader
			// keeps as its first line: count lines from there.
			if _, err2 := canonjson.FromYAML(nil, append([]byte("---\n"), doc.Data...)); err2 != nil {
				err = err2
			}
		}
		return nil, fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	if string(js) == "null" {
		return nil, nil
	}
	return js, nil
}

// entryMeta makes a blob of one entry: its canonical JSON and its schema,
// package and name, whose keys match case-insensitively as upstream's do.
func entryMeta(raw []byte) (declcfg.Meta, error) {
	js, err := canonjson.Canonicalize(raw)
	if err != nil {
		return declcfg.Meta{}, err
	}
	switch canonjson.Kind(js) {
	case '{':
	case 'n':
		return declcfg.Meta{}, errors.New("an entry is null: every entry must be an FBC object")
	default:
		return declcfg.Meta{}, fmt.Errorf("json: cannot unmarshal %s into Go value of type map[string]interface {}: every entry must be an FBC object", canonjson.TypeName(js))
	}
	m := declcfg.Meta{JSON: js}
	byFold := map[string][]string{}
	vals := map[string][]byte{}
	fold := cases.Fold()
	canonjson.ForEachMember(js, func(k, v []byte) bool {
		key, _ := canonjson.Key(k)
		f := fold.String(key)
		byFold[f] = append(byFold[f], key)
		vals[f] = v
		return true
	})
	var dups []string
	for f, keys := range byFold {
		if len(keys) > 1 {
			sort.Strings(keys)
			dups = append(dups, fmt.Sprintf("duplicate keys for key %q: [%s]", f, strings.Join(keys, " ")))
		}
	}
	switch len(dups) {
	case 0:
	case 1:
		return declcfg.Meta{}, errors.New(dups[0])
	default:
		sort.Strings(dups)
		return declcfg.Meta{}, fmt.Errorf("[%s]", strings.Join(dups, ", "))
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"schema", &m.Schema}, {"package", &m.Package}, {"name", &m.Name}} {
		v, ok := vals[f.key]
		if !ok {
			continue
		}
		s, ok := canonjson.String(v)
		if !ok {
			var g any
			_ = json.Unmarshal(v, &g)
			return declcfg.Meta{}, fmt.Errorf("expected value for key %q to be a string, got %t: %v", byFold[f.key][0], g, g)
		}
		*f.dst = s
	}
	return m, nil
}

// load turns the entries into a DeclarativeConfig, as upstream's LoadSlice
// does: typed blobs for the four OLM schemas, the others kept as they are,
// and the manifests of every bundle's olm.bundle.object properties read.
func load(entries []declcfg.Meta) (*declcfg.DeclarativeConfig, error) {
	cfg := &declcfg.DeclarativeConfig{}
	for i := range entries {
		m := &entries[i]
		if m.Schema == "" {
			// Upstream prints the blob as its encoder wrote it, newline
			// included.
			return nil, fmt.Errorf("object '%s\n' is missing root schema field", m.JSON)
		}
		v, err := declcfg.DecodeBlob(m)
		if err != nil {
			return nil, fmt.Errorf("entries[%d]: %w", i, err)
		}
		if b, ok := v.(*declcfg.Bundle); ok {
			if err := readBundleObjects(b); err != nil {
				return nil, fmt.Errorf("read bundle objects: %w", err)
			}
		}
		cfg.Add(v)
	}
	return cfg, nil
}

// readBundleObjects fills b.Objects and b.CsvJSON from b's olm.bundle.object
// properties, as upstream's loader does, with its errors.
func readBundleObjects(b *declcfg.Bundle) error {
	var c canonjson.Canonicalizer
	for i, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		data, err := property.BundleObjectData(nil, p.Value)
		if err != nil {
			return fmt.Errorf("package %q, bundle %q: parse property at index %d as bundle object: %w", b.Package, b.Name, i, err)
		}
		if len(data) == 0 {
			// A manifest given by reference: yaml.ToJSON makes null of it.
			b.Objects = append(b.Objects, "null")
			continue
		}
		js, err := property.ManifestJSON(data)
		if err != nil {
			return fmt.Errorf("package %q, bundle %q: convert bundle object property at index %d to JSON: %w", b.Package, b.Name, i, err)
		}
		b.Objects = append(b.Objects, string(js))
		if b.CsvJSON == "" && property.IsCSV(js, &c) {
			b.CsvJSON = string(js)
		}
	}
	return nil
}
