package declcfg

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"sort"
	"sync"
)

// LoadFS loads a whole catalog into memory, blobs in upstream's sequential
// order (file walk order, then position in the file). It fails when any
// file or blob cannot be read or decoded. Use Walk for large catalogs.
func LoadFS(ctx context.Context, root fs.FS, opts ...WalkOption) (*DeclarativeConfig, error) {
	type item struct {
		file, index int
		v           any
	}
	var (
		mu    sync.Mutex
		items []item
		errs  Errors
	)
	err := Walk(ctx, root, func(b *Blob) error {
		v, err := DecodeBlob(&b.Meta)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, &Error{Path: b.Path, Line: b.Line, Col: b.Col, Err: err})
			return nil
		}
		items = append(items, item{b.File, b.Index, v})
		return nil
	}, opts...)
	if err != nil {
		if es, ok := err.(Errors); ok {
			errs = append(es, errs...)
		} else {
			return nil, err
		}
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Path < errs[j].Path })
		return nil, errs
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].file != items[j].file {
			return items[i].file < items[j].file
		}
		return items[i].index < items[j].index
	})
	cfg := &DeclarativeConfig{}
	for _, it := range items {
		cfg.Add(it.v)
	}
	return cfg, nil
}

// DecodeBlob decodes a blob into its typed view: *Package, *Channel,
// *Bundle, *Deprecation, or, for any other schema, a *Meta that owns a copy
// of the bytes. Typed views own their bytes too.
func DecodeBlob(m *Meta) (any, error) {
	mc := *m
	mc.JSON = bytes.Clone(m.JSON)
	return decodeTyped(&mc)
}

// CheckBlob reports what DecodeBlob would fail on, without keeping
// anything.
func CheckBlob(m *Meta) error {
	_, err := decodeTyped(m)
	return err
}

// DecodeView is DecodeBlob without the copy: the typed view aliases
// m.JSON, so it is valid as long as those bytes are; the error is
// CheckBlob's.
func DecodeView(m *Meta) (any, error) {
	return decodeTyped(m)
}

// decodeTyped decodes m into its typed view, which aliases m.JSON.
func decodeTyped(m *Meta) (any, error) {
	var (
		v   any
		err error
	)
	switch m.Schema {
	case SchemaPackage:
		var p Package
		p, err = DecodePackage(m.JSON)
		v = &p
	case SchemaChannel:
		var c Channel
		c, err = DecodeChannel(m.JSON)
		v = &c
	case SchemaBundle:
		var b Bundle
		b, err = DecodeBundle(m.JSON)
		v = &b
	case SchemaDeprecations:
		var d Deprecation
		d, err = DecodeDeprecation(m.JSON)
		v = &d
	default:
		v = m
	}
	if err != nil {
		return nil, fmt.Errorf("invalid %s blob: %w", m.Schema, err)
	}
	return v, nil
}

// Add appends a typed blob (as returned by DecodeBlob) to cfg.
func (cfg *DeclarativeConfig) Add(v any) {
	switch t := v.(type) {
	case *Package:
		cfg.Packages = append(cfg.Packages, *t)
	case *Channel:
		cfg.Channels = append(cfg.Channels, *t)
	case *Bundle:
		cfg.Bundles = append(cfg.Bundles, *t)
	case *Deprecation:
		cfg.Deprecations = append(cfg.Deprecations, *t)
	case *Meta:
		cfg.Others = append(cfg.Others, *t)
	}
}
