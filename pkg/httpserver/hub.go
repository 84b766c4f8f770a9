package httpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/httpserver/ui"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// A Hub serves several catalogs at once (`opm alpha hub`): each catalog's
// routes under /catalogs/NAME/ exactly as a Server serves them (catalogd's
// API, the JSON answers, the page for that catalog alone), and at the
// root the answers that take every catalog into account: the package
// list merged (a package once, with the catalogs that offer it), what a
// new Subscription installs with its dependencies from any catalog (one
// install.Resolver over all, as `query install` with several catalogs),
// the answers of a package from the catalog a Subscription without a
// source would use, and, with a cluster's state, the answers of `query
// cluster` (Cluster, given by alpha/action). The page is the same as
// serve's: it learns from the package list that it shows several
// catalogs.
//
// Catalogs come and go while the hub serves: Set swaps a catalog's
// snapshot in atomically (a reload), Failed records a load that did not
// work (the last good snapshot stays served), SetCluster swaps in a
// cluster state read again with the catalogs' CatalogSources and
// priorities as that reading maps them. Each request works on one world,
// the catalogs and mapping served when it started; a snapshot is closed
// once no request uses a world that holds it.

// HubCatalog is one catalog of a hub.
type HubCatalog struct {
	// Name is the catalog's name in the URLs (/catalogs/NAME/), a DNS-1123
	// subdomain as catalogd requires of a catalog's name.
	Name string
	// Ref is what it is loaded from (a directory or an image), for people.
	Ref string
	// Priority is its priority: a dependency prefers catalogs of higher
	// priority, and a Subscription without a source the first catalog
	// offering the package, by priority and then name, as OLM orders
	// CatalogSources.
	Priority int
	// CatalogSource is the cluster state's CatalogSource it gives the
	// content of (namespace/name), when there is a state.
	CatalogSource string
	// PollIntervalMinutes is how often its image is polled for a new
	// digest (0: never), for the status.
	PollIntervalMinutes int
}

// HubOptions configure a Hub.
type HubOptions struct {
	Catalogs []HubCatalog
	// Cluster answers the cluster questions; nil when the hub has no
	// cluster state. SetCluster replaces it (a state read again).
	Cluster ClusterState
	// StateInterval is how often the state is read again (0: never), for
	// the status.
	StateInterval time.Duration
	// Ready reports whether the hub is not stopping (/readyz).
	Ready func() bool
	// Metrics (NewHubMetrics), Logger, IdleWrite, Budget, MaxTerms and
	// CacheBytes are those of each catalog's Server (Options); the
	// questions of every catalog and of the hub share one pool of
	// workers.
	Metrics    *Metrics
	Logger     *slog.Logger
	IdleWrite  time.Duration
	Budget     time.Duration
	MaxTerms   int
	CacheBytes int64
}

// The states of a hub's catalog.
const (
	CatalogLoading = "loading" // not served yet: its first load runs
	CatalogFailed  = "failed"  // not served: its first load failed
	CatalogServing = "serving" // served
	CatalogStale   = "stale"   // served, the last good snapshot: its last reload failed
)

// CatalogStatus is what the hub says of one of its catalogs.
type CatalogStatus struct {
	Name          string `json:"name"`
	Ref           string `json:"ref"`
	Priority      int    `json:"priority"`
	CatalogSource string `json:"catalogSource,omitempty"`
	// State is loading, failed, serving or stale.
	State string `json:"state"`
	// Error is why the last load failed (failed, stale).
	Error string `json:"error,omitempty"`
	// Digest is the image digest of the snapshot served (images only).
	Digest string `json:"digest,omitempty"`
	// Loaded is when the snapshot served was loaded.
	Loaded   *time.Time `json:"loaded,omitempty"`
	Packages int        `json:"packages,omitempty"`
	Bundles  int        `json:"bundles,omitempty"`
	// PollIntervalMinutes is how often the image is polled (0: never);
	// LastPoll and NextPoll are when it was and will be (/api/v1/hub
	// only: they change without the content).
	PollIntervalMinutes int        `json:"pollIntervalMinutes,omitempty"`
	LastPoll            *time.Time `json:"lastPoll,omitempty"`
	NextPoll            *time.Time `json:"nextPoll,omitempty"`
}

// ClusterStatus is what the hub says of its cluster state.
type ClusterStatus struct {
	// State is serving, or stale: the last reading of the state failed,
	// and the last good state is served.
	State string `json:"state"`
	// Read is when the state served was read (the last reading that
	// found it changed).
	Read *time.Time `json:"read,omitempty"`
	// Checked is when the state was last read without an error (the same
	// as Read, or later when it had not changed).
	Checked *time.Time `json:"checked,omitempty"`
	// Error is why the last reading failed (stale).
	Error string `json:"error,omitempty"`
	// IntervalSeconds is how often the state is read again (0: never).
	IntervalSeconds int `json:"intervalSeconds,omitempty"`
}

// InstalledRef is an installed operator of a package in the cluster's
// state: its CSV in a namespace, and the Subscription that has it.
type InstalledRef struct {
	Namespace    string `json:"namespace"`
	CSV          string `json:"csv"`
	Subscription string `json:"subscription,omitempty"`
	// Source is the Subscription's CatalogSource (namespace/name).
	Source string `json:"source,omitempty"`
}

// ClusterState is a cluster's state as a hub shows it (alpha/action
// implements it over `query cluster`'s answers).
type ClusterState interface {
	// Overview is what the page shows of the state (JSON): its summary,
	// namespaces and CatalogSources.
	Overview() any
	// InstalledPackages are the installed operators by package.
	InstalledPackages() map[string][]InstalledRef
	// Answers makes the cluster answers over the catalogs a world serves
	// (one per hub catalog, in the hub's order; Catalog nil for one not
	// served).
	Answers(ctx context.Context, cats []WorldCatalog) (ClusterAnswers, error)
}

// WorldCatalog is a hub catalog as the cluster answers read it.
type WorldCatalog struct {
	HubCatalog
	// Catalog is its content as OLM v0's resolver reads it; nil when it
	// is not served.
	Catalog *install.Catalog
	// Bundles reads olm.bundle blobs (by package and name) and the
	// olm.package blobs of their packages.
	Bundles func(ctx context.Context, want map[[2]string]bool) (map[string]*declcfg.Package, []*declcfg.Bundle, error)
}

