package declcfg

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// The Decode functions read a blob's canonical JSON into its typed view with
// encoding/json's rules, which is what upstream does: keys match field names
// case-insensitively (the last matching key wins), unknown keys are ignored,
// null leaves a string unset and a list nil, and a value of the wrong JSON
// type is an error. Property values and other raw parts alias data.

// DecodeError is a blob field whose value has the wrong JSON type.
type DecodeError struct {
	Field    string // path of the field inside the blob, e.g. "properties[2].type"
	Expected string
	Found    string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("field %q must be %s, found %s", e.Field, e.Expected, e.Found)
}

type decoder struct{ err error }

func (d *decoder) fail(field, expected string, val []byte) {
	if d.err == nil {
		d.err = &DecodeError{Field: field, Expected: expected, Found: canonjson.TypeName(val)}
	}
}

func (d *decoder) str(dst *string, field string, val []byte) {
	switch canonjson.Kind(val) {
	case '"':
		*dst, _ = canonjson.String(val)
	case 'n':
	default:
		d.fail(field, "a string", val)
	}
}

func (d *decoder) strs(dst *[]string, field string, val []byte) {
	switch canonjson.Kind(val) {
	case '[':
		out := []string{}
		i := 0
		canonjson.ForEachElement(val, func(e []byte) bool {
			var s string
			d.str(&s, fmt.Sprintf("%s[%d]", field, i), e)
			out = append(out, s)
			i++
			return true
		})
		*dst = out
	case 'n':
		*dst = nil
	default:
		d.fail(field, "a list of strings", val)
	}
}

// object calls fn for each member of val, or records an error when val is
// neither an object nor null. It reports whether val was an object.
func (d *decoder) object(field string, val []byte, fn func(key, val []byte)) bool {
	switch canonjson.Kind(val) {
	case '{':
		canonjson.ForEachMember(val, func(k, v []byte) bool { fn(k, v); return true })
		return true
	case 'n':
	default:
		d.fail(field, "an object", val)
	}
	return false
}

// list calls fn for each element of val, or records an error when val is
// neither an array nor null. It reports whether val was an array.
func (d *decoder) list(field string, val []byte, fn func(i int, e []byte)) bool {
	switch canonjson.Kind(val) {
	case '[':
		i := 0
		canonjson.ForEachElement(val, func(e []byte) bool { fn(i, e); i++; return true })
		return true
	case 'n':
	default:
		d.fail(field, "a list", val)
	}
	return false
}

func (d *decoder) properties(dst *[]property.Property, field string, val []byte) {
	out := []property.Property{}
	if !d.list(field, val, func(i int, e []byte) {
		var p property.Property
		f := fmt.Sprintf("%s[%d]", field, i)
		d.object(f, e, func(k, v []byte) {
			switch {
			case canonjson.KeyFold(k, "type"):
				d.str(&p.Type, f+".type", v)
			case canonjson.KeyFold(k, "value"):
				p.Value = json.RawMessage(v)
			}
		})
		out = append(out, p)
	}) {
		out = nil
	}
	*dst = out
}

// DecodePackage decodes an olm.package blob.
func DecodePackage(data []byte) (Package, error) {
	var (
		p Package
		d decoder
	)
	d.object("", data, func(k, v []byte) {
		switch {
		case canonjson.KeyFold(k, "schema"):
			d.str(&p.Schema, "schema", v)
		case canonjson.KeyFold(k, "name"):
			d.str(&p.Name, "name", v)
		case canonjson.KeyFold(k, "defaultChannel"):
			d.str(&p.DefaultChannel, "defaultChannel", v)
		case canonjson.KeyFold(k, "description"):
			d.str(&p.Description, "description", v)
		case canonjson.KeyFold(k, "properties"):
			d.properties(&p.Properties, "properties", v)
		case canonjson.KeyFold(k, "icon"):
			if canonjson.Kind(v) == 'n' {
				p.Icon = nil
				return
			}
			icon := &Icon{}
			if d.object("icon", v, func(k, v []byte) {
				switch {
				case canonjson.KeyFold(k, "base64data"):
					switch canonjson.Kind(v) {
					case 'n':
						icon.Data = nil
					case '"':
						raw, _ := canonjson.RawString(v)
						data := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
						n, err := base64.StdEncoding.Decode(data, raw)
						if err != nil && d.err == nil {
							d.err = fmt.Errorf("field %q: %w", "icon.base64data", err)
						}
						icon.Data = data[:n]
					default:
						d.fail("icon.base64data", "a base64 string", v)
					}
				case canonjson.KeyFold(k, "mediatype"):
					d.str(&icon.MediaType, "icon.mediatype", v)
				}
			}) {
				p.Icon = icon
			}
		}
	})
	return p, d.err
}

