package declcfg

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// RenderIndent is the indentation of upstream's JSON render output.
const RenderIndent = "    "

// jsonWriter appends JSON exactly as encoding/json's Encoder writes the
// declcfg types with SetEscapeHTML(false) and SetIndent("", indent): an
// empty indent gives compact JSON.
type jsonWriter struct {
	b      []byte
	indent string
	depth  int
	first  bool
}

func (w *jsonWriter) newline() {
	if w.indent != "" {
		w.b = canonjson.AppendNewline(w.b, w.indent, w.depth)
	}
}

func (w *jsonWriter) open(c byte) {
	w.b = append(w.b, c)
	w.depth++
	w.first = true
}

func (w *jsonWriter) close(c byte) {
	w.depth--
	if !w.first {
		w.newline()
	}
	w.first = false
	w.b = append(w.b, c)
}

// sep starts the next member or element.
func (w *jsonWriter) sep() {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.newline()
}

func (w *jsonWriter) key(name string) {
	w.sep()
	w.b = canonjson.AppendQuoted(w.b, name)
	w.b = append(w.b, ':')
	if w.indent != "" {
		w.b = append(w.b, ' ')
	}
}

func (w *jsonWriter) str(name, val string) {
	w.key(name)
	w.b = canonjson.AppendQuoted(w.b, val)
}

// raw writes a canonical JSON value (nil is null, as for json.RawMessage).
func (w *jsonWriter) raw(val []byte) {
	if len(val) == 0 {
		w.b = append(w.b, "null"...)
		return
	}
	if w.indent == "" {
		w.b = append(w.b, val...)
		return
	}
	w.b = canonjson.AppendIndent(w.b, val, w.indent, w.depth)
}

func (w *jsonWriter) properties(props []property.Property) {
	if len(props) == 0 {
		return
	}
	w.key("properties")
	w.open('[')
	for _, p := range props {
		w.sep()
		w.open('{')
		w.str("type", p.Type)
		w.key("value")
		w.raw(p.Value)
		w.close('}')
	}
	w.close(']')
}

func (w *jsonWriter) strList(name string, vals []string, omitEmpty bool) {
	if omitEmpty && len(vals) == 0 {
		return
	}
	w.key(name)
	if vals == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.open('[')
	for _, v := range vals {
		w.sep()
		w.b = canonjson.AppendQuoted(w.b, v)
	}
	w.close(']')
}

func (w *jsonWriter) pkg(p *Package) {
	w.open('{')
	w.str("schema", p.Schema)
	w.str("name", p.Name)
	w.str("defaultChannel", p.DefaultChannel)
	if p.Icon != nil {
		w.key("icon")
		w.open('{')
		w.key("base64data")
		if p.Icon.Data == nil {
			w.b = append(w.b, "null"...)
		} else {
			w.b = append(w.b, '"')
			w.b = base64.StdEncoding.AppendEncode(w.b, p.Icon.Data)
			w.b = append(w.b, '"')
		}
		w.str("mediatype", p.Icon.MediaType)
		w.close('}')
	}
	if p.Description != "" {
		w.str("description", p.Description)
	}
	w.properties(p.Properties)
	w.close('}')
}

func (w *jsonWriter) channel(c *Channel) {
	w.open('{')
	w.str("schema", c.Schema)
	w.str("name", c.Name)
	w.str("package", c.Package)
	w.key("entries")
	if c.Entries == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.open('[')
		for _, e := range c.Entries {
			w.sep()
			w.open('{')
			w.str("name", e.Name)
			if e.Replaces != "" {
				w.str("replaces", e.Replaces)
			}
			w.strList("skips", e.Skips, true)
			if e.SkipRange != "" {
				w.str("skipRange", e.SkipRange)
			}
			w.close('}')
		}
		w.close(']')
	}
	w.properties(c.Properties)
	w.close('}')
}

func (w *jsonWriter) bundle(b *Bundle) {
	w.open('{')
	w.str("schema", b.Schema)
	if b.Name != "" {
		w.str("name", b.Name)
	}
	if b.Package != "" {
		w.str("package", b.Package)
	}
	w.str("image", b.Image)
	w.properties(b.Properties)
	if len(b.RelatedImages) > 0 {
		w.key("relatedImages")
		w.open('[')
		for _, ri := range b.RelatedImages {
			w.sep()
			w.open('{')
			w.str("name", ri.Name)
			w.str("image", ri.Image)
			w.close('}')
		}
		w.close(']')
	}
	w.close('}')
}

func (w *jsonWriter) deprecation(d *Deprecation) {
	w.open('{')
	w.str("schema", d.Schema)
	w.str("package", d.Package)
	w.key("entries")
	if d.Entries == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.open('[')
		for _, e := range d.Entries {
			w.sep()
			w.open('{')
			w.key("reference")
			w.open('{')
			w.str("schema", e.Reference.Schema)
			if e.Reference.Name != "" {
				w.str("name", e.Reference.Name)
			}
			w.close('}')
			w.str("message", e.Message)
			w.close('}')
		}
		w.close(']')
	}
	w.close('}')
}

// AppendJSON appends one blob as upstream's `opm render -o json` writes it
// (json.Encoder with four-space indent, no HTML escaping, a trailing
// newline). v is a *Package, *Channel, *Bundle, *Deprecation or *Meta.
func AppendJSON(dst []byte, v any) []byte {
	return appendEncoded(dst, v, RenderIndent)
}