// ClusterAnswers answer the cluster questions over one world's catalogs.
type ClusterAnswers interface {
	// Report is `query cluster`'s answer to q.
	Report(ctx context.Context, q ClusterQuestion) (*ClusterResult, error)
	// Installed is the installed operators with what the next sync does
	// to each.
	Installed(ctx context.Context) (any, error)
}

// ClusterQuestion is a question of /api/v1/cluster, `query cluster`'s
// flags.
type ClusterQuestion struct {
	Namespace string
	Subscribe []string
	Plan      bool
	Limits    install.Limits
}

// ClusterResult is an answer: Undecided when a namespace's resolution
// was not decided within its budget (503).
type ClusterResult struct {
	Answer    any
	Undecided bool
}

// QuestionError is an error of a question, with its HTTP status (400 for
// a wrong question, 404 for something the state or the catalogs lack).
type QuestionError struct {
	Code int
	Err  error
}

func (e *QuestionError) Error() string { return e.Err.Error() }
func (e *QuestionError) Unwrap() error { return e.Err }

// Hub serves several catalogs.
type Hub struct {
	opts HubOptions
	log  *slog.Logger
	work chan struct{}
	h    http.Handler

	// swap serializes the changes of the world (Set, SetCluster, Close):
	// each builds its Servers from the mapping of the world it replaces.
	swap sync.Mutex

	mu     sync.Mutex
	cur    *world
	status map[string]*CatalogStatus
	state  *ClusterStatus // nil without a cluster state
	closed bool
}

// hubCat is a catalog's snapshot served, and its Server, made for the
// catalog's mapping (conf: its CatalogSource's namespace and priority are
// those of its install answers). A mapping changed gives the same
// snapshot a new Server: both hubCats share the hubSnap.
type hubCat struct {
	conf HubCatalog
	srv  *Server
	snap *hubSnap
}

// hubSnap is a snapshot served, and how many worlds hold a catalog of it.
type hubSnap struct {
	snap *cache.Snapshot
	refs int // Hub.mu
}

// world is the catalogs served at one time, and what is computed from
// them when first asked for.
type world struct {
	cats []*hubCat // in the hub's order; nil: not served
	// confs are the catalogs in the hub's order as the cluster state maps
	// them (CatalogSource, priority); never changed in place. A catalog
	// served has its conf: cats[i].conf == confs[i].
	confs  []HubCatalog
	state  ClusterState
	active int // requests using it (Hub.mu)

	listOnce sync.Once
	list     []hubPkg // by name

	resOnce sync.Once
	res     *install.Resolver
	resErr  error

	clusterOnce sync.Once
	cluster     ClusterAnswers
	clusterErr  error
}

