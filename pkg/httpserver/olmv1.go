package httpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/olmv1"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// /api/v1/olmv1/resolve answers which bundle OLM v1 resolves a
// ClusterExtension to, from this catalog alone, and whether it installs
// (alpha/olmv1); /api/v1/olmv1/all answers it for every package and
// channel. The catalog is read from the snapshot's lines when first asked
// for, and kept (a bundle's manifests are read from its line when its
// installability is first asked for); the report of /all is made once.

type olmv1State struct {
	once     sync.Once
	resolver *olmv1.Resolver
	err      error

	allOnce sync.Once
	all     *olmv1.Report
	allErr  error
}

// olmv1Resolver returns OLM v1's resolver over the snapshot.
func (s *Server) olmv1Resolver() (*olmv1.Resolver, error) {
	st := &s.olmv1
	st.once.Do(func() { st.resolver, st.err = s.buildOLMv1(context.Background()) })
	return st.resolver, st.err
}

// olmv1ResolverOrError returns OLM v1's resolver, or answers 500 (and
// logs why) when the catalog cannot be read.
func (s *Server) olmv1ResolverOrError(w http.ResponseWriter, r *http.Request) (*olmv1.Resolver, bool) {
	res, err := s.olmv1Resolver()
	if err != nil {
		s.log.Error("cannot read the catalog for OLM v1 answers", "error", err)
		jsonError(w, r, http.StatusInternalServerError, "cannot read the catalog for OLM v1 answers")
		return nil, false
	}
	return res, true
}

func (s *Server) buildOLMv1(ctx context.Context) (*olmv1.Resolver, error) {
	l := s.lines
	var idx []int32
	for _, schema := range []string{declcfg.SchemaPackage, declcfg.SchemaChannel, declcfg.SchemaBundle, declcfg.SchemaDeprecations} {
		idx = append(idx, l.Select(schema, "", "")...)
	}
	slices.Sort(idx)
	c := olmv1.NewCollector()
	var buf []byte
	for n, i := range idx {
		if n%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		js, err := s.readLine(i, buf)
		if err != nil {
			return nil, fmt.Errorf("read the catalog: %w", err)
		}
		buf = js
		schema, pkg, name := l.Meta(int(i))
		var reread func() ([]byte, error)
		if schema == declcfg.SchemaBundle {
			// A bundle's manifests are read when its installability is
			// first asked for, from its line again.
			reread = func() ([]byte, error) { return s.readLine(i, nil) }
		}
		c.AddBlobAt(&declcfg.Blob{Meta: declcfg.Meta{Schema: schema, Package: pkg, Name: name, JSON: js},
			Path: "catalog.jsonl", Index: n, Line: int(i) + 1, Col: 1}, reread)
	}
	return olmv1.NewResolver(olmv1.Options{}, c.Catalog(s.opts.CatalogName, 0, nil))
}

// olmv1Resolve is GET /api/v1/olmv1/resolve?package=P[&channel=C...]
// [&version=RANGE][&policy=SelfCertified][&from=BUNDLE|VERSION]
// [&watchNamespace=NS&installNamespace=NS].
func (s *Server) olmv1Resolve(w http.ResponseWriter, r *http.Request) {
	if !onlyParams(w, r, "package", "channel...", "version", "policy", "from", "watchNamespace", "installNamespace") {
		return
	}
	q := r.URL.Query()
	for _, vs := range q {
		for _, v := range vs {
			if len(v) > maxQuery {
				jsonError(w, r, http.StatusBadRequest, "a parameter is longer than %d bytes", maxQuery)
				return
			}
		}
	}
	if len(q["channel"]) > 64 {
		jsonError(w, r, http.StatusBadRequest, "at most 64 channels")
		return
	}
	pkg := q.Get("package")
	if pkg == "" {
		jsonError(w, r, http.StatusBadRequest, "the package parameter is required")
		return
	}
	res, ok := s.olmv1ResolverOrError(w, r)
	if !ok {
		return
	}
	if res.Catalogs()[0].Package(pkg) == nil {
		jsonError(w, r, http.StatusNotFound, "package %q not found in the catalog%s", pkg, suggest.Hint(pkg, s.packageNames()))
		return
	}
	if ns := q.Get("watchNamespace"); ns != "" || q.Get("installNamespace") != "" {
		opts := res.Options()
		opts.Install = olmv1.Config{WatchNamespace: ns, InstallNamespace: q.Get("installNamespace"), SingleOwnNamespace: ns != ""}
		var err error
		if res, err = olmv1.NewResolver(opts, res.Catalogs()...); err != nil {
			jsonError(w, r, http.StatusInternalServerError, "%v", err)
			return
		}
	}
	spec := olmv1.Spec{Package: pkg, Channels: q["channel"], Version: q.Get("version"), UpgradeConstraintPolicy: q.Get("policy")}
	var installed *olmv1.Installed
	if from := q.Get("from"); from != "" {
		var err error
		if installed, err = res.FindInstalled(pkg, from, ""); err != nil {
			jsonError(w, r, http.StatusBadRequest, "%v", err)
			return
		}
	}
	done, ok := s.startWork(w, r)
	if !ok {
		return
	}
	defer done()
	a, err := res.Resolve(spec, installed)
	var ue *olmv1.UsageError
	switch {
	case errors.As(err, &ue):
		jsonError(w, r, http.StatusBadRequest, "%v", err)
		return
	case err != nil:
		jsonError(w, r, http.StatusInternalServerError, "%v", err)
		return
	}
	out := struct {
		*olmv1.Answer
		Path []olmv1.Step `json:"path,omitempty"`
	}{Answer: a}
	if installed != nil {
		out.Path, _, _ = res.Path(spec, *installed)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// olmv1All is GET /api/v1/olmv1/all: every package and channel.
func (s *Server) olmv1All(w http.ResponseWriter, r *http.Request) {
	if !onlyParams(w, r) {
		return
	}
	res, ok := s.olmv1ResolverOrError(w, r)
	if !ok {
		return
	}
	st := &s.olmv1
	st.allOnce.Do(func() { st.all, st.allErr = res.All("", nil) })
	if st.allErr != nil {
		jsonError(w, r, http.StatusInternalServerError, "%v", st.allErr)
		return
	}
	writeJSON(w, r, http.StatusOK, st.all)
}