// DecodeChannel decodes an olm.channel blob.
func DecodeChannel(data []byte) (Channel, error) {
	var (
		c Channel
		d decoder
	)
	d.object("", data, func(k, v []byte) {
		switch {
		case canonjson.KeyFold(k, "schema"):
			d.str(&c.Schema, "schema", v)
		case canonjson.KeyFold(k, "name"):
			d.str(&c.Name, "name", v)
		case canonjson.KeyFold(k, "package"):
			d.str(&c.Package, "package", v)
		case canonjson.KeyFold(k, "properties"):
			d.properties(&c.Properties, "properties", v)
		case canonjson.KeyFold(k, "entries"):
			entries := []ChannelEntry{}
			if !d.list("entries", v, func(i int, e []byte) {
				var ce ChannelEntry
				f := fmt.Sprintf("entries[%d]", i)
				d.object(f, e, func(k, v []byte) {
					switch {
					case canonjson.KeyFold(k, "name"):
						d.str(&ce.Name, f+".name", v)
					case canonjson.KeyFold(k, "replaces"):
						d.str(&ce.Replaces, f+".replaces", v)
					case canonjson.KeyFold(k, "skips"):
						d.strs(&ce.Skips, f+".skips", v)
					case canonjson.KeyFold(k, "skipRange"):
						d.str(&ce.SkipRange, f+".skipRange", v)
					}
				})
				entries = append(entries, ce)
			}) {
				entries = nil
			}
			c.Entries = entries
		}
	})
	return c, d.err
}

// DecodeBundle decodes an olm.bundle blob.
func DecodeBundle(data []byte) (Bundle, error) {
	var (
		b Bundle
		d decoder
	)
	d.object("", data, func(k, v []byte) {
		switch {
		case canonjson.KeyFold(k, "schema"):
			d.str(&b.Schema, "schema", v)
		case canonjson.KeyFold(k, "name"):
			d.str(&b.Name, "name", v)
		case canonjson.KeyFold(k, "package"):
			d.str(&b.Package, "package", v)
		case canonjson.KeyFold(k, "image"):
			d.str(&b.Image, "image", v)
		case canonjson.KeyFold(k, "properties"):
			d.properties(&b.Properties, "properties", v)
		case canonjson.KeyFold(k, "relatedImages"):
			ris := []RelatedImage{}
			if !d.list("relatedImages", v, func(i int, e []byte) {
				var ri RelatedImage
				f := fmt.Sprintf("relatedImages[%d]", i)
				d.object(f, e, func(k, v []byte) {
					switch {
					case canonjson.KeyFold(k, "name"):
						d.str(&ri.Name, f+".name", v)
					case canonjson.KeyFold(k, "image"):
						d.str(&ri.Image, f+".image", v)
					}
				})
				ris = append(ris, ri)
			}) {
				ris = nil
			}
			b.RelatedImages = ris
		}
	})
	return b, d.err
}

// DecodeDeprecation decodes an olm.deprecations blob.
func DecodeDeprecation(data []byte) (Deprecation, error) {
	var (
		dep Deprecation
		d   decoder
	)
	d.object("", data, func(k, v []byte) {
		switch {
		case canonjson.KeyFold(k, "schema"):
			d.str(&dep.Schema, "schema", v)
		case canonjson.KeyFold(k, "package"):
			d.str(&dep.Package, "package", v)
		case canonjson.KeyFold(k, "entries"):
			entries := []DeprecationEntry{}
			if !d.list("entries", v, func(i int, e []byte) {
				var de DeprecationEntry
				f := fmt.Sprintf("entries[%d]", i)
				d.object(f, e, func(k, v []byte) {
					switch {
					case canonjson.KeyFold(k, "message"):
						d.str(&de.Message, f+".message", v)
					case canonjson.KeyFold(k, "reference"):
						d.object(f+".reference", v, func(k, v []byte) {
							switch {
							case canonjson.KeyFold(k, "schema"):
								d.str(&de.Reference.Schema, f+".reference.schema", v)
							case canonjson.KeyFold(k, "name"):
								d.str(&de.Reference.Name, f+".reference.name", v)
							}
						})
					}
				})
				entries = append(entries, de)
			}) {
				entries = nil
			}
			dep.Entries = entries
		}
	})
	return dep, d.err
}