// NewHub makes a hub of the catalogs, none served yet (Set serves them).
func NewHub(opts HubOptions) (*Hub, error) {
	if len(opts.Catalogs) == 0 {
		return nil, errors.New("a hub needs at least one catalog")
	}
	seen := map[string]bool{}
	for _, c := range opts.Catalogs {
		if err := ValidCatalogName(c.Name); err != nil {
			return nil, err
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("two catalogs are named %q: each catalog needs a name of its own", c.Name)
		}
		seen[c.Name] = true
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Ready == nil {
		opts.Ready = func() bool { return true }
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.MaxTerms == 0 {
		opts.MaxTerms = DefaultMaxTerms
	}
	h := &Hub{opts: opts, log: opts.Logger, work: make(chan struct{}, workers()), status: map[string]*CatalogStatus{}}
	h.cur = &world{cats: make([]*hubCat, len(opts.Catalogs)), confs: slices.Clone(opts.Catalogs), state: opts.Cluster}
	if opts.Cluster != nil {
		now := time.Now()
		h.state = &ClusterStatus{State: CatalogServing, Read: &now, Checked: &now, IntervalSeconds: int(opts.StateInterval / time.Second)}
	}
	for _, c := range opts.Catalogs {
		h.status[c.Name] = &CatalogStatus{Name: c.Name, Ref: c.Ref, Priority: c.Priority, CatalogSource: c.CatalogSource,
			State: CatalogLoading, PollIntervalMinutes: c.PollIntervalMinutes}
		if m := opts.Metrics; m != nil && m.hub != nil {
			m.hub.ready.WithLabelValues(c.Name).Set(0)
		}
	}
	h.h = h.routes()
	return h, nil
}

// Handler serves every route.
func (h *Hub) Handler() http.Handler { return h.h }

// HTTPServer is an http.Server for the hub's handler, with a Server's
// limits.
func (h *Hub) HTTPServer() *http.Server { return newHTTPServer(h.h, h.log) }

func (h *Hub) index(name string) int {
	return slices.IndexFunc(h.opts.Catalogs, func(c HubCatalog) bool { return c.Name == name })
}

// Set serves snap as the catalog name from now on (its first load or a
// reload); digest is its image's digest ("" for a directory). The
// snapshot replaced is closed once no request uses it. On an error
// (the snapshot holds no JSON lines) nothing changes and the caller
// keeps snap.
func (h *Hub) Set(name string, snap *cache.Snapshot, digest string, took time.Duration) error {
	i := h.index(name)
	if i < 0 {
		return fmt.Errorf("the hub has no catalog %q", name)
	}
	h.swap.Lock()
	defer h.swap.Unlock()
	h.mu.Lock()
	conf := h.cur.confs[i]
	h.mu.Unlock()
	srv, err := h.newServer(conf, snap)
	if err != nil {
		return err
	}
	now := time.Now()
	c := &hubCat{conf: conf, srv: srv, snap: &hubSnap{snap: snap}}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return errors.New("the hub is closed")
	}
	old := h.cur
	nw := &world{cats: slices.Clone(old.cats), confs: old.confs, state: old.state}
	nw.cats[i] = c
	holdLocked(nw)
	h.cur = nw
	st := h.status[name]
	st.State, st.Error, st.Digest, st.Loaded = CatalogServing, "", digest, &now
	st.Packages, st.Bundles = len(snap.Index.Packages), len(snap.Index.Bundles)
	closing := h.retireLocked(old)
	h.mu.Unlock()
	closeCats(closing)
	if m := h.opts.Metrics; m != nil && m.hub != nil {
		m.hub.loaded(name, took, now)
	}
	h.log.Info("serving catalog", "catalog", name, "ref", conf.Ref, "digest", digest, "packages", len(snap.Index.Packages),
		"bundles", len(snap.Index.Bundles), "took", took.Round(time.Millisecond))
	return nil
}

// newServer is the Server of a catalog's snapshot for its mapping: its
// install answers name its CatalogSource's namespace and priority.
func (h *Hub) newServer(conf HubCatalog, snap *cache.Snapshot) (*Server, error) {
	ns, _, _ := strings.Cut(conf.CatalogSource, "/")
	if conf.CatalogSource == "" {
		ns = ""
	}
	return New(snap, Options{CatalogName: conf.Name, Metrics: h.opts.Metrics, Logger: h.log, IdleWrite: h.opts.IdleWrite,
		Budget: h.opts.Budget, MaxTerms: h.opts.MaxTerms, CacheBytes: h.opts.CacheBytes,
		Priority: conf.Priority, Namespace: ns, work: h.work})
}

// holdLocked counts a new world as a holder of its snapshots. h.mu is
// held.
func holdLocked(w *world) {
	for _, hc := range w.cats {
		if hc != nil {
			hc.snap.refs++
		}
	}
}

// Failed records that loading the catalog failed: a catalog served keeps
// its last good snapshot (stale), one never served is failed.
func (h *Hub) Failed(name string, err error) {
	h.mu.Lock()
	st := h.status[name]
	if st == nil {
		h.mu.Unlock()
		return
	}
	if st.State == CatalogServing || st.State == CatalogStale {
		st.State = CatalogStale
	} else {
		st.State = CatalogFailed
	}
	st.Error = err.Error()
	state := st.State
	h.mu.Unlock()
	if m := h.opts.Metrics; m != nil && m.hub != nil {
		m.hub.loads.WithLabelValues(name, "failure").Inc()
	}
	if state == CatalogStale {
		h.log.Error("cannot reload a catalog: serving its last good snapshot", "catalog", name, "error", err)
	} else {
		h.log.Error("cannot load a catalog", "catalog", name, "error", err)
	}
}

// SetCluster serves cs as the cluster state from now on (the state read
// again, and changed), swapped in as a catalog is: requests under way
// finish with the state they started with. cats, unless nil, are the
// catalogs as that state maps them, in the hub's order: the same names
// and references, each with its CatalogSource and priority, which every
// answer takes from then on (the merged list's order, installs across
// catalogs, the cluster's answers, the catalogs' status); a catalog
// served whose mapping changed gets a Server of its own for it over the
// same snapshot. On an error nothing changes.
func (h *Hub) SetCluster(cs ClusterState, cats []HubCatalog) error {
	if cs == nil || h.opts.Cluster == nil {
		return errors.New("the hub has no cluster state to replace")
	}
	if cats != nil {
		if len(cats) != len(h.opts.Catalogs) {
			return fmt.Errorf("the cluster state maps %d catalogs; the hub has %d", len(cats), len(h.opts.Catalogs))
		}
		for i, c := range cats {
			o := h.opts.Catalogs[i]
			if c.Name != o.Name || c.Ref != o.Ref || c.PollIntervalMinutes != o.PollIntervalMinutes {
				return fmt.Errorf("the cluster state maps catalog %q where the hub has %q (%s): only a catalog's CatalogSource and priority change", c.Name, o.Name, o.Ref)
			}
		}
	}
	h.swap.Lock()
	defer h.swap.Unlock()
	h.mu.Lock()
	old, closed := h.cur, h.closed
	h.mu.Unlock()
	if closed {
		return errors.New("the hub is closed")
	}
	// Only Set, SetCluster and Close replace h.cur, and they hold
	// h.swap: old stays the current world while the Servers are made.
	confs, served := old.confs, slices.Clone(old.cats)
	var changed []int
	if cats != nil {
		confs = slices.Clone(cats)
		for i := range confs {
			if confs[i] == old.confs[i] {
				continue
			}
			changed = append(changed, i)
			c := old.cats[i]
			if c == nil {
				continue
			}
			srv, err := h.newServer(confs[i], c.snap.snap)
			if err != nil {
				return err
			}
			served[i] = &hubCat{conf: confs[i], srv: srv, snap: c.snap}
		}
	}
	now := time.Now()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return errors.New("the hub is closed")
	}
	nw := &world{cats: served, confs: confs, state: cs}
	holdLocked(nw)
	h.cur = nw
	for _, i := range changed {
		st := h.status[confs[i].Name]
		st.Priority, st.CatalogSource = confs[i].Priority, confs[i].CatalogSource
	}
	h.state.State, h.state.Error, h.state.Read, h.state.Checked = CatalogServing, "", &now, &now
	closing := h.retireLocked(old)
	h.mu.Unlock()
	closeCats(closing)
	h.log.Info("serving the cluster state read again: it changed")
	return nil
}

// ClusterUnchanged records a reading of the state that found it the
// same as the one served.
func (h *Hub) ClusterUnchanged() {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != nil {
		h.state.State, h.state.Error, h.state.Checked = CatalogServing, "", &now
	}
}

// ClusterFailed records that reading the state again failed: the last
// good state stays served (stale).
func (h *Hub) ClusterFailed(err error) {
	h.mu.Lock()
	if h.state == nil {
		h.mu.Unlock()
		return
	}
	h.state.State, h.state.Error = CatalogStale, err.Error()
	h.mu.Unlock()
	h.log.Error("cannot read the cluster state again: serving the last good state", "error", err)
}

// ClusterStatus is the cluster state's status; nil without a state.
func (h *Hub) ClusterStatus() *ClusterStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == nil {
		return nil
	}
	st := *h.state
	return &st
}

// Polled records a poll of the catalog's image (at, and the next at
// next), whatever it found.
func (h *Hub) Polled(name string, at, next time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if st := h.status[name]; st != nil {
		st.LastPoll, st.NextPoll = &at, &next
	}
}

