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

// decoder reads one blob with a canonjson.Reader, consuming every value
// exactly once, and keeps the first type error.
type decoder struct {
	r   canonjson.Reader
	err error
}

// fail records a type error for the value at the reader and skips it.
func (d *decoder) fail(field func() string, expected string) {
	val := d.r.Skip()
	if d.err == nil {
		d.err = &DecodeError{Field: field(), Expected: expected, Found: canonjson.TypeName(val)}
	}
}

func (d *decoder) str(dst *string, field func() string) {
	switch d.r.Peek() {
	case '"':
		*dst, _ = canonjson.String(d.r.Skip())
	case 'n':
		d.r.Skip()
	default:
		d.fail(field, "a string")
	}
}

func (d *decoder) strs(dst *[]string, field func() string) {
	switch d.r.Peek() {
	case '[':
		out := []string{}
		d.r.Array()
		for i := 0; d.r.Next(); i++ {
			var s string
			d.str(&s, func() string { return fmt.Sprintf("%s[%d]", field(), i) })
			out = append(out, s)
		}
		*dst = out
	case 'n':
		d.r.Skip()
		*dst = nil
	default:
		d.fail(field, "a list of strings")
	}
}

// object calls fn for each member of the object at the reader; fn must
// consume the member's value (or leave it, and it is skipped). It reports
// whether there was an object; null is consumed, other values are an error.
func (d *decoder) object(field func() string, fn func(key []byte)) bool {
	switch d.r.Peek() {
	case '{':
		d.r.Object()
		for {
			key, ok := d.r.Key()
			if !ok {
				return true
			}
			mark := d.r.Pos()
			fn(key)
			if d.r.Pos() == mark {
				d.r.Skip()
			}
		}
	case 'n':
		d.r.Skip()
	default:
		d.fail(field, "an object")
	}
	return false
}

// list calls fn for each element of the array at the reader; fn must
// consume the element. It reports whether there was an array.
func (d *decoder) list(field func() string, fn func(i int)) bool {
	switch d.r.Peek() {
	case '[':
		d.r.Array()
		for i := 0; d.r.Next(); i++ {
			mark := d.r.Pos()
			fn(i)
			if d.r.Pos() == mark {
				d.r.Skip()
			}
		}
		return true
	case 'n':
		d.r.Skip()
	default:
		d.fail(field, "a list")
	}
	return false
}

func at(base string, i int, sub string) func() string {
	return func() string { return fmt.Sprintf("%s[%d]%s", base, i, sub) }
}

func name(s string) func() string { return func() string { return s } }

