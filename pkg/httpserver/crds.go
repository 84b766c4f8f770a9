package httpserver

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

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
		start := time.Now()
		ix, size, err := s.readCRDs(context.Background(), v.name)
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
		s.views.add(v, size, time.Since(start))
		// Each comparison is charged to the view, which keeps it (the
		// Checker remembers every pair of CRDs it compared).
		v.crds.compare = func(ctx context.Context, pkg, from, to string) crdsafety.Result {
			start := time.Now()
			r, err := ix.Compare(ctx, c, pkg, from, to)
			if err != nil {
				return crdsafety.Result{Unknown: "the comparison was stopped: " + err.Error()}
			}
			if d := time.Since(start); d > time.Millisecond {
				s.views.add(v, resultSize(r), d)
			}
			return r
		}
	})
	return func(pkg, from, to string) crdsafety.Result { return v.crds.compare(ctx, pkg, from, to) }
}

// resultSize is about what a comparison's result holds.
func resultSize(r crdsafety.Result) int64 {
	n := int64(len(r.Unknown)) + 64
	for _, c := range r.Changes {
		n += int64(len(c.CRD)+len(c.Version)+len(c.Field)+len(c.Check)+len(c.Message)) + 96
	}
	return n
}

// readCRDs reads the CRDs of the bundles of package name from its lines,
// and returns them with the bytes of their manifests; only the bundles
// that carry objects are decoded.
func (s *Server) readCRDs(ctx context.Context, name string) (*crdsafety.Index, int64, error) {
	l := s.lines
	ix := crdsafety.NewIndex()
	marker := []byte(property.TypeBundleObject)
	var buf []byte
	var size int64
	for n, i := range l.Select(declcfg.SchemaBundle, name, "") {
		if n%64 == 0 && ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		js, err := s.readLine(i, buf)
		if err != nil {
			return nil, 0, fmt.Errorf("read package %q: %w", name, err)
		}
		buf = js
		_, pkg, bundle := l.Meta(int(i))
		if !bytes.Contains(js, marker) {
			ix.Add(pkg, bundle, crdsafety.Bundle{})
			continue
		}
		b, err := declcfg.DecodeBundle(js)
		if err != nil {
			return nil, 0, fmt.Errorf("catalog line %d: %w", i+1, err)
		}
		crds, err := crdsafety.ReadBundle(b.Properties)
		if err != nil {
			return nil, 0, fmt.Errorf("catalog line %d: bundle %q: %w", i+1, bundle, err)
		}
		for _, c := range crds.CRDs {
			size += int64(len(c.JSON))
		}
		ix.Add(pkg, bundle, crds)
	}
	return ix, size, nil
}