// Status is every catalog's status, in the hub's order.
func (h *Hub) Status() []CatalogStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]CatalogStatus, 0, len(h.opts.Catalogs))
	for _, c := range h.opts.Catalogs {
		out = append(out, *h.status[c.Name])
	}
	return out
}

// Close stops serving: every snapshot is closed once the requests under
// way end. Call it once the HTTP server has stopped.
func (h *Hub) Close() {
	h.swap.Lock()
	defer h.swap.Unlock()
	h.mu.Lock()
	h.closed = true
	old := h.cur
	h.cur = &world{cats: make([]*hubCat, len(old.cats)), confs: old.confs, state: old.state}
	closing := h.retireLocked(old)
	h.mu.Unlock()
	closeCats(closing)
}

// retireLocked drops w as the current world: when no request uses it,
// it lets go of its catalogs, and returns those no world holds any more,
// to close. h.mu is held.
func (h *Hub) retireLocked(w *world) []*hubCat {
	if w.active > 0 || w == h.cur {
		return nil
	}
	var out []*hubCat
	for _, c := range w.cats {
		if c == nil {
			continue
		}
		c.snap.refs--
		if c.snap.refs == 0 {
			out = append(out, c)
		}
	}
	w.cats = nil
	return out
}

func closeCats(cats []*hubCat) {
	for _, c := range cats {
		_ = c.snap.snap.Close()
	}
}

// acquire returns the current world, for one request; release it.
func (h *Hub) acquire() *world {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cur.active++
	return h.cur
}

func (h *Hub) release(w *world) {
	h.mu.Lock()
	w.active--
	closing := h.retireLocked(w)
	h.mu.Unlock()
	closeCats(closing)
}

// withWorld runs fn with the current world.
func (h *Hub) withWorld(fn func(w http.ResponseWriter, r *http.Request, wd *world)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		wd := h.acquire()
		defer h.release(wd)
		fn(w, r, wd)
	}
}

// served are the world's catalogs served, in OLM's order of preference:
// higher priority first, then by name.
func (wd *world) served() []*hubCat {
	var out []*hubCat
	for _, c := range wd.cats {
		if c != nil {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b *hubCat) int {
		if a.conf.Priority != b.conf.Priority {
			return cmp.Compare(b.conf.Priority, a.conf.Priority)
		}
		return strings.Compare(a.conf.Name, b.conf.Name)
	})
	return out
}

func (wd *world) byName(name string) *hubCat {
	for _, c := range wd.cats {
		if c != nil && c.conf.Name == name {
			return c
		}
	}
	return nil
}

// routes: each catalog under /catalogs/NAME/, the hub's answers at the
// root, compressed and counted as a Server's.
func (h *Hub) routes() http.Handler {
	root := http.NewServeMux()
	type route struct {
		pattern, name string
		h             func(http.ResponseWriter, *http.Request, *world)
	}
	for _, rt := range []route{
		{"GET /api/v1/hub", "hub", h.hubStatus},
		{"GET /api/v1/packages", "packages", h.packages},
		{"GET /api/v1/packages/{package}", "package", h.pkg},
		{"GET /api/v1/install", "install", h.install},
		{"GET /api/v1/cluster", "cluster", h.cluster},
		{"GET /api/v1/cluster/installed", "cluster-installed", h.installed},
	} {
		root.Handle(rt.pattern, h.instrument(rt.name, h.withWorld(rt.h)))
	}
	// Answers of one catalog: the package's, from the catalog named by
	// the catalog parameter or the one a Subscription without a source
	// uses; counted by that catalog's Server.
	for _, p := range []string{"GET /api/v1/packages/{package}/icon", "GET /api/v1/packages/{package}/bundles/{bundle}",
		"GET /api/v1/packages/{package}/graph.svg", "GET /api/v1/updates", "GET /api/v1/olmv1/resolve"} {
		root.Handle(p, h.withWorld(h.forward))
	}
	for _, p := range []string{"/api/v1/all", "/api/v1/metas"} {
		root.Handle(p, h.instrument("other", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "404 Not Found: a hub serves catalogd's API per catalog, at /catalogs/NAME"+p+" (its catalogs: "+h.names()+")", http.StatusNotFound)
		})))
	}
	page := h.instrument("page", http.StripPrefix("/", ui.Handler()))
	for _, p := range []string{"GET /{$}", "GET /index.html", "GET /ui/"} {
		root.Handle(p, page)
	}

	top := http.NewServeMux()
	top.Handle("GET /healthz", h.instrument("healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})))
	top.Handle("GET /readyz", h.instrument("readyz", http.HandlerFunc(h.readyz)))
	if m := h.opts.Metrics; m != nil {
		top.Handle("GET /metrics", h.instrument("metrics", m.Handler()))
	}
	top.Handle("/catalogs/{catalog}/", h.withWorld(h.catalogRoute))
	top.Handle("/", root)
	return gzhttp.GzipHandler(http.MaxBytesHandler(top, MaxBodyBytes))
}

func (h *Hub) names() string {
	names := make([]string, len(h.opts.Catalogs))
	for i, c := range h.opts.Catalogs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// instrument counts and times the hub's own routes (catalog label "").
func (h *Hub) instrument(name string, handler http.Handler) http.Handler {
	s := &Server{opts: Options{Metrics: h.opts.Metrics}, log: h.log}
	return s.instrument(name, handler)
}

// catalogRoute serves /catalogs/NAME/... from that catalog's Server, as
// serve --http-addr serves it.
func (h *Hub) catalogRoute(w http.ResponseWriter, r *http.Request, wd *world) {
	name := r.PathValue("catalog")
	if err := ValidCatalogName(name); err != nil {
		h.instrument("other", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, err.Error(), http.StatusBadRequest)
		})).ServeHTTP(w, r)
		return
	}
	c := wd.byName(name)
	if c == nil {
		h.instrument("other", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h.index(name) >= 0 {
				w.Header().Set("Retry-After", retryAfter)
				http.Error(w, "503 Service Unavailable: catalog "+name+" is not served: "+h.stateWords(name), http.StatusServiceUnavailable)
				return
			}
			notFound(w, r)
		})).ServeHTTP(w, r)
		return
	}
	c.srv.inner.ServeHTTP(w, stripCatalog(r))
}

