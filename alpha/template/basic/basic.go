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

	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/template/bundles"
	tdeclcfg "github.com/fastopm/fastopm/alpha/template/internal/declcfg"
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

// BasicTemplateData is the template's shape. Its name, and that of the
// entries' type, appear in decoding errors as they do upstream.
type BasicTemplateData struct {
	Schema  string           `json:"schema"`
	Entries []*tdeclcfg.Meta `json:"entries"`
}

// parse reads the first document of r as upstream does and checks its
// schema.
func parse(r io.Reader) ([]*tdeclcfg.Meta, error) {
	var doc json.RawMessage
	if err := yaml.NewYAMLOrJSONDecoder(r, 4096).Decode(&doc); err != nil {
		return nil, fmt.Errorf("decoding template schema: %v", err)
	}
	var t BasicTemplateData
	if err := json.Unmarshal(doc, &t); err != nil {
		return nil, fmt.Errorf("unmarshalling template: %v", err)
	}
	if t.Schema != Schema {
		return nil, fmt.Errorf("template has unknown schema (%q), should be %q", t.Schema, Schema)
	}
	metas := make([]*tdeclcfg.Meta, len(t.Entries))
	for i, e := range t.Entries {
		if e == nil {
			// Upstream dereferences the nil entry and crashes.
			return nil, fmt.Errorf("entry %d of the template is null: every entry must be an object with a schema", i)
		}
		metas[i] = e
	}
	return metas, nil
}

// loadSlice turns the entries into a config, as upstream's
// declcfg.LoadSlice does: typed blobs for the four OLM schemas, others
// kept as they are, an entry without a schema an error.
func loadSlice(metas []*tdeclcfg.Meta) (*declcfg.DeclarativeConfig, error) {
	cfg := &declcfg.DeclarativeConfig{}
	for _, m := range metas {
		js := bytes.TrimSuffix(m.Blob, []byte("\n"))
		switch m.Schema {
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
			return nil, fmt.Errorf("object '%s' is missing root schema field", m.Blob)
		default:
			cfg.Others = append(cfg.Others, declcfg.Meta{Schema: m.Schema, Package: m.Package, Name: m.Name, JSON: js})
		}
	}
	return cfg, nil
}
