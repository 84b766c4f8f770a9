// Package httpserver serves a catalog's serve snapshot over HTTP, beside
// the gRPC Registry API of pkg/server, from the same snapshot:
//
//   - OLM v1 catalogd's API: /api/v1/all (the catalog as JSON lines) and
//     /api/v1/metas (the blobs of a schema, package and name), with
//     catalogd's bytes, headers and status codes, also under catalogd's
//     /catalogs/NAME/ prefix;
//   - JSON answers for people and tools: the packages, one package, its
//     upgrade graph as SVG, and the upgrade path of an installed bundle
//     (alpha/updates, each step with the changes of its CRDs OLM refuses:
//     alpha/crdsafety), what OLM v0 installs (alpha/install) and what OLM v1
//     resolves to and whether it installs (alpha/olmv1);
//   - /healthz, /readyz and Prometheus /metrics;
//   - a small web page (pkg/httpserver/ui).
//
// Everything is answered from the snapshot's JSON lines and their index
// (cache.Lines): a package's answers read only that package's lines, and
// the few packages asked for last are kept, decoded, in a small cache.
package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/klauspost/compress/gzhttp"

	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/httpserver/ui"
)

// Options configure a Server.
type Options struct {
	// CatalogName is the catalog's name in catalogd's URLs
	// (/catalogs/NAME/api/v1/all). It must be a DNS-1123 subdomain.
	CatalogName string
	// Ready reports whether the catalog is served (gRPC health SERVING):
	// /readyz answers 200 exactly then.
	Ready func() bool
	// Metrics, when set, counts the requests and serves /metrics.
	Metrics *Metrics
	// Logger receives errors, and every request at debug level.
	Logger *slog.Logger
	// IdleWrite is how long a response may wait for a client that does not
	// read before the connection is closed (default 1 minute).
	IdleWrite time.Duration
	// Budget is the time one question may take (an install resolution, an
	// upgrade path with its CRD comparisons); past it the answer is 503
	// with Retry-After (default DefaultBudget).
	Budget time.Duration
	// MaxTerms bounds the size of an install question's problem (default
	// DefaultMaxTerms: install.Resolver.MaxTerms).
	MaxTerms int
	// CacheBytes bounds what the decoded packages and their computed
	// answers hold (default 64 MiB), weighed by what each cost
	// (viewcache.go).
	CacheBytes int64
	// Priority and Namespace are the catalog's CatalogSource priority and
	// namespace in the install answers (a hub's catalogs: hub.go); zero
	// for serve.
	Priority  int
	Namespace string

	// work, when set, is the pool of workers the questions share (a
	// hub's catalogs share the hub's).
	work chan struct{}
}

// DefaultBudget is a question's budget on the HTTP routes: shorter than
// the CLI's (install.DefaultBudget), as a page waits for it.
const DefaultBudget = 5 * time.Second

// DefaultMaxTerms is an install question's size limit on the HTTP
// routes, about 100 MB of the solver's memory: a fifth of the CLI's
// (install.DefaultMaxTerms), as the server answers many at once; 2,000
// times the largest question of the real catalogs.
const DefaultMaxTerms = 200_000

// retryAfter is the Retry-After of an answer left undecided within its
// budget, in seconds: the same question may be decided when the server is
// less busy.
const retryAfter = "30"

// Server answers HTTP requests from one snapshot.
type Server struct {
	snap  *cache.Snapshot
	lines *cache.Lines
	opts  Options
	log   *slog.Logger
	views *viewCache
	// inner serves the catalog's routes relative to its root: h at the
	// root and under /catalogs/NAME/, a hub under /catalogs/NAME/.
	inner http.Handler
	pkgs  []pkgSummary // the package list, by name, from the index
	list  catalogList  // the same with the operators' summaries, read when first asked for
	h     http.Handler
	// install is the resolver of /api/v1/install (install.go).
	install installState
	// olmv1 answers /api/v1/olmv1/ (olmv1.go).
	olmv1 olmv1State
	// work holds a token for each question computing (work.go).
	work chan struct{}
}

// validName is a DNS-1123 subdomain, as catalogd requires of a catalog's
// name.
var validName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// ValidCatalogName says why name cannot be a catalog's name in catalogd's
// URLs, or returns nil.
func ValidCatalogName(name string) error {
	if len(name) > 253 || !validName.MatchString(name) {
		return fmt.Errorf("invalid catalog name %q: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", name)
	}
	return nil
}