// stateWords says a catalog's state in words.
func (h *Hub) stateWords(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.status[name]
	switch st.State {
	case CatalogLoading:
		return "loading"
	case CatalogFailed:
		return "its load failed: " + st.Error
	case CatalogStale:
		return "serving its last good snapshot; its last reload failed: " + st.Error
	}
	return st.State
}

// readyz is 200 once every catalog is served (a stale one too: it serves
// its last good snapshot), 503 before and while the hub stops; the body
// says each catalog's state.
func (h *Hub) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	var b strings.Builder
	ready := h.opts.Ready()
	if !ready {
		b.WriteString("not serving: stopping\n")
	}
	for _, st := range h.Status() {
		fmt.Fprintf(&b, "catalog %s: %s", st.Name, st.State)
		switch st.State {
		case CatalogLoading:
			ready = false
		case CatalogFailed:
			ready = false
			fmt.Fprintf(&b, ": %s", st.Error)
		case CatalogStale:
			fmt.Fprintf(&b, " (serving the last good snapshot%s; the last reload failed: %s)", digestWords(st.Digest), st.Error)
		case CatalogServing:
			b.WriteString(digestWords(st.Digest))
		}
		b.WriteString("\n")
	}
	if cs := h.ClusterStatus(); cs != nil {
		fmt.Fprintf(&b, "cluster state: %s (read %s", cs.State, cs.Read.UTC().Format(time.RFC3339))
		if cs.State == CatalogStale {
			fmt.Fprintf(&b, "; serving that last good state: the last reading failed: %s", cs.Error)
		}
		b.WriteString(")\n")
	}
	if !ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = io.WriteString(w, b.String())
}

func digestWords(d string) string {
	if d == "" {
		return ""
	}
	return " " + d
}

// hubOffer is a catalog that offers a package.
type hubOffer struct {
	Catalog        string `json:"catalog"`
	Priority       int    `json:"priority"`
	DefaultChannel string `json:"defaultChannel"`
	Head           string `json:"head,omitempty"`
	Version        string `json:"version,omitempty"`
	Deprecated     string `json:"deprecated,omitempty"`
}

// hubPkg is a package of the merged list: what the catalog a
// Subscription without a source uses (Catalog) says of it, and every
// catalog that offers it, in OLM's order of preference.
type hubPkg struct {
	pkgSummary
	Catalog   string         `json:"catalog"`
	Catalogs  []hubOffer     `json:"catalogs"`
	Installed []InstalledRef `json:"installed,omitempty"`
}

// merged is the package list of every catalog served, made once per
// world.
func (wd *world) merged(h *Hub) []hubPkg {
	wd.listOnce.Do(func() {
		byName := map[string]int{}
		var installed map[string][]InstalledRef
		if wd.state != nil {
			installed = wd.state.InstalledPackages()
		}
		for _, c := range wd.served() {
			for _, p := range c.srv.catalog() {
				o := hubOffer{Catalog: c.conf.Name, Priority: c.conf.Priority, DefaultChannel: p.DefaultChannel, Head: p.Head,
					Version: p.Version, Deprecated: p.Deprecated}
				if i, ok := byName[p.Name]; ok {
					wd.list[i].Catalogs = append(wd.list[i].Catalogs, o)
					continue
				}
				byName[p.Name] = len(wd.list)
				wd.list = append(wd.list, hubPkg{pkgSummary: p, Catalog: c.conf.Name, Catalogs: []hubOffer{o}, Installed: installed[p.Name]})
			}
		}
		slices.SortFunc(wd.list, func(a, b hubPkg) int { return strings.Compare(a.Name, b.Name) })
	})
	return wd.list
}

// find is the merged list's package of that name.
func (wd *world) find(h *Hub, name string) *hubPkg {
	list := wd.merged(h)
	i, ok := slices.BinarySearchFunc(list, name, func(p hubPkg, n string) int { return strings.Compare(p.Name, n) })
	if !ok {
		return nil
	}
	return &list[i]
}

func (wd *world) packageNames(h *Hub) []string {
	list := wd.merged(h)
	names := make([]string, len(list))
	for i, p := range list {
		names[i] = p.Name
	}
	return names
}

// hubList is /api/v1/packages of a hub.
type hubList struct {
	// Hub is true: the page shows several catalogs.
	Hub      bool            `json:"hub"`
	Catalogs []CatalogStatus `json:"catalogs"`
	// Cluster is the cluster state's overview, ClusterStatus its
	// status; none without a state.
	Cluster       any            `json:"cluster,omitempty"`
	ClusterStatus *ClusterStatus `json:"clusterStatus,omitempty"`
	Total         int            `json:"total"`
	Packages      []hubPkg       `json:"packages"`
}

// hubListParams are the list's parameters: a Server's, and the catalogs
// (any of them offers the package).
var hubListParams = append(slices.Clone(listParams), "catalog...")

func (h *Hub) packages(w http.ResponseWriter, r *http.Request, wd *world) {
	q, limit, ok := listQuery(w, r, hubListParams)
	if !ok {
		return
	}
	match := newFilter(q)
	cats := q["catalog"]
	a := hubList{Hub: true, Catalogs: h.Status(), Packages: []hubPkg{}}
	for i := range a.Catalogs {
		a.Catalogs[i].LastPoll, a.Catalogs[i].NextPoll = nil, nil
	}
	if wd.state != nil {
		a.Cluster, a.ClusterStatus = wd.state.Overview(), h.ClusterStatus()
		a.ClusterStatus.Checked = nil
	}
	for _, p := range wd.merged(h) {
		if !match(&p.pkgSummary) {
			continue
		}
		if len(cats) > 0 && !slices.ContainsFunc(p.Catalogs, func(o hubOffer) bool {
			return slices.ContainsFunc(cats, func(c string) bool { return strings.EqualFold(c, o.Catalog) })
		}) {
			continue
		}
		a.Total++
		if limit < 0 || len(a.Packages) < limit {
			a.Packages = append(a.Packages, p)
		}
	}
	writeJSON(w, r, http.StatusOK, a)
}

