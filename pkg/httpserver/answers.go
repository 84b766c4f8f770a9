package httpserver

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/graph"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/graphsvg"
	"github.com/fastopm/fastopm/pkg/markdown"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// The JSON answers for people and tools. The package list comes from the
// snapshot's index; a package's answers from its own JSON lines, decoded
// into the upgrade-graph model (alpha/model) when first asked for.

// pkgSummary is one package of /api/v1/packages: from the index, and
// (catalog.go) the summary of its head bundle's CSV.
type pkgSummary struct {
	Name           string   `json:"name"`
	DefaultChannel string   `json:"defaultChannel"`
	Channels       []string `json:"channels"`
	Bundles        int      `json:"bundles"`
	Deprecated     string   `json:"deprecated,omitempty"`
	// Head is the head of the default channel, Version its version.
	Head    string `json:"head,omitempty"`
	Version string `json:"version,omitempty"`
	// Icon is true when the package has an icon (/icon).
	Icon bool `json:"icon"`
	operatorSummary

	lower    string
	haystack string // what the search text is looked for in
}

func summaries(snap *cache.Snapshot) []pkgSummary {
	x := snap.Index
	counts := make([]int, len(x.Packages))
	for i := range x.Bundles {
		counts[x.Bundles[i].Package]++
	}
	out := make([]pkgSummary, len(x.Packages))
	for i := range x.Packages {
		p := &x.Packages[i]
		sum := pkgSummary{Name: p.Name, DefaultChannel: p.DefaultChannel, Bundles: counts[i], Channels: []string{}, lower: strings.ToLower(p.Name)}
		for j := range p.Channels {
			sum.Channels = append(sum.Channels, p.Channels[j].Name)
		}
		if p.Deprecation != nil {
			sum.Deprecated = p.Deprecation.Message
		}
		out[i] = sum
	}
	slices.SortFunc(out, func(a, b pkgSummary) int { return strings.Compare(a.Name, b.Name) })
	return out
}

type packagesAnswer struct {
	Catalog  string       `json:"catalog"`
	Total    int          `json:"total"`
	Packages []pkgSummary `json:"packages"`
}

const (
	defaultLimit = 50
	maxLimit     = 1000
	// maxQuery bounds the search text and the other parameters.
	maxQuery = 256
)

// listParams are /api/v1/packages' parameters; each filter may repeat.
var listParams = append([]string{"q", "limit"}, func() (fs []string) {
	for _, f := range filterParams {
		fs = append(fs, f+"...")
	}
	return fs
}()...)

// listQuery reads a package list's parameters (those of params): each
// value at most maxQuery bytes, and the limit (-1: all). It answers 400
// and returns false when one is wrong.
func listQuery(w http.ResponseWriter, r *http.Request, params []string) (url.Values, int, bool) {
	if !onlyParams(w, r, params...) {
		return nil, 0, false
	}
	q := r.URL.Query()
	for p, vs := range q {
		for _, v := range vs {
			if len(v) > maxQuery {
				jsonError(w, r, http.StatusBadRequest, "%s is longer than %d bytes", p, maxQuery)
				return nil, 0, false
			}
		}
	}
	limit := defaultLimit
	if v := q.Get("limit"); v == "all" {
		limit = -1
	} else if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			jsonError(w, r, http.StatusBadRequest, "limit must be a number from 1 to %d, or all", maxLimit)
			return nil, 0, false
		}
		limit = n
	}
	return q, limit, true
}

func (s *Server) packages(w http.ResponseWriter, r *http.Request) {
	q, limit, ok := listQuery(w, r, listParams)
	if !ok {
		return
	}
	match := newFilter(q)
	a := packagesAnswer{Catalog: s.opts.CatalogName, Packages: []pkgSummary{}}
	for _, p := range s.catalog() {
		if !match(&p) {
			continue
		}
		a.Total++
		if limit < 0 || len(a.Packages) < limit {
			a.Packages = append(a.Packages, p)
		}
	}
	writeJSON(w, r, http.StatusOK, a)
}