// New makes the Server of snap, which must hold the catalog's JSON lines
// (a saved cache always does; a cold start keeps them when asked).
func New(snap *cache.Snapshot, opts Options) (*Server, error) {
	if snap.Lines() == nil {
		return nil, errors.New("the snapshot does not hold the catalog's JSON lines")
	}
	if err := ValidCatalogName(opts.CatalogName); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Ready == nil {
		opts.Ready = func() bool { return true }
	}
	if opts.IdleWrite <= 0 {
		opts.IdleWrite = time.Minute
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.MaxTerms == 0 {
		opts.MaxTerms = DefaultMaxTerms
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = defaultCacheBytes
	}
	if opts.work == nil {
		opts.work = make(chan struct{}, workers())
	}
	s := &Server{snap: snap, lines: snap.Lines(), opts: opts, log: opts.Logger, views: newViewCache(opts.CacheBytes),
		work: opts.work}
	s.pkgs = summaries(snap)
	if opts.Metrics != nil {
		opts.Metrics.setCatalog(opts.CatalogName, snap)
	}
	s.h = s.routes()
	return s, nil
}

// Handler serves every route.
func (s *Server) Handler() http.Handler { return s.h }

// routes builds the handler tree: the catalog's routes at the root and
// under /catalogs/NAME/, compressed with gzip when the client accepts it
// (catalogd does the same, with the same library), counted by route.
func (s *Server) routes() http.Handler {
	type route struct {
		pattern string // method and path, relative to the catalog's root
		name    string // the metrics' handler label
		h       http.HandlerFunc
	}
	catalog := []route{
		{"GET /api/v1/all", "all", s.all},
		{"GET /api/v1/metas", "metas", s.metas},
		{"GET /api/v1/packages", "packages", s.packages},
		{"GET /api/v1/packages/{package}", "package", s.pkg},
		{"GET /api/v1/packages/{package}/icon", "icon", s.icon},
		{"GET /api/v1/packages/{package}/bundles/{bundle}", "bundle", s.bundle},
		{"GET /api/v1/packages/{package}/graph.svg", "graph", s.graph},
		{"GET /api/v1/updates", "updates", s.updates},
		{"GET /api/v1/install", "install", s.installAnswer},
		{"GET /api/v1/olmv1/resolve", "olmv1-resolve", s.olmv1Resolve},
		{"GET /api/v1/olmv1/all", "olmv1-all", s.olmv1All},
	}
	inner := http.NewServeMux()
	for _, r := range catalog {
		inner.Handle(r.pattern, s.instrument(r.name, r.h))
	}
	// The page and its files (pkg/httpserver/ui), at the catalog's root.
	page := s.instrument("page", http.StripPrefix("/", ui.Handler()))
	for _, p := range []string{"GET /{$}", "GET /index.html", "GET /ui/"} {
		inner.Handle(p, page)
	}
	s.inner = inner

	top := http.NewServeMux()
	top.Handle("GET /healthz", s.instrument("healthz", http.HandlerFunc(s.healthz)))
	top.Handle("GET /readyz", s.instrument("readyz", http.HandlerFunc(s.readyz)))
	if m := s.opts.Metrics; m != nil {
		top.Handle("GET /metrics", s.instrument("metrics", m.Handler()))
	}
	top.Handle("/catalogs/{catalog}/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("catalog")
		if err := ValidCatalogName(name); err != nil {
			s.instrument("other", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, err.Error(), http.StatusBadRequest)
			})).ServeHTTP(w, r)
			return
		}
		if name != s.opts.CatalogName {
			s.instrument("other", http.HandlerFunc(notFound)).ServeHTTP(w, r)
			return
		}
		inner.ServeHTTP(w, stripCatalog(r))
	}))
	top.Handle("/", inner)
	// No route reads a request body; one larger than MaxBodyBytes is not
	// even drained for the connection's reuse.
	return gzhttp.GzipHandler(http.MaxBytesHandler(top, MaxBodyBytes))
}

// stripCatalog returns r with the /catalogs/NAME prefix cut from its path,
// by segments of the escaped path, as the router matched it (Go's
// ServeMux matches each segment unescaped, and catalogd is served by one):
// /catalogs/c%61t/api/v1/all is /catalogs/cat/api/v1/all, where
// http.StripPrefix, which compares strings, would find no prefix.
func stripCatalog(r *http.Request) *http.Request {
	escaped := strings.TrimPrefix(r.URL.EscapedPath(), "/catalogs/")
	_, rest, _ := strings.Cut(escaped, "/")
	rest = "/" + rest
	path, err := url.PathUnescape(rest)
	if err != nil {
		// The router matched the path, so it unescapes.
		path = rest
	}
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	r2.URL.Path, r2.URL.RawPath = path, rest
	return r2
}