// hubStatus is /api/v1/hub: the catalogs' states and the cluster
// state's overview.
func (h *Hub) hubStatus(w http.ResponseWriter, r *http.Request, wd *world) {
	if !onlyParams(w, r) {
		return
	}
	a := struct {
		Catalogs      []CatalogStatus `json:"catalogs"`
		Cluster       any             `json:"cluster,omitempty"`
		ClusterStatus *ClusterStatus  `json:"clusterStatus,omitempty"`
	}{Catalogs: h.Status()}
	if wd.state != nil {
		a.Cluster, a.ClusterStatus = wd.state.Overview(), h.ClusterStatus()
	}
	writeJSON(w, r, http.StatusOK, a)
}

// pick is the catalog of a question about pkg: the one named (it must be
// one of the hub's, served, and offer the package), or the one a
// Subscription without a source uses. It writes the error when there is
// none.
func (h *Hub) pick(w http.ResponseWriter, r *http.Request, wd *world, pkg, catalog string) *hubCat {
	if len(pkg) > maxQuery || len(catalog) > maxQuery {
		jsonError(w, r, http.StatusBadRequest, "a parameter is longer than %d bytes", maxQuery)
		return nil
	}
	p := wd.find(h, pkg)
	if catalog != "" {
		if h.index(catalog) < 0 {
			names := make([]string, len(h.opts.Catalogs))
			for i, c := range h.opts.Catalogs {
				names[i] = c.Name
			}
			jsonError(w, r, http.StatusNotFound, "catalog %q is not one of the hub's (its catalogs: %s)%s", catalog, h.names(), suggest.Hint(catalog, names))
			return nil
		}
		c := wd.byName(catalog)
		if c == nil {
			w.Header().Set("Retry-After", retryAfter)
			jsonError(w, r, http.StatusServiceUnavailable, "catalog %q is not served: %s", catalog, h.stateWords(catalog))
			return nil
		}
		if !c.srv.hasPackage(pkg) {
			msg := fmt.Sprintf("package %q not found in catalog %q", pkg, catalog)
			if p != nil {
				msg += "; the catalogs that offer it: " + offerNames(p.Catalogs)
			} else {
				msg += suggest.Hint(pkg, c.srv.packageNames())
			}
			jsonError(w, r, http.StatusNotFound, "%s", msg)
			return nil
		}
		return c
	}
	if p == nil {
		jsonError(w, r, http.StatusNotFound, "package %q not found in the hub's catalogs%s", pkg, suggest.Hint(pkg, wd.packageNames(h)))
		return nil
	}
	return wd.byName(p.Catalog)
}

func offerNames(offers []hubOffer) string {
	names := make([]string, len(offers))
	for i, o := range offers {
		names[i] = o.Catalog
	}
	return strings.Join(names, ", ")
}

// hubPackage is /api/v1/packages/{package} of a hub: the package as its
// catalog answers it, with the catalogs that offer it.
type hubPackage struct {
	Catalog  string     `json:"catalog"`
	Catalogs []hubOffer `json:"catalogs"`
	*packageAnswer
}

func (h *Hub) pkg(w http.ResponseWriter, r *http.Request, wd *world) {
	if !onlyParams(w, r, "catalog") {
		return
	}
	name := r.PathValue("package")
	c := h.pick(w, r, wd, name, r.URL.Query().Get("catalog"))
	if c == nil {
		return
	}
	v, err := c.srv.view(name)
	if err != nil || v == nil {
		h.log.Error("cannot read a package", "catalog", c.conf.Name, "package", name, "error", err)
		jsonError(w, r, http.StatusInternalServerError, "cannot read package %q", name)
		return
	}
	writeJSON(w, r, http.StatusOK, hubPackage{Catalog: c.conf.Name, Catalogs: wd.find(h, name).Catalogs, packageAnswer: v.answer()})
}

// forward answers a question about one package from its catalog's
// Server, the catalog parameter taken out.
func (h *Hub) forward(w http.ResponseWriter, r *http.Request, wd *world) {
	cats, rest, err := takeParam(r.URL.RawQuery, "catalog")
	if err != nil {
		jsonError(w, r, http.StatusBadRequest, "malformed query string: %v", err)
		return
	}
	if len(cats) > 1 {
		jsonError(w, r, http.StatusBadRequest, "parameter %q given %d times: give it once", "catalog", len(cats))
		return
	}
	pkg := r.PathValue("package")
	if pkg == "" {
		ps := r.URL.Query()["package"]
		if len(ps) == 0 || ps[0] == "" {
			jsonError(w, r, http.StatusBadRequest, "the package parameter is required")
			return
		}
		pkg = ps[0]
	}
	catalog := ""
	if len(cats) == 1 {
		catalog = cats[0]
	}
	c := h.pick(w, r, wd, pkg, catalog)
	if c == nil {
		return
	}
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	r2.URL.RawQuery = rest
	c.srv.inner.ServeHTTP(w, r2)
}

// takeParam takes every value of the parameter name out of a raw query
// string, keeping the rest as it is.
func takeParam(raw, name string) (values []string, rest string, err error) {
	if _, err := url.ParseQuery(raw); err != nil {
		return nil, "", err
	}
	var kept []string
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if key, _ := url.QueryUnescape(k); key == name {
			val, _ := url.QueryUnescape(v)
			values = append(values, val)
			continue
		}
		if pair != "" {
			kept = append(kept, pair)
		}
	}
	return values, strings.Join(kept, "&"), nil
}

// resolver is OLM v0's resolver over every catalog served, made when
// first asked for: each catalog's as its Server reads it (and keeps).
func (wd *world) resolver(h *Hub) (*install.Resolver, error) {
	wd.resOnce.Do(func() {
		cats, err := wd.installCatalogs()
		if err != nil {
			wd.resErr = err
			return
		}
		var all []*install.Catalog
		for _, c := range cats {
			if c.Catalog != nil {
				all = append(all, c.Catalog)
			}
		}
		if len(all) == 0 {
			wd.resErr = errors.New("no catalog is served yet")
			return
		}
		if wd.res, wd.resErr = install.NewResolver(all...); wd.resErr == nil {
			wd.res.Budget, wd.res.MaxTerms = h.opts.Budget, h.opts.MaxTerms
		}
	})
	return wd.res, wd.resErr
}

