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
	// out, when set, receives b whenever it grows past
	// canonjson.FlushSize at the end of a line, so that a blob of any
	// size is written in bounded memory; err is its first error.
	out io.Writer
	err error
}

func (w *jsonWriter) newline() {
	if w.indent != "" {
		w.b = canonjson.AppendNewline(w.b, w.indent, w.depth)
		if w.out != nil && len(w.b) >= canonjson.FlushSize {
			w.b = w.flush(w.b)
		}
	}
}

// flush writes b to out and returns b emptied.
func (w *jsonWriter) flush(b []byte) []byte {
	if w.err == nil {
		_, w.err = w.out.Write(b)
	}
	return b[:0]
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
	if w.out != nil {
		w.b = canonjson.AppendIndentFlush(w.b, val, w.indent, w.depth, w.flush)
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
	w.encode(v)
	return w.b
}

// WriteJSON writes one blob as AppendJSON appends it, in pieces of about
// canonjson.FlushSize: a blob whose indented form is far larger than its
// canonical one (deep nesting) is never held whole. buf is scratch space,
// returned for reuse.
func WriteJSON(w io.Writer, buf []byte, v any) ([]byte, error) {
	jw := jsonWriter{b: buf[:0], indent: RenderIndent, out: w}
	jw.encode(v)
	if jw.err == nil && len(jw.b) > 0 {
		_, jw.err = w.Write(jw.b)
	}
	return jw.b[:0], jw.err
}

func (w *jsonWriter) encode(v any) {
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
		w.raw(t.JSON)
	default:
		panic(fmt.Sprintf("declcfg: cannot encode %T", v))
	}
	if w.indent != "" {
		w.b = append(w.b, '\n')
	}
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

// Write writes one blob in format f to w; JSON is written in pieces
// (WriteJSON). buf is scratch space, returned for reuse.
func (f Format) Write(w io.Writer, buf []byte, v any) ([]byte, error) {
	if f == FormatYAML {
		var err error
		if buf, err = AppendYAML(buf[:0], v); err != nil {
			return buf, err
		}
		_, err = w.Write(buf)
		return buf[:0], err
	}
	return WriteJSON(w, buf, v)
}

// Append appends one blob in format f.
func (f Format) Append(dst []byte, v any) ([]byte, error) {
	if f == FormatYAML {
		return AppendYAML(dst, v)
	}
	return AppendJSON(dst, v), nil
}

// RenderItem is a blob waiting to be rendered: what upstream sorts by, and
// a payload for the caller.
type RenderItem struct {
	Schema string // the blob's schema
	Group  string // its package: Name for olm.package, Package otherwise
	Name   string // its name
	Value  any
}

// RenderOrder arranges items, given in load order, in upstream's render
// order: packages by name; in each, the olm.package blobs, channels by name,
// bundles by name, other blobs (stably by schema), the deprecations; then
// the other blobs that belong to no package. Blobs of the four OLM schemas
// whose package is empty are dropped, as upstream drops them. Ties are
// broken as upstream's sorts break them (the same sort calls on the same
// input order).
func RenderOrder(items []RenderItem) []RenderItem {
	type group struct{ pkgs, chans, bunds, other, deps []RenderItem }
	groups := map[string]*group{}
	var root []RenderItem
	for _, it := range items {
		if it.Group == "" {
			switch it.Schema {
			case SchemaPackage, SchemaChannel, SchemaBundle, SchemaDeprecations:
			default:
				root = append(root, it)
			}
			continue
		}
		g := groups[it.Group]
		if g == nil {
			g = &group{}
			groups[it.Group] = g
		}
		switch it.Schema {
		case SchemaPackage:
			g.pkgs = append(g.pkgs, it)
		case SchemaChannel:
			g.chans = append(g.chans, it)
		case SchemaBundle:
			g.bunds = append(g.bunds, it)
		case SchemaDeprecations:
			g.deps = append(g.deps, it)
		default:
			g.other = append(g.other, it)
		}
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]RenderItem, 0, len(items))
	for _, n := range names {
		g := groups[n]
		sort.Slice(g.chans, func(i, j int) bool { return g.chans[i].Name < g.chans[j].Name })
		sort.Slice(g.bunds, func(i, j int) bool { return g.bunds[i].Name < g.bunds[j].Name })
		sort.SliceStable(g.other, func(i, j int) bool { return g.other[i].Schema < g.other[j].Schema })
		out = append(out, g.pkgs...)
		out = append(out, g.chans...)
		out = append(out, g.bunds...)
		out = append(out, g.other...)
		out = append(out, g.deps...)
	}
	return append(out, root...)
}

// Items lists the config's blobs in load order (the order of Merge) as
// RenderItems whose Value points at the typed blob.
func (cfg *DeclarativeConfig) Items() []RenderItem {
	var items []RenderItem
	for i := range cfg.Packages {
		p := &cfg.Packages[i]
		items = append(items, RenderItem{Schema: SchemaPackage, Group: p.Name, Name: p.Name, Value: p})
	}
	for i := range cfg.Channels {
		c := &cfg.Channels[i]
		items = append(items, RenderItem{Schema: SchemaChannel, Group: c.Package, Name: c.Name, Value: c})
	}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		items = append(items, RenderItem{Schema: SchemaBundle, Group: b.Package, Name: b.Name, Value: b})
	}
	for i := range cfg.Others {
		o := &cfg.Others[i]
		items = append(items, RenderItem{Schema: o.Schema, Group: o.Package, Name: o.Name, Value: o})
	}
	for i := range cfg.Deprecations {
		d := &cfg.Deprecations[i]
		items = append(items, RenderItem{Schema: SchemaDeprecations, Group: d.Package, Value: d})
	}
	return items
}

// WriteTo writes the whole config in upstream's render order (RenderOrder)
// and format f.
func (cfg *DeclarativeConfig) WriteTo(w io.Writer, f Format) error {
	var buf []byte
	for _, it := range RenderOrder(cfg.Items()) {
		var err error
		if buf, err = f.Write(w, buf, it.Value); err != nil {
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
