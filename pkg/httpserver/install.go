package httpserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// /api/v1/install answers what OLM v0 installs for a new Subscription to a
// package of this catalog (alpha/install): the catalog is the one
// CatalogSource. The resolver is made from the snapshot's lines when first
// asked for, and kept.

// installState is the server's resolver, made once.
type installState struct {
	once     sync.Once
	resolver *install.Resolver
	catalog  *install.Catalog
	err      error
}

// installResolver returns the resolver of the snapshot.
func (s *Server) installResolver() (*install.Resolver, *install.Catalog, error) {
	st := &s.install
	// Not the request's context: other requests wait for the same build,
	// which is bounded by the catalog's size.
	st.once.Do(func() { st.resolver, st.catalog, st.err = s.buildResolver(context.Background()) })
	return st.resolver, st.catalog, st.err
}

// InstallCatalog is the catalog as OLM v0's resolver reads it
// (alpha/install), made from the snapshot's lines when first asked for
// and kept: the one /api/v1/install resolves over, which a hub resolves
// over with its other catalogs. It must not be changed.
func (s *Server) InstallCatalog() (*install.Catalog, error) {
	_, cat, err := s.installResolver()
	return cat, err
}

// buildResolver reads the catalog's packages, channels and bundles from
// its lines.
func (s *Server) buildResolver(ctx context.Context) (*install.Resolver, *install.Catalog, error) {
	l := s.lines
	var idx []int32
	for _, schema := range []string{declcfg.SchemaPackage, declcfg.SchemaChannel, declcfg.SchemaBundle} {
		idx = append(idx, l.Select(schema, "", "")...)
	}
	slices.Sort(idx)
	b := install.NewBuilder()
	var buf []byte
	for n, i := range idx {
		if n%64 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		off, size := l.Line(int(i))
		if int64(cap(buf)) < size {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		if _, err := l.ReadAt(buf, off); err != nil {
			return nil, nil, fmt.Errorf("read the catalog: %w", err)
		}
		schema, pkg, name := l.Meta(int(i))
		b.AddBlob(&declcfg.Blob{Meta: declcfg.Meta{Schema: schema, Package: pkg, Name: name, JSON: bytes.TrimSuffix(buf, []byte("\n"))},
			Path: "catalog.jsonl", Index: n, Line: int(i) + 1, Col: 1})
	}
	cat, _, err := b.Build(s.opts.CatalogName, s.opts.Priority, nil)
	if err != nil {
		return nil, nil, err
	}
	if s.opts.Namespace != "" {
		cat.SetNamespace(s.opts.Namespace)
	}
	r, err := install.NewResolver(cat)
	if err != nil {
		return nil, nil, err
	}
	r.Budget, r.MaxTerms = s.opts.Budget, s.opts.MaxTerms
	return r, cat, nil
}

func (s *Server) installAnswer(w http.ResponseWriter, r *http.Request) {
	if !onlyParams(w, r, "package", "channel", "bundle") {
		return
	}
	q := r.URL.Query()
	pkg, channel, bundle := q.Get("package"), q.Get("channel"), q.Get("bundle")
	if pkg == "" {
		jsonError(w, r, http.StatusBadRequest, "the package parameter is required")
		return
	}
	if len(pkg) > maxQuery || len(channel) > maxQuery || len(bundle) > maxQuery {
		jsonError(w, r, http.StatusBadRequest, "a parameter is longer than %d bytes", maxQuery)
		return
	}
	res, cat, err := s.installResolver()
	if err != nil {
		s.log.Error("cannot read the catalog for install answers", "error", err)
		jsonError(w, r, http.StatusInternalServerError, "cannot read the catalog for install answers")
		return
	}
	channels, _ := cat.Channels(pkg)
	switch {
	case channels == nil:
		jsonError(w, r, http.StatusNotFound, "package %q not found in the catalog%s", pkg, suggest.Hint(pkg, cat.Packages()))
		return
	case channel != "" && !slices.Contains(channels, channel):
		jsonError(w, r, http.StatusNotFound, "channel %q not found in package %q (its channels: %s)%s", channel, pkg, strings.Join(channels, ", "), suggest.Hint(channel, channels))
		return
	}
	done, ok := s.startWork(w, r)
	if !ok {
		return
	}
	a, err := res.Resolve(r.Context(), install.Subscription{Package: pkg, Channel: channel, StartingCSV: bundle})
	done()
	switch {
	case r.Context().Err() != nil:
		return // the client has gone
	case err != nil:
		jsonError(w, r, http.StatusBadRequest, "%v", err)
		return
	case a.Status == install.Undecided:
		// Not OLM's answer: ours, past the route's budget. A less busy
		// server may decide it.
		w.Header().Set("Retry-After", retryAfter)
		writeJSON(w, r, http.StatusServiceUnavailable, a)
		return
	}
	writeJSON(w, r, http.StatusOK, a)
}