// installCatalogs reads every served catalog as OLM v0's resolver does,
// in parallel, in the hub's order.
func (wd *world) installCatalogs() ([]WorldCatalog, error) {
	out := make([]WorldCatalog, len(wd.cats))
	errs := make([]error, len(wd.cats))
	var wg sync.WaitGroup
	for i, c := range wd.cats {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].Catalog, errs[i] = c.srv.InstallCatalog()
			out[i].Bundles = c.srv.readBundles
		}()
	}
	wg.Wait()
	for i, c := range wd.cats {
		if errs[i] != nil {
			return nil, fmt.Errorf("catalog %s: %w", c.conf.Name, errs[i])
		}
	}
	return out, nil
}

// install is /api/v1/install of a hub: what a new Subscription to the
// package installs, its dependencies from any catalog, the Subscription's
// catalog the one named by catalog or else the one a Subscription without
// a source uses.
func (h *Hub) install(w http.ResponseWriter, r *http.Request, wd *world) {
	if !onlyParams(w, r, "package", "channel", "bundle", "catalog") {
		return
	}
	q := r.URL.Query()
	pkg, channel, bundle := q.Get("package"), q.Get("channel"), q.Get("bundle")
	if pkg == "" {
		jsonError(w, r, http.StatusBadRequest, "the package parameter is required")
		return
	}
	if len(channel) > maxQuery || len(bundle) > maxQuery {
		jsonError(w, r, http.StatusBadRequest, "a parameter is longer than %d bytes", maxQuery)
		return
	}
	c := h.pick(w, r, wd, pkg, q.Get("catalog"))
	if c == nil {
		return
	}
	res, err := wd.resolver(h)
	if err != nil {
		h.log.Error("cannot read the catalogs for install answers", "error", err)
		jsonError(w, r, http.StatusInternalServerError, "cannot read the catalogs for install answers")
		return
	}
	cat, _ := c.srv.InstallCatalog()
	channels, _ := cat.Channels(pkg)
	if channel != "" && !slices.Contains(channels, channel) {
		jsonError(w, r, http.StatusNotFound, "channel %q not found in package %q of catalog %q (its channels: %s)%s", channel, pkg, c.conf.Name, strings.Join(channels, ", "), suggest.Hint(channel, channels))
		return
	}
	done, ok := h.startWork(w, r)
	if !ok {
		return
	}
	a, err := res.Resolve(r.Context(), install.Subscription{Package: pkg, Channel: channel, StartingCSV: bundle, Catalog: cat.Key()})
	done()
	switch {
	case r.Context().Err() != nil:
		return
	case err != nil:
		jsonError(w, r, http.StatusBadRequest, "%v", err)
		return
	case a.Status == install.Undecided:
		w.Header().Set("Retry-After", retryAfter)
		writeJSON(w, r, http.StatusServiceUnavailable, a)
		return
	}
	writeJSON(w, r, http.StatusOK, a)
}

func (h *Hub) startWork(w http.ResponseWriter, r *http.Request) (func(), bool) {
	s := &Server{opts: Options{Budget: h.opts.Budget}, work: h.work}
	return s.startWork(w, r)
}

// clusterAnswers are the cluster answers over the world's catalogs, made
// when first asked for.
func (wd *world) clusterAnswers(h *Hub) (ClusterAnswers, error) {
	wd.clusterOnce.Do(func() {
		cats, err := wd.installCatalogs()
		if err != nil {
			wd.clusterErr = err
			return
		}
		for i := range cats {
			cats[i].HubCatalog = wd.confs[i]
		}
		wd.cluster, wd.clusterErr = wd.state.Answers(context.Background(), cats)
	})
	return wd.cluster, wd.clusterErr
}

// noCluster answers the cluster routes of a hub without a state.
func (h *Hub) noCluster(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.Cluster != nil {
		return false
	}
	jsonError(w, r, http.StatusNotFound, "the hub has no cluster state: start it with --state to ask about a cluster")
	return true
}

// clusterLoading answers a cluster question with 503 while a catalog
// that gives one of the state's CatalogSources its content has not
// finished its first load: the answers would take that CatalogSource as
// one OLM cannot reach (every namespace that sees it failing), which is
// not query cluster's answer for the same catalogs. A catalog whose
// first load failed is not waited for: the answers say it is
// unreachable, and /readyz and the page say why. (A catalog not in the
// request's world that is served by now was loading when it started.)
func (h *Hub) clusterLoading(w http.ResponseWriter, r *http.Request, wd *world) bool {
	var loading []string
	h.mu.Lock()
	for i, c := range wd.confs {
		if c.CatalogSource != "" && wd.cats[i] == nil && h.status[c.Name].State != CatalogFailed {
			loading = append(loading, c.Name)
		}
	}
	h.mu.Unlock()
	if len(loading) == 0 {
		return false
	}
	w.Header().Set("Retry-After", retryAfter)
	jsonError(w, r, http.StatusServiceUnavailable, "the cluster's answers wait for every catalog of its CatalogSources: still loading: %s", strings.Join(loading, ", "))
	return true
}

// questionError writes an error of a cluster question.
func (h *Hub) questionError(w http.ResponseWriter, r *http.Request, err error) {
	var qe *QuestionError
	if errors.As(err, &qe) {
		jsonError(w, r, qe.Code, "%v", qe.Err)
		return
	}
	h.log.Error("cannot answer a cluster question", "uri", r.RequestURI, "error", err)
	jsonError(w, r, http.StatusInternalServerError, "%v", err)
}