// notFound is catalogd's 404.
func notFound(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "404 Not Found", http.StatusNotFound)
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok\n")
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !s.opts.Ready() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "not serving\n")
		return
	}
	_, _ = io.WriteString(w, "ok\n")
}

// apiError is the body of a JSON route's error.
type apiError struct {
	Error string `json:"error"`
}

// writeJSON writes v as the answer of a JSON route, without escaping <, >
// and & (as the CLI's -o json and catalogd write JSON; a description's
// HTML grows by a third). A 200 answer has an ETag, a hash of its bytes,
// and Cache-Control: no-cache: a browser revalidates it, and a request
// whose If-None-Match names it gets a 304 without the body.
func writeJSON(w http.ResponseWriter, r *http.Request, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var b []byte
	if err := enc.Encode(v); err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"cannot encode the answer"}`+"\n")
	} else {
		b = buf.Bytes()
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if code == http.StatusOK {
		etag := bodyETag(b)
		h.Set("ETag", etag)
		h.Set("Cache-Control", "no-cache")
		if etagMatch(r.Header.Values("If-None-Match"), etag) {
			h.Del("Content-Type")
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// etagMatch says whether the If-None-Match header's lines name etag
// (weakly, as RFC 9110 compares for If-None-Match: W/"x" names "x"), or
// hold "*". The tags are read as RFC 9110 writes them (a tag is quoted and
// may hold a comma); reading stops at one that is not, as net/http's
// ServeContent does.
func etagMatch(lines []string, etag string) bool {
	for _, v := range lines {
		for {
			v = strings.TrimLeft(v, " \t,")
			if v == "" {
				break
			}
			if v[0] == '*' {
				return true
			}
			v = strings.TrimPrefix(v, "W/")
			if len(v) < 2 || v[0] != '"' {
				break
			}
			end := strings.IndexByte(v[1:], '"') + 2
			if end < 2 {
				break
			}
			if v[:end] == etag {
				return true
			}
			v = v[end:]
		}
	}
	return false
}

func jsonError(w http.ResponseWriter, r *http.Request, code int, format string, args ...any) {
	writeJSON(w, r, code, apiError{Error: fmt.Sprintf(format, args...)})
}

// onlyParams refuses a request with a query parameter not in names, a
// parameter given twice, or a query string that does not parse:
// r.URL.Query drops a malformed pair ("channel=%zz"), and its Get reads
// the first of repeated values ("from=a&from=b"), either of which would
// answer another question than the one asked. A name ending in "..."
// may repeat (a list). The parameters are checked in the order they
// first appear, so that a request with several problems is always
// answered with the first. catalogd's routes do not use it: they answer
// as catalogd does.
func onlyParams(w http.ResponseWriter, r *http.Request, names ...string) bool {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		jsonError(w, r, http.StatusBadRequest, "malformed query string: %v", err)
		return false
	}
	// The parameters in the order they first appear, each once; their
	// values are q's.
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		key, _, _ := strings.Cut(pair, "=")
		if pair == "" || seen[key] {
			continue
		}
		seen[key] = true
		p, _ := url.QueryUnescape(key) // it unescapes: ParseQuery did
		vs := q[p]
		known, list := false, false
		for _, n := range names {
			if strings.TrimSuffix(n, "...") == p {
				known, list = true, strings.HasSuffix(n, "...")
			}
		}
		switch {
		case !known && len(names) == 0:
			jsonError(w, r, http.StatusBadRequest, "unknown parameter %q: this route takes no parameters", p)
		case !known:
			allowed := make([]string, len(names))
			for i, n := range names {
				allowed[i] = strings.TrimSuffix(n, "...")
			}
			jsonError(w, r, http.StatusBadRequest, "unknown parameter %q (allowed: %s)", p, strings.Join(allowed, ", "))
		case len(vs) > 1 && !list:
			jsonError(w, r, http.StatusBadRequest, "parameter %q given %d times: give it once", p, len(vs))
		default:
			continue
		}
		return false
	}
	return true
}

// Limits of the HTTP server: a request's header must arrive within
// ReadHeaderTimeout and fit MaxHeaderBytes (a longer query string gets a
// 431); a body is cut at MaxBodyBytes (no route reads one).
const (
	ReadHeaderTimeout = 10 * time.Second
	MaxHeaderBytes    = 64 << 10
	MaxBodyBytes      = 64 << 10
	IdleTimeout       = 2 * time.Minute
)

// HTTPServer is an http.Server for the Server's handler, with the limits
// above. ReadTimeout is unset on purpose: a large download is bounded by
// IdleWrite (a client that stops reading), not by its total time.
func (s *Server) HTTPServer() *http.Server { return newHTTPServer(s.h, s.log) }

func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		IdleTimeout:       IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}
