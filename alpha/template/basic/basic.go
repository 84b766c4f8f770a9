// Package basic is the basic catalog template (schema olm.template.basic):
// a list of file-based catalog entries kept as they are, except that an
// olm.bundle entry holding only an image is replaced by the bundle that
// image renders to. It also converts a catalog back into a basic template
// (FromReader), for `opm alpha convert-template basic`.
package basic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"golang.org/x/text/cases"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/template/bundles"
)

// Schema is the schema of a basic template.
const Schema = "olm.template.basic"

// Render reads a basic template from r and renders it: every entry as it
// is, every bundle entry that holds only an image rendered from that image
// by renderBundle. The images are rendered in parallel; the output, and
// which error is reported, do not depend on their timing.
func Render(ctx context.Context, r io.Reader, renderBundle func(context.Context, string) (*declcfg.DeclarativeConfig, error)) (*declcfg.DeclarativeConfig, error) {
	metas, err := parse(r)
	if err != nil {
		return nil, err
	}
	cfg, err := loadSlice(metas)
	if err != nil {
		return nil, err
	}
	// Upstream renders the bundle entries one by one and stops at the
	// first failure, or at the first entry that is more than an image. The
	// images before that entry are rendered here, in parallel; errors are
	// then taken in entry order.
	stop := len(cfg.Bundles)
	for i := range cfg.Bundles {
		if !isBundleTemplate(&cfg.Bundles[i]) {
			stop = i
			break
		}
	}
	refs := make([]string, stop)
	for i := range refs {
		refs[i] = cfg.Bundles[i].Image
	}
	results := bundles.RenderAll(ctx, refs, renderBundle, bundles.DefaultParallelism)
	var out []declcfg.Bundle
	for _, ref := range refs {
		res := results[ref]
		if res.Err != nil {
			return nil, res.Err
		}
		out = append(out, res.Config.Bundles...)
	}
	if stop < len(cfg.Bundles) {
		return nil, errors.New("unexpected fields present in basic template bundle")
	}
	cfg.Bundles = out
	return cfg, nil
}

// isBundleTemplate reports whether a bundle entry stands for an image to
// render: a schema and an image, and no package, properties or related
// images (a name, say, is ignored), as upstream decides.
func isBundleTemplate(b *declcfg.Bundle) bool {
	return b.Schema != "" && b.Image != "" && b.Package == "" && len(b.Properties) == 0 && len(b.RelatedImages) == 0
}

// meta is one entry of the template: its identifying keys and the entry
// as upstream re-encodes it (keys sorted, numbers as float64, no HTML
// escaping, a trailing newline).
type meta struct {
	schema, pkg, name string
	blob              []byte
}

// entry decodes one template entry as upstream's declcfg.Meta does.
type entry struct{ m *meta }

func (e *entry) UnmarshalJSON(data []byte) error {
	obj := map[string]any{}
	if err := json.Unmarshal(data, &obj); err != nil {
		// A plain error, so that the caller's decoder adds no context.
		return errors.New(pretty(data, err))
	}
	m := &meta{}
	if err := metaKeys(obj, m); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return err
	}
	m.blob = buf.Bytes()
	e.m = m
	return nil
}

// metaKeys finds schema, package and name, whatever their case (Unicode
// case folding); keys that fold alike are an error, as upstream has it.
func metaKeys(obj map[string]any, m *meta) error {
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
	}{{"schema", &m.schema}, {"package", &m.pkg}, {"name", &m.name}} {
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

// templateData is the template's shape.
type templateData struct {
	Schema  string   `json:"schema"`
	Entries []*entry `json:"entries"`
}

// parse reads the first document of r as upstream does and checks its
// schema.
func parse(r io.Reader) ([]*meta, error) {
	var doc json.RawMessage
	if err := yaml.NewYAMLOrJSONDecoder(r, 4096).Decode(&doc); err != nil {
		return nil, fmt.Errorf("decoding template schema: %v", err)
	}
	var t templateData
	if err := json.Unmarshal(doc, &t); err != nil {
		return nil, fmt.Errorf("unmarshalling template: %v", err)
	}
	if t.Schema != Schema {
		return nil, fmt.Errorf("template has unknown schema (%q), should be %q", t.Schema, Schema)
	}
	metas := make([]*meta, len(t.Entries))
	for i, e := range t.Entries {
		if e == nil || e.m == nil {
			// Upstream dereferences the nil entry and crashes.
			return nil, fmt.Errorf("entry %d of the template is null: every entry must be an object with a schema", i)
		}
		metas[i] = e.m
	}
	return metas, nil
}

// loadSlice turns the entries into a config, as upstream's
// declcfg.LoadSlice does: typed blobs for the four OLM schemas, others
// kept as they are, an entry without a schema an error.
func loadSlice(metas []*meta) (*declcfg.DeclarativeConfig, error) {
	cfg := &declcfg.DeclarativeConfig{}
	for _, m := range metas {
		js := bytes.TrimSuffix(m.blob, []byte("\n"))
		switch m.schema {
		case declcfg.SchemaPackage:
			p, err := declcfg.DecodePackage(js)
			if err != nil {
				return nil, fmt.Errorf("parse package: %v", err)
			}
			cfg.Packages = append(cfg.Packages, p)
		case declcfg.SchemaChannel:
			c, err := declcfg.DecodeChannel(js)
			if err != nil {
				return nil, fmt.Errorf("parse channel: %v", err)
			}
			cfg.Channels = append(cfg.Channels, c)
		case declcfg.SchemaBundle:
			b, err := declcfg.DecodeBundle(js)
			if err != nil {
				return nil, fmt.Errorf("parse bundle: %v", err)
			}
			cfg.Bundles = append(cfg.Bundles, b)
		case declcfg.SchemaDeprecations:
			d, err := declcfg.DecodeDeprecation(js)
			if err != nil {
				return nil, fmt.Errorf("parse deprecation: %w", err)
			}
			cfg.Deprecations = append(cfg.Deprecations, d)
		case "":
			return nil, fmt.Errorf("object '%s' is missing root schema field", m.blob)
		default:
			cfg.Others = append(cfg.Others, declcfg.Meta{Schema: m.schema, Package: m.pkg, Name: m.name, JSON: js})
		}
	}
	return cfg, nil
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