// view is what the answers about one package need, decoded from its lines.
type view struct {
	name  string
	model model.Model
	graph *graph.Graph
	// description is the olm.package blob's description (the part
	// markdown.Cut keeps), descriptionHTML its rendering.
	description, descriptionHTML string
	descriptionTruncated         bool
	icon                         *declcfg.Icon
	// operator is what the head bundle of the default channel says of the
	// operator (nil when it has no CSV metadata).
	operator *operatorDetails

	svgMu sync.Mutex
	svg   map[string][]byte // by channel ("" for every channel)

	crds viewCRDs // read when an update is first asked for (crds.go)

	// size is what the decoded package holds in memory, about: the
	// bytes of its lines (the cache's weight, viewcache.go).
	size int64
}

// view returns the decoded package, or nil when the catalog has no such
// package.
func (s *Server) view(name string) (*view, error) {
	if !s.hasPackage(name) {
		return nil, nil
	}
	// Not the request's context: other requests may wait for the same
	// decode, and it is bounded by the package's size.
	return s.views.get(name, func() (*view, int64, error) {
		v, err := s.decode(context.Background(), name)
		if err != nil {
			return nil, 0, err
		}
		return v, v.size, nil
	})
}

// decode reads the package's lines: its olm.package blob and every blob
// whose package is name.
func (s *Server) decode(ctx context.Context, name string) (*view, error) {
	l := s.lines
	idx := append(l.Select(declcfg.SchemaPackage, "", name), l.Select("", name, "")...)
	slices.Sort(idx)
	idx = slices.Compact(idx)
	mb, gb := model.NewBuilder(), graph.NewBuilder()
	gb.NextCatalog()
	v := &view{name: name, svg: map[string][]byte{}}
	var buf []byte
	for n, i := range idx {
		if n%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		off, size := l.Line(int(i))
		if cap(buf) < int(size) {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		if _, err := l.ReadAt(buf, off); err != nil {
			return nil, fmt.Errorf("read package %q: %w", name, err)
		}
		schema, pkg, nm := l.Meta(int(i))
		b := &declcfg.Blob{Meta: declcfg.Meta{Schema: schema, Package: pkg, Name: nm, JSON: bytes.TrimSuffix(buf, []byte("\n"))},
			Path: "catalog.jsonl", Index: n, Line: int(i) + 1, Col: 1}
		v.size += size
		mb.AddBlob(b)
		if err := gb.AddBlob(b); err != nil {
			return nil, fmt.Errorf("package %q: %w", name, err)
		}
		if schema == declcfg.SchemaPackage && nm == name {
			p, err := declcfg.DecodePackage(b.JSON)
			if err != nil {
				return nil, fmt.Errorf("package %q: %w", name, err)
			}
			v.icon = p.Icon
			v.description, v.descriptionTruncated = markdown.Cut(p.Description)
		}
	}
	m, _ := mb.Build() // the catalog was validated when it was loaded
	if m[name] == nil {
		return nil, fmt.Errorf("package %q has no olm.package blob", name)
	}
	v.model = model.Model{name: m[name]}
	g, err := gb.Build()
	if err != nil {
		return nil, fmt.Errorf("package %q: %w", name, err)
	}
	v.graph = g
	v.descriptionHTML = markdown.Render(v.description)
	v.operator = s.headDetails(m[name])
	return v, nil
}

// packageAnswer is /api/v1/packages/{package}.
type packageAnswer struct {
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	// Description is the olm.package blob's description (Markdown) and
	// DescriptionHTML its rendering, sanitized; of a description longer
	// than markdown.MaxSize, both of the part rendered, and
	// DescriptionTruncated is then true.
	Description          string          `json:"description,omitempty"`
	DescriptionHTML      string          `json:"descriptionHTML,omitempty"`
	DescriptionTruncated bool            `json:"descriptionTruncated,omitempty"`
	Icon                 bool            `json:"icon"`
	Deprecated           string          `json:"deprecated,omitempty"`
	Channels             []channelAnswer `json:"channels"`
	Bundles              []bundleAnswer  `json:"bundles"`
	// Operator is what the head of the default channel says of the
	// operator: its CSV's metadata (operator.go).
	Operator *operatorDetails `json:"operator,omitempty"`
}

type channelAnswer struct {
	Name       string        `json:"name"`
	Head       string        `json:"head,omitempty"`
	Deprecated string        `json:"deprecated,omitempty"`
	Entries    []entryAnswer `json:"entries"`
}

type entryAnswer struct {
	Name       string   `json:"name"`
	Version    string   `json:"version,omitempty"`
	Replaces   string   `json:"replaces,omitempty"`
	Skips      []string `json:"skips,omitempty"`
	SkipRange  string   `json:"skipRange,omitempty"`
	Deprecated string   `json:"deprecated,omitempty"`
	InCatalog  bool     `json:"inCatalog"`
}

type bundleAnswer struct {
	Name       string   `json:"name"`
	Version    string   `json:"version,omitempty"`
	Image      string   `json:"image,omitempty"`
	Channels   []string `json:"channels"`
	Deprecated string   `json:"deprecated,omitempty"`
}

func message(d *model.Deprecation) string {
	if d == nil {
		return ""
	}
	return d.Message
}

// pkgOf answers the package of the request's path, or writes the error.
func (s *Server) pkgOf(w http.ResponseWriter, r *http.Request) *view {
	name := r.PathValue("package")
	v, err := s.view(name)
	switch {
	case err != nil:
		s.log.Error("cannot read a package", "package", name, "error", err)
		jsonError(w, r, http.StatusInternalServerError, "cannot read package %q", name)
	case v == nil:
		jsonError(w, r, http.StatusNotFound, "package %q not found in the catalog%s", name, suggest.Hint(name, s.packageNames()))
	}
	return v
}

func (s *Server) pkg(w http.ResponseWriter, r *http.Request) {
	if !onlyParams(w, r) {
		return
	}
	v := s.pkgOf(w, r)
	if v == nil {
		return
	}
	writeJSON(w, r, http.StatusOK, v.answer())
}

// answer is the package's /api/v1/packages/{package}.
func (v *view) answer() *packageAnswer {
	p := v.model[v.name]
	a := &packageAnswer{Name: p.Name, Description: v.description, DescriptionHTML: v.descriptionHTML,
		DescriptionTruncated: v.descriptionTruncated, Icon: iconType(v.icon) != "", Operator: v.operator,
		Deprecated: message(p.Deprecation), Channels: []channelAnswer{}, Bundles: []bundleAnswer{}}
	if p.DefaultChannel != nil {
		a.DefaultChannel = p.DefaultChannel.Name
	}
	type bundleInfo struct {
		b        *model.Bundle
		channels []string
	}
	bundles := map[string]*bundleInfo{}
	for _, cn := range sortedKeys(p.Channels) {
		ch := p.Channels[cn]
		ca := channelAnswer{Name: ch.Name, Deprecated: message(ch.Deprecation), Entries: []entryAnswer{}}
		if h, err := ch.Head(); err == nil {
			ca.Head = h.Name
		}
		for _, b := range channelOrder(ch) {
			e := entryAnswer{Name: b.Name, Replaces: b.Replaces, Skips: b.Skips, SkipRange: b.SkipRange,
				Deprecated: message(b.Deprecation), InCatalog: b.HasBlob}
			if b.HasBlob {
				e.Version = b.Version.String()
				bi := bundles[b.Name]
				if bi == nil {
					bi = &bundleInfo{b: b}
					bundles[b.Name] = bi
				}
				bi.channels = append(bi.channels, ch.Name)
			}
			ca.Entries = append(ca.Entries, e)
		}
		a.Channels = append(a.Channels, ca)
	}
	for _, bi := range bundles {
		a.Bundles = append(a.Bundles, bundleAnswer{Name: bi.b.Name, Version: bi.b.Version.String(), Image: bi.b.Image,
			Channels: bi.channels, Deprecated: message(bi.b.Deprecation)})
	}
	slices.SortFunc(a.Bundles, func(x, y bundleAnswer) int {
		if c := bundles[y.Name].b.Version.Compare(bundles[x.Name].b.Version); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	return a
}

// channelOrder lists a channel's entries in OLM's upgrade order, head
// first (alpha/updates), then the entries OLM never installs (skipped
// ones), highest version first. A channel without a single chain is
// listed by version.
func channelOrder(ch *model.Channel) []*model.Bundle {
	var order []*model.Bundle
	if g, err := updates.NewGraph(ch); err == nil {
		order = slices.Clone(g.Order)
	}
	var rest []*model.Bundle
	for _, b := range ch.Bundles {
		if !slices.Contains(order, b) {
			rest = append(rest, b)
		}
	}
	slices.SortFunc(rest, func(a, b *model.Bundle) int {
		if c := b.Version.Compare(a.Version); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return append(order, rest...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// icon serves a package's icon from its olm.package blob alone (the page
// shows dozens at a time: no package is decoded for them), with an ETag
// of its bytes, so that a browser revalidates it with a 304.
func (s *Server) icon(w http.ResponseWriter, r *http.Request) {
	if !onlyParams(w, r) {
		return
	}
	name := r.PathValue("package")
	if !s.hasPackage(name) {
		jsonError(w, r, http.StatusNotFound, "package %q not found in the catalog%s", name, suggest.Hint(name, s.packageNames()))
		return
	}
	p, err := s.packageBlob(name)
	if err != nil {
		s.log.Error("cannot read a package", "package", name, "error", err)
		jsonError(w, r, http.StatusInternalServerError, "cannot read package %q", name)
		return
	}
	if p.Icon == nil || len(p.Icon.Data) == 0 {
		jsonError(w, r, http.StatusNotFound, "package %q has no icon", name)
		return
	}
	typ := iconType(p.Icon)
	if typ == "" {
		jsonError(w, r, http.StatusNotFound, "package %q has no icon: its icon is not an image (media type %q)", name, p.Icon.MediaType)
		return
	}
	h := w.Header()
	h.Set("Content-Type", typ)
	h.Set("X-Content-Type-Options", "nosniff")
	// An SVG icon must not run scripts when opened on its own (in an
	// img element it never does).
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	h.Set("ETag", bodyETag(p.Icon.Data))
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", s.snap.Modified, bytes.NewReader(p.Icon.Data))
}

// iconType is the media type an icon is served with: its own when that is
// an image type (without parameters), else the one its bytes have when
// they are a PNG, JPEG, GIF, WebP, BMP or ICO image (a catalog may leave the
// media type out or give another); "" when it is not an image.
func iconType(ic *declcfg.Icon) string {
	if ic == nil || len(ic.Data) == 0 {
		return ""
	}
	// The type alone: "image/svg+xml;base64" is seen in CSVs.
	typ, _, _ := strings.Cut(ic.MediaType, ";")
	if t, _, err := mime.ParseMediaType(typ); err == nil && strings.HasPrefix(t, "image/") && len(t) > len("image/") {
		return t
	}
	if t := http.DetectContentType(ic.Data); strings.HasPrefix(t, "image/") {
		return t
	}
	return ""
}

// graphTimeout bounds the layout of one graph.
const graphTimeout = 30 * time.Second

func (s *Server) graph(w http.ResponseWriter, r *http.Request) {
	if !onlyParams(w, r, "channel") {
		return
	}
	v := s.pkgOf(w, r)
	if v == nil {
		return
	}
	channel := r.URL.Query().Get("channel")
	if channel != "" && v.model[v.name].Channels[channel] == nil {
		names := sortedKeys(v.model[v.name].Channels)
		jsonError(w, r, http.StatusNotFound, "channel %q not found in package %q (its channels: %s)%s", channel, v.name, strings.Join(names, ", "), suggest.Hint(channel, names))
		return
	}
	v.svgMu.Lock()
	svg, ok := v.svg[channel]
	v.svgMu.Unlock()
	if !ok {
		var err error
		if svg, err = s.drawGraph(r.Context(), v, channel); err != nil {
			if r.Context().Err() == nil {
				s.log.Error("cannot draw a graph", "package", v.name, "channel", channel, "error", err)
				jsonError(w, r, http.StatusInternalServerError, "cannot draw the graph of package %q: %v", v.name, err)
			}
			return
		}
		v.svgMu.Lock()
		v.svg[channel] = svg
		v.svgMu.Unlock()
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	http.ServeContent(w, r, "", s.snap.Modified, bytes.NewReader(svg))
}

// drawings bounds the graphs laid out at once: each is an opm-graphviz
// process, which a large graph makes hundreds of megabytes large.
var drawings = make(chan struct{}, 2)

// drawGraph lays out the package's graph (one channel, or all) as
// `opm alpha render-graph -o svg` does.
func (s *Server) drawGraph(ctx context.Context, v *view, channel string) ([]byte, error) {
	select {
	case drawings <- struct{}{}:
		defer func() { <-drawings }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	g := v.graph
	if channel != "" {
		gc := *g
		gc.Channels = nil
		for _, c := range g.Channels {
			if c.Name == channel {
				gc.Channels = append(gc.Channels, c)
			}
		}
		g = &gc
	}
	var dot bytes.Buffer
	if err := g.WriteDOT(&dot, graph.Selection{Package: v.name}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, graphTimeout)
	defer cancel()
	return graphsvg.SVG(ctx, dot.Bytes())
}

func (s *Server) updates(w http.ResponseWriter, r *http.Request) {
	if !onlyParams(w, r, "package", "channel", "from") {
		return
	}
	q := r.URL.Query()
	pkg, channel, from := q.Get("package"), q.Get("channel"), q.Get("from")
	for _, p := range [][2]string{{"package", pkg}, {"from", from}} {
		if p[1] == "" {
			jsonError(w, r, http.StatusBadRequest, "the %s parameter is required", p[0])
			return
		}
	}
	if len(pkg) > maxQuery || len(channel) > maxQuery || len(from) > maxQuery {
		jsonError(w, r, http.StatusBadRequest, "a parameter is longer than %d bytes", maxQuery)
		return
	}
	v, err := s.view(pkg)
	switch {
	case err != nil:
		s.log.Error("cannot read a package", "package", pkg, "error", err)
		jsonError(w, r, http.StatusInternalServerError, "cannot read package %q", pkg)
		return
	case v == nil:
		jsonError(w, r, http.StatusNotFound, "package %q not found in the catalog%s", pkg, suggest.Hint(pkg, s.packageNames()))
		return
	}
	p := v.model[pkg]
	if channel != "" && p.Channels[channel] == nil {
		names := sortedKeys(p.Channels)
		jsonError(w, r, http.StatusNotFound, "channel %q not found in package %q (its channels: %s)%s", channel, pkg, strings.Join(names, ", "), suggest.Hint(channel, names))
		return
	}
	done, ok := s.startWork(w, r)
	if !ok {
		return
	}
	// The question's budget: past it the comparisons stop, and the answer
	// is 503.
	ctx, cancel := context.WithTimeoutCause(r.Context(), s.opts.Budget, errBudget)
	defer cancel()
	a, err := updates.Query{Model: v.model, Package: pkg, Channel: channel, From: from, CRDs: s.crds(ctx, v)}.Run()
	done()
	switch {
	case r.Context().Err() != nil:
		return // the client has gone
	case errors.Is(context.Cause(ctx), errBudget):
		w.Header().Set("Retry-After", retryAfter)
		jsonError(w, r, http.StatusServiceUnavailable, "undecided within %v: the CRD comparisons of package %q take longer", s.opts.Budget, pkg)
		return
	}
	if err != nil {
		jsonError(w, r, http.StatusBadRequest, "%v", err)
		return
	}
	writeJSON(w, r, http.StatusOK, a)
}