func (d *decoder) properties(dst *[]property.Property, base string) {
	out := []property.Property{}
	if !d.list(name(base), func(i int) {
		var p property.Property
		d.object(at(base, i, ""), func(k []byte) {
			switch {
			case canonjson.KeyFold(k, "type"):
				d.str(&p.Type, at(base, i, ".type"))
			case canonjson.KeyFold(k, "value"):
				p.Value = json.RawMessage(d.r.Skip())
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
	var p Package
	d := decoder{r: *canonjson.NewReader(data)}
	d.object(name(""), func(k []byte) {
		switch {
		case canonjson.KeyFold(k, "schema"):
			d.str(&p.Schema, name("schema"))
		case canonjson.KeyFold(k, "name"):
			d.str(&p.Name, name("name"))
		case canonjson.KeyFold(k, "defaultChannel"):
			d.str(&p.DefaultChannel, name("defaultChannel"))
		case canonjson.KeyFold(k, "description"):
			d.str(&p.Description, name("description"))
		case canonjson.KeyFold(k, "properties"):
			d.properties(&p.Properties, "properties")
		case canonjson.KeyFold(k, "icon"):
			if d.r.Peek() == 'n' {
				d.r.Skip()
				p.Icon = nil
				return
			}
			icon := &Icon{}
			if d.object(name("icon"), func(k []byte) {
				switch {
				case canonjson.KeyFold(k, "base64data"):
					switch d.r.Peek() {
					case 'n':
						d.r.Skip()
						icon.Data = nil
					case '"':
						raw, _ := canonjson.RawString(d.r.Skip())
						data := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
						n, err := base64.StdEncoding.Decode(data, raw)
						if err != nil && d.err == nil {
							d.err = fmt.Errorf("field %q: %w", "icon.base64data", err)
						}
						icon.Data = data[:n]
					default:
						d.fail(name("icon.base64data"), "a base64 string")
					}
				case canonjson.KeyFold(k, "mediatype"):
					d.str(&icon.MediaType, name("icon.mediatype"))
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
	var c Channel
	d := decoder{r: *canonjson.NewReader(data)}
	d.object(name(""), func(k []byte) {
		switch {
		case canonjson.KeyFold(k, "schema"):
			d.str(&c.Schema, name("schema"))
		case canonjson.KeyFold(k, "name"):
			d.str(&c.Name, name("name"))
		case canonjson.KeyFold(k, "package"):
			d.str(&c.Package, name("package"))
		case canonjson.KeyFold(k, "properties"):
			d.properties(&c.Properties, "properties")
		case canonjson.KeyFold(k, "entries"):
			entries := []ChannelEntry{}
			if !d.list(name("entries"), func(i int) {
				var ce ChannelEntry
				d.object(at("entries", i, ""), func(k []byte) {
					switch {
					case canonjson.KeyFold(k, "name"):
						d.str(&ce.Name, at("entries", i, ".name"))
					case canonjson.KeyFold(k, "replaces"):
						d.str(&ce.Replaces, at("entries", i, ".replaces"))
					case canonjson.KeyFold(k, "skips"):
						d.strs(&ce.Skips, at("entries", i, ".skips"))
					case canonjson.KeyFold(k, "skipRange"):
						d.str(&ce.SkipRange, at("entries", i, ".skipRange"))
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
	var b Bundle
	d := decoder{r: *canonjson.NewReader(data)}
	d.object(name(""), func(k []byte) {
		switch {
		case canonjson.KeyFold(k, "schema"):
			d.str(&b.Schema, name("schema"))
		case canonjson.KeyFold(k, "name"):
			d.str(&b.Name, name("name"))
		case canonjson.KeyFold(k, "package"):
			d.str(&b.Package, name("package"))
		case canonjson.KeyFold(k, "image"):
			d.str(&b.Image, name("image"))
		case canonjson.KeyFold(k, "properties"):
			d.properties(&b.Properties, "properties")
		case canonjson.KeyFold(k, "relatedImages"):
			ris := []RelatedImage{}
			if !d.list(name("relatedImages"), func(i int) {
				var ri RelatedImage
				d.object(at("relatedImages", i, ""), func(k []byte) {
					switch {
					case canonjson.KeyFold(k, "name"):
						d.str(&ri.Name, at("relatedImages", i, ".name"))
					case canonjson.KeyFold(k, "image"):
						d.str(&ri.Image, at("relatedImages", i, ".image"))
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
	var dep Deprecation
	d := decoder{r: *canonjson.NewReader(data)}
	d.object(name(""), func(k []byte) {
		switch {
		case canonjson.KeyFold(k, "schema"):
			d.str(&dep.Schema, name("schema"))
		case canonjson.KeyFold(k, "package"):
			d.str(&dep.Package, name("package"))
		case canonjson.KeyFold(k, "entries"):
			entries := []DeprecationEntry{}
			if !d.list(name("entries"), func(i int) {
				var de DeprecationEntry
				d.object(at("entries", i, ""), func(k []byte) {
					switch {
					case canonjson.KeyFold(k, "message"):
						d.str(&de.Message, at("entries", i, ".message"))
					case canonjson.KeyFold(k, "reference"):
						d.object(at("entries", i, ".reference"), func(k []byte) {
							switch {
							case canonjson.KeyFold(k, "schema"):
								d.str(&de.Reference.Schema, at("entries", i, ".reference.schema"))
							case canonjson.KeyFold(k, "name"):
								d.str(&de.Reference.Name, at("entries", i, ".reference.name"))
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
