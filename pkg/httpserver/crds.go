package httpserver

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/fastopm/fastopm/alpha/crdsafety"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// /api/v1/updates compares the CRDs of each step as `opm alpha query
// updates` does (alpha/crdsafety): the steps OLM refuses for their CRDs.
// A package's CRDs are read from its bundles' lines (their
// olm.bundle.object properties) when an update of the package is first
// asked for, and kept with its view, with the comparisons made: nothing
// is read at start-up, and a package no one asks about costs nothing.

// viewCRDs is a view's CRDs, read once.
type viewCRDs struct {
	once    sync.Once
	compare func(ctx context.Context, pkg, from, to string) crdsafety.Result
}

// crds returns the comparison of the CRDs of two bundles of v's package,
// for a request whose context is ctx: once it is done (the client went
// away), the comparisons stop. A package whose objects cannot be read
// answers every step with why.
func (s *Server) crds(ctx context.Context, v *view) func(pkg, from, to string) crdsafety.Result {
	v.crds.once.Do(func() {
		// Not the request's context: other requests wait for the same
		// read, bounded by the package's size.
		ix, err := s.readCRDs(context.Background(), v.name)
		var c *crdsafety.Checker
		if err == nil {
			c, err = crdsafety.NewChecker()
		}
		if err != nil {
			s.log.Error("cannot read a package's CRDs", "package", v.name, "error", err)
			unknown := crdsafety.Result{Unknown: "the catalog's objects of the package cannot be read"}
			v.crds.compare = func(context.Context, string, string, string) crdsafety.Result { return unknown }
			return
		}
		v.crds.compare = func(ctx context.Context, pkg, from, to string) crdsafety.Result {
			r, err := ix.Compare(ctx, c, pkg, from, to)
			if err != nil {
				return crdsafety.Result{Unknown: "the comparison was stopped: " + err.Error()}
			}
			return r
		}
	})
	return func(pkg, from, to string) crdsafety.Result { return v.crds.compare(ctx, pkg, from, to) }
}

// readCRDs reads the CRDs of the bundles of package name from its lines;
// only the bundles that carry objects are decoded.
func (s *Server) readCRDs(ctx context.Context, name string) (*crdsafety.Index, error) {
	l := s.lines
	ix := crdsafety.NewIndex()
	marker := []byte(property.TypeBundleObject)
	var buf []byte
	for n, i := range l.Select(declcfg.SchemaBundle, name, "") {
		if n%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		js, err := s.readLine(i, buf)
		if err != nil {
			return nil, fmt.Errorf("read package %q: %w", name, err)
		}
		buf = js
		_, pkg, bundle := l.Meta(int(i))
		if !bytes.Contains(js, marker) {
			ix.Add(pkg, bundle, crdsafety.Bundle{})
			continue
		}
		b, err := declcfg.DecodeBundle(js)
		if err != nil {
			return nil, fmt.Errorf("catalog line %d: %w", i+1, err)
		}
		crds, err := crdsafety.ReadBundle(b.Properties)
		if err != nil {
			return nil, fmt.Errorf("catalog line %d: bundle %q: %w", i+1, bundle, err)
		}
		ix.Add(pkg, bundle, crds)
	}
	return ix, nil
}