// cluster is /api/v1/cluster?namespace=&subscribe=...&plan=: `opm alpha
// query cluster -o json` over the hub's catalogs.
func (h *Hub) cluster(w http.ResponseWriter, r *http.Request, wd *world) {
	if h.noCluster(w, r) || !onlyParams(w, r, "namespace", "subscribe...", "plan") || h.clusterLoading(w, r, wd) {
		return
	}
	q := r.URL.Query()
	cq := ClusterQuestion{Namespace: q.Get("namespace"), Subscribe: q["subscribe"],
		Limits: install.Limits{Budget: h.opts.Budget, MaxTerms: h.opts.MaxTerms}}
	switch q.Get("plan") {
	case "", "false":
	case "true":
		cq.Plan = true
	default:
		jsonError(w, r, http.StatusBadRequest, "plan is true or false, not %q", q.Get("plan"))
		return
	}
	if len(cq.Subscribe) > 16 {
		jsonError(w, r, http.StatusBadRequest, "at most 16 subscribe parameters")
		return
	}
	for _, vs := range q {
		for _, v := range vs {
			if len(v) > maxQuery*2 {
				jsonError(w, r, http.StatusBadRequest, "a parameter is longer than %d bytes", maxQuery*2)
				return
			}
		}
	}
	ans, err := wd.clusterAnswers(h)
	if err != nil {
		h.questionError(w, r, err)
		return
	}
	done, ok := h.startWork(w, r)
	if !ok {
		return
	}
	res, err := ans.Report(r.Context(), cq)
	done()
	switch {
	case r.Context().Err() != nil:
		return
	case err != nil:
		h.questionError(w, r, err)
		return
	case res.Undecided:
		w.Header().Set("Retry-After", retryAfter)
		writeJSON(w, r, http.StatusServiceUnavailable, res.Answer)
		return
	}
	writeJSON(w, r, http.StatusOK, res.Answer)
}

// installed is /api/v1/cluster/installed: every installed operator, with
// what the next sync does to it.
func (h *Hub) installed(w http.ResponseWriter, r *http.Request, wd *world) {
	if h.noCluster(w, r) || !onlyParams(w, r) || h.clusterLoading(w, r, wd) {
		return
	}
	ans, err := wd.clusterAnswers(h)
	if err != nil {
		h.questionError(w, r, err)
		return
	}
	done, ok := h.startWork(w, r)
	if !ok {
		return
	}
	a, err := ans.Installed(r.Context())
	done()
	switch {
	case r.Context().Err() != nil:
		return
	case err != nil:
		h.questionError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, a)
}

// readBundles reads olm.bundle blobs by package and name, and the
// olm.package blobs of their packages, each decoded from bytes of its own
// (decoded values alias them).
func (s *Server) readBundles(_ context.Context, want map[[2]string]bool) (map[string]*declcfg.Package, []*declcfg.Bundle, error) {
	pkgs := map[string]*declcfg.Package{}
	var bundles []*declcfg.Bundle
	for k := range want {
		pkg, name := k[0], k[1]
		line, err := s.bundleLine(pkg, name, nil)
		if err != nil {
			return nil, nil, err
		}
		if line == nil {
			continue
		}
		b, err := declcfg.DecodeBundle(line)
		if err != nil {
			return nil, nil, fmt.Errorf("bundle %s: %w", name, err)
		}
		bundles = append(bundles, &b)
		if pkgs[pkg] == nil {
			p, err := s.packageBlob(pkg)
			if err != nil {
				return nil, nil, err
			}
			pkgs[pkg] = p
		}
	}
	slices.SortFunc(bundles, func(a, b *declcfg.Bundle) int {
		return cmp.Or(strings.Compare(a.Package, b.Package), strings.Compare(a.Name, b.Name))
	})
	return pkgs, bundles, nil
}

// hubMetrics are a hub's metrics by catalog.
type hubMetrics struct {
	packages, bundles, blobs, size *prometheus.GaugeVec
	load, loadedAt, ready          *prometheus.GaugeVec
	loads                          *prometheus.CounterVec
}

// NewHubMetrics makes a hub's metrics: HTTP requests by catalog (""
// for the hub's own routes), route, method and code; each catalog's size,
// its last load's time, loads by result, readiness; Go and process
// metrics.
func NewHubMetrics() *Metrics {
	cat := []string{"catalog"}
	hm := &hubMetrics{
		packages: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opm_catalog_packages", Help: "Packages in the served catalog."}, cat),
		bundles:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opm_catalog_bundles", Help: "Bundles in the served catalog."}, cat),
		blobs:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opm_catalog_blobs", Help: "Blobs (JSON lines) in the served catalog."}, cat),
		size:     prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opm_catalog_jsonl_bytes", Help: "Size of the served catalog as JSON lines (/api/v1/all)."}, cat),
		load:     prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opm_catalog_load_seconds", Help: "Time the served snapshot of the catalog took to load."}, cat),
		loadedAt: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opm_catalog_loaded_timestamp_seconds", Help: "When the served snapshot of the catalog was loaded (Unix time)."}, cat),
		ready:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opm_catalog_served", Help: "1 when the catalog is served (its last good snapshot, after a failed reload, too), else 0."}, cat),
		loads:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opm_catalog_loads_total", Help: "Loads of the catalog, by result (success, failure)."}, []string{"catalog", "result"}),
	}
	labels := []string{"catalog", "handler", "code", "method"}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total", Help: "HTTP requests answered, by catalog (\"\" for the hub's own routes), route (handler), method and status code.",
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "http_request_duration_seconds", Help: "Time to answer HTTP requests, by catalog, route (handler), method and status code.",
			Buckets: latencyBuckets,
		}, labels),
		hub: hm,
	}
	m.reg.MustRegister(m.requests, m.duration, hm.packages, hm.bundles, hm.blobs, hm.size, hm.load, hm.loadedAt, hm.ready, hm.loads,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (hm *hubMetrics) setCatalog(name string, snap *cache.Snapshot) {
	hm.packages.WithLabelValues(name).Set(float64(len(snap.Index.Packages)))
	hm.bundles.WithLabelValues(name).Set(float64(len(snap.Index.Bundles)))
	if l := snap.Lines(); l != nil {
		hm.blobs.WithLabelValues(name).Set(float64(l.Len()))
		hm.size.WithLabelValues(name).Set(float64(l.Size()))
	}
}

func (hm *hubMetrics) loaded(name string, took time.Duration, at time.Time) {
	hm.load.WithLabelValues(name).Set(took.Seconds())
	hm.loadedAt.WithLabelValues(name).Set(float64(at.UnixNano()) / 1e9)
	hm.ready.WithLabelValues(name).Set(1)
	hm.loads.WithLabelValues(name, "success").Inc()
}
