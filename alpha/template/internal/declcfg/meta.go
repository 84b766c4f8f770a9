// Package declcfg holds the template entry type, named as upstream's
// (declcfg.Meta), so that decoding errors that name the type read as
// upstream's do.
package declcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"golang.org/x/text/cases"
)

// Meta is one catalog entry: its identifying keys and the entry as
// upstream re-encodes it (keys sorted, numbers as float64, no HTML
// escaping, a trailing newline).
type Meta struct {
	Schema, Package, Name string
	Blob                  []byte
}

// UnmarshalJSON decodes an entry as upstream's declcfg.Meta does, with
// its errors.
func (m *Meta) UnmarshalJSON(data []byte) error {
	obj := map[string]any{}
	if err := json.Unmarshal(data, &obj); err != nil {
		// A plain error, so that the caller's decoder adds no context.
		return errors.New(pretty(data, err))
	}
	*m = Meta{}
	if err := metaKeys(obj, m); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return err
	}
	m.Blob = buf.Bytes()
	return nil
}

// metaKeys finds schema, package and name, whatever their case (Unicode
// case folding); keys that fold alike are an error, as upstream has it.
func metaKeys(obj map[string]any, m *Meta) error {
	folder := cases.Fold()
	byFold := map[string][]string{}
	for k := range obj {
		f := folder.String(k)
		byFold[f] = append(byFold[f], k)
	}
	var dups []string
	for f, keys := range byFold {
		if len(keys) > 1 {
			sort.Strings(keys)
			dups = append(dups, fmt.Sprintf("duplicate keys for key %q: %v", f, keys))
		}
	}
	switch len(dups) {
	case 0:
	case 1:
		return errors.New(dups[0])
	default:
		sort.Strings(dups)
		return fmt.Errorf("[%s]", joinComma(dups))
	}
	for _, target := range []struct {
		key string
		dst *string
	}{{"schema", &m.Schema}, {"package", &m.Package}, {"name", &m.Name}} {
		keys, ok := byFold[folder.String(target.key)]
		if !ok {
			continue
		}
		v, isString := obj[keys[0]].(string)
		if !isString {
			return fmt.Errorf("expected value for key %q to be a string, got %t: %v", keys[0], obj[keys[0]], obj[keys[0]])
		}
		*target.dst = v
	}
	return nil
}

func joinComma(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// pretty describes a JSON decoding error of data as upstream's
// prettyunmarshaler does: the message, the offset, and the JSON indented
// with a marker where the error is.
func pretty(data []byte, err error) string {
	offset := int64(-1)
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		offset = te.Offset
	case errors.As(err, &se):
		offset = se.Offset
	}
	if len(data) == 0 || offset < 0 || offset > int64(len(data)) {
		return err.Error()
	}
	const marker = " <=="
	var sb bytes.Buffer
	fmt.Fprintf(&sb, "%s at offset %d (indicated by%s)\n", err.Error(), offset, marker)
	var indented bytes.Buffer
	p := data
	if json.Indent(&indented, data, "", "    ") == nil {
		p = indented.Bytes()
	}
	if int(offset) == len(data) {
		sb.Write(p)
		sb.WriteString(marker)
		return sb.String()
	}
	// Find the byte of p that corresponds to data[offset]: indenting only
	// adds bytes.
	var pi, po int
	for di, b := range data {
		if di == int(offset) {
			po = pi
			break
		}
		for p[pi] != b {
			pi++
			if pi >= len(p) {
				return err.Error()
			}
		}
		pi++
	}
	sb.Write(p[:po])
	sb.WriteString(marker + " ")
	sb.Write(p[po:])
	return sb.String()
}