// AppendCompactJSON appends one blob as compact JSON without a newline.
func AppendCompactJSON(dst []byte, v any) []byte {
	return appendEncoded(dst, v, "")
}

func appendEncoded(dst []byte, v any, indent string) []byte {
	w := jsonWriter{b: dst, indent: indent}
	switch t := v.(type) {
	case *Package:
		w.pkg(t)
	case *Channel:
		w.channel(t)
	case *Bundle:
		w.bundle(t)
	case *Deprecation:
		w.deprecation(t)
	case *Meta:
		w.raw(t.Blob)
	default:
		panic(fmt.Sprintf("declcfg: cannot encode %T", v))
	}
	if indent != "" {
		w.b = append(w.b, '\n')
	}
	return w.b
}

// AppendYAML appends one blob as upstream's `opm render -o yaml` writes it:
// a "---" line, then sigs.k8s.io/yaml's rendering of the blob's JSON.
func AppendYAML(dst []byte, v any) ([]byte, error) {
	y, err := yaml.JSONToYAML(AppendCompactJSON(nil, v))
	if err != nil {
		return dst, err
	}
	dst = append(dst, "---\n"...)
	return append(dst, y...), nil
}

// Format is an output format of render.
type Format string

// The render output formats.
const (
	FormatJSON Format = "json"
	FormatYAML Format = "yaml"
)

// ParseFormat checks an -o flag value.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case FormatJSON, FormatYAML:
		return Format(s), nil
	}
	return "", fmt.Errorf("invalid output format %q: must be json or yaml", s)
}

// Append appends one blob in format f.
func (f Format) Append(dst []byte, v any) ([]byte, error) {
	if f == FormatYAML {
		return AppendYAML(dst, v)
	}
	return AppendJSON(dst, v), nil
}

// WriteTo writes the whole config in upstream's render order and format:
// packages by name; in each, the olm.package blob, channels by name,
// bundles by name, other blobs (stably by schema), the deprecations; then
// the blobs that belong to no package. Blobs whose package (or, for
// olm.package, name) is empty are dropped except those "other" blobs.
func (cfg *DeclarativeConfig) WriteTo(w io.Writer, f Format) error {
	type group struct {
		pkgs  []*Package
		chans []*Channel
		bunds []*Bundle
		other []*Meta
		deps  []*Deprecation
	}
	groups := map[string]*group{}
	get := func(name string) *group {
		g := groups[name]
		if g == nil {
			g = &group{}
			groups[name] = g
		}
		return g
	}
	for i := range cfg.Packages {
		if p := &cfg.Packages[i]; p.Name != "" {
			get(p.Name).pkgs = append(get(p.Name).pkgs, p)
		}
	}
	for i := range cfg.Channels {
		if c := &cfg.Channels[i]; c.Package != "" {
			get(c.Package).chans = append(get(c.Package).chans, c)
		}
	}
	for i := range cfg.Bundles {
		if b := &cfg.Bundles[i]; b.Package != "" {
			get(b.Package).bunds = append(get(b.Package).bunds, b)
		}
	}
	var rootOthers []*Meta
	for i := range cfg.Others {
		o := &cfg.Others[i]
		if o.Package == "" {
			rootOthers = append(rootOthers, o)
			continue
		}
		get(o.Package).other = append(get(o.Package).other, o)
	}
	for i := range cfg.Deprecations {
		if d := &cfg.Deprecations[i]; d.Package != "" {
			get(d.Package).deps = append(get(d.Package).deps, d)
		}
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)

	var buf []byte
	flush := func(v any) error {
		var err error
		if buf, err = f.Append(buf[:0], v); err != nil {
			return err
		}
		_, err = w.Write(buf)
		return err
	}
	for _, n := range names {
		g := groups[n]
		sort.Slice(g.chans, func(i, j int) bool { return g.chans[i].Name < g.chans[j].Name })
		sort.Slice(g.bunds, func(i, j int) bool { return g.bunds[i].Name < g.bunds[j].Name })
		sort.SliceStable(g.other, func(i, j int) bool { return g.other[i].Schema < g.other[j].Schema })
		var vals []any
		for _, p := range g.pkgs {
			vals = append(vals, p)
		}
		for _, c := range g.chans {
			vals = append(vals, c)
		}
		for _, b := range g.bunds {
			vals = append(vals, b)
		}
		for _, o := range g.other {
			vals = append(vals, o)
		}
		for _, d := range g.deps {
			vals = append(vals, d)
		}
		for _, v := range vals {
			if err := flush(v); err != nil {
				return err
			}
		}
	}
	for _, o := range rootOthers {
		if err := flush(o); err != nil {
			return err
		}
	}
	return nil
}

// PrepareForRender applies render's normalisation to a bundle: properties of
// type olm.bundle.object and olm.csv.metadata move to the end (keeping
// their order) and related images are sorted by image with upstream's
// (unstable) sort, so equal images keep upstream's arrangement.
func PrepareForRender(b *Bundle) {
	var objs []property.Property
	kept := b.Properties[:0:0]
	for _, p := range b.Properties {
		if p.Type == property.TypeBundleObject || p.Type == property.TypeCSVMetadata {
			objs = append(objs, p)
		} else {
			kept = append(kept, p)
		}
	}
	if len(objs) > 0 {
		b.Properties = append(kept, objs...)
	}
	sort.Slice(b.RelatedImages, func(i, j int) bool { return b.RelatedImages[i].Image < b.RelatedImages[j].Image })
}

var _ json.Marshaler = Meta{}
