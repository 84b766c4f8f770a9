//go:build !opm_lean

package action

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fastopm/fastopm/alpha/cluster"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/httpserver"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// Hub is `opm alpha hub`: several catalogs served over HTTP at once, with
// the answers that take all of them into account, and, with a cluster's
// state, `query cluster`'s answers over them (pkg/httpserver's Hub). The
// catalogs are loaded in parallel into the snapshots serve uses; an image
// catalog with a poll interval is polled for a new digest and swapped in
// when it changes, as catalogd polls a ClusterCatalog's image.
type Hub struct {
	Catalogs []HubCatalogFlag
	// State are the files, directories and must-gathers of a cluster's
	// objects; none (and no Cluster): the hub has no cluster answers.
	State []string
	// Cluster, when set instead of State, is the live cluster whose
	// objects are read (cluster.ReadCluster), and read again every
	// StateInterval (default DefaultStateInterval): a state that changed
	// is swapped in as a catalog is, a reading that fails leaves the
	// last good state served (stale).
	Cluster       *rest.Config
	StateInterval time.Duration
	// stateTimeout bounds each reading after the first (tests; default
	// the interval, at least a minute).
	stateTimeout time.Duration
	// BundleImages, when set, pulls the images of the bundles a what-if's
	// InstallPlan needs that the catalog gives by image only
	// (--pull-bundles), as query cluster's.
	BundleImages SourceResolver
	// GlobalNamespace is OLM's global catalog namespace ("": detected as
	// query cluster detects it).
	GlobalNamespace string
	// Sources resolves the catalogs' references (directories and
	// images); Digest resolves an image reference to its digest and the
	// reference by that digest (image.Digest), to poll it; nil: images
	// are pulled by the reference given, and not polled.
	Sources SourceResolver
	Digest  func(ctx context.Context, ref string) (digest, digestRef string, err error)
	// MaxFileSize is the largest catalog file read (0: the loader's
	// default).
	MaxFileSize int64
	// TempDir holds the snapshots' temporary files (os.TempDir() when
	// empty).
	TempDir string
	// RetryBase is the wait before an image whose load failed is tried
	// again, doubled at each failure up to 10 minutes (and the poll
	// interval); default 10 s.
	RetryBase time.Duration

	// HTTPAddr is the address to serve on; HTTPListener, when set, is
	// served instead (tests). HTTPTLSCert and HTTPTLSKey, both or
	// neither, serve HTTPS as serve does.
	HTTPAddr                string
	HTTPListener            net.Listener
	HTTPTLSCert, HTTPTLSKey string
	// Budget and MaxTerms bound each question (httpserver's defaults).
	Budget   time.Duration
	MaxTerms int

	Logger        *slog.Logger
	ShutdownGrace time.Duration
	// OnServing, when set, is called with the address once HTTP is
	// served (before the catalogs are loaded: /readyz says when they
	// are).
	OnServing func(addr net.Addr)
	// OnHub, when set, is called with the hub once it is made (tests).
	OnHub func(*httpserver.Hub)
}

// DefaultStateInterval is how often the hub reads a live cluster's state
// again.
const DefaultStateInterval = 3 * time.Minute

// HubCatalogFlag is one --catalog of the hub: [NAMESPACE/]NAME=REF
// [,priority=N][,pollIntervalMinutes=M][,name=HUBNAME].
type HubCatalogFlag struct {
	// Name is the catalog's name in the hub (its URLs, the page,
	// /api/v1/hub, the install answers): name=HUBNAME, else NAME.
	// SourceName is the name of the state's CatalogSource it gives the
	// content of: NAME, "" when it is Name (no name=, or the same).
	// Namespace, when given, is that CatalogSource's namespace.
	Name, SourceName, Namespace string
	Ref                         string
	Priority                    int
	PrioritySet                 bool
	// PollInterval is how often the image is polled for a new digest (0:
	// never): pollIntervalMinutes.
	PollInterval time.Duration
}

// hubCatalogForm is --catalog's form, as its errors name it.
const hubCatalogForm = "[NAMESPACE/]NAME=REF[,priority=N][,pollIntervalMinutes=M][,name=HUBNAME]"

// sourceName is the name of the CatalogSource the catalog gives the
// content of.
func (c HubCatalogFlag) sourceName() string { return cmp.Or(c.SourceName, c.Name) }

// flagName is the catalog as its --catalog names it: [NAMESPACE/]NAME,
// and ",name=HUBNAME" when the hub's name differs.
func (c HubCatalogFlag) flagName() string {
	s := c.sourceName()
	if c.Namespace != "" {
		s = c.Namespace + "/" + s
	}
	if c.SourceName != "" && c.SourceName != c.Name {
		s += ",name=" + c.Name
	}
	return s
}

// ParseHubCatalog reads [NAMESPACE/]NAME=REF[,priority=N]
// [,pollIntervalMinutes=M][,name=HUBNAME].
func ParseHubCatalog(s string) (HubCatalogFlag, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: expected %s", s, hubCatalogForm)
	}
	c := HubCatalogFlag{Name: name, Ref: rest}
	if ns, n, ok := strings.Cut(name, "/"); ok {
		if ns == "" || n == "" || strings.Contains(n, "/") {
			return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: the name is NAME or NAMESPACE/NAME", s)
		}
		c.Namespace, c.Name = ns, n
	}
	if err := httpserver.ValidCatalogName(c.Name); err != nil {
		return HubCatalogFlag{}, fmt.Errorf("--catalog %s: %w", s, err)
	}
	// Options from the end: a directory's name may hold a comma, rarely
	// one followed by KEY=.
	hubName := ""
	for {
		i := strings.LastIndex(c.Ref, ",")
		if i < 0 {
			break
		}
		k, v, ok := strings.Cut(c.Ref[i+1:], "=")
		if !ok {
			break
		}
		switch k {
		case "priority":
			n, err := strconv.Atoi(v)
			if errors.Is(err, strconv.ErrRange) {
				return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: priority %q is out of range (%d to %d)", s, v, math.MinInt, math.MaxInt)
			}
			if err != nil {
				return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: priority %q is not a whole number", s, v)
			}
			c.Priority, c.PrioritySet = n, true
		case "pollIntervalMinutes":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1<<20 {
				return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: pollIntervalMinutes %q is not a whole number of minutes from 1 to %d", s, v, 1<<20)
			}
			c.PollInterval = time.Duration(n) * time.Minute
		case "name":
			if hubName != "" {
				return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: name= is given twice", s)
			}
			if err := httpserver.ValidCatalogName(v); err != nil {
				return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: name=: %w", s, err)
			}
			hubName = v
		default:
			if _, err := os.Stat(c.Ref); err == nil {
				return finishHubCatalog(s, c, hubName)
			}
			return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: unknown option %q (the options are priority=N, pollIntervalMinutes=M and name=HUBNAME)%s",
				s, k, suggest.Hint(k, []string{"priority", "pollIntervalMinutes", "name"}))
		}
		c.Ref = c.Ref[:i]
	}
	return finishHubCatalog(s, c, hubName)
}

// finishHubCatalog checks the reference and gives the catalog its hub
// name.
func finishHubCatalog(s string, c HubCatalogFlag, hubName string) (HubCatalogFlag, error) {
	if hubName != "" && hubName != c.Name {
		c.SourceName, c.Name = c.Name, hubName
	}
	if c.Ref == "" {
		return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: no reference", s)
	}
	if c.PollInterval > 0 {
		// catalogd's rules for pollIntervalMinutes: images by tag only.
		if isDirRef(c.Ref) {
			return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: pollIntervalMinutes polls an image; %s is a directory", s, c.Ref)
		}
		if strings.Contains(c.Ref, "@") {
			return HubCatalogFlag{}, fmt.Errorf("invalid catalog %q: cannot specify pollIntervalMinutes while using digest-based image", s)
		}
	}
	return c, nil
}

// isDirRef says whether a catalog reference is a directory (an existing
// one, or one that can only be a path), as the resolver decides.
func isDirRef(ref string) bool {
	st, err := os.Stat(ref)
	return (err == nil && st.IsDir()) || looksLikePath(ref)
}

// Run serves until ctx is done, then stops gracefully and returns nil. It
// returns an error when the question is wrong (names, the state, TLS) or
// HTTP cannot be served; a catalog that cannot be loaded is not an error:
// the hub serves the others and says so (/readyz, the page).
func (a *Hub) Run(ctx context.Context) error {
	log := a.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if len(a.Catalogs) == 0 {
		return errors.New("give at least one catalog: --catalog NAME=REF")
	}
	if (a.HTTPTLSCert == "") != (a.HTTPTLSKey == "") {
		return errors.New("--http-tls-cert and --http-tls-key must be given together")
	}
	if len(a.State) > 0 && a.Cluster != nil {
		return errors.New("--state and --kubeconfig (--context) do not go together: the objects are read from files or from a cluster")
	}
	if a.StateInterval < 0 {
		return errors.New("--state-interval must not be negative")
	}
	seen := map[string]HubCatalogFlag{}
	for _, c := range a.Catalogs {
		if err := httpserver.ValidCatalogName(c.Name); err != nil {
			return fmt.Errorf("--catalog %s: %w", c.flagName(), err)
		}
		if c.SourceName != "" {
			if err := httpserver.ValidCatalogName(c.SourceName); err != nil {
				return fmt.Errorf("--catalog %s: %w", c.flagName(), err)
			}
		}
		if o, ok := seen[c.Name]; ok {
			return duplicateHubName(o, c)
		}
		seen[c.Name] = c
		if isDirRef(c.Ref) {
			if st, err := os.Stat(c.Ref); err != nil {
				return fmt.Errorf("--catalog %s: %w", c.Name, err)
			} else if !st.IsDir() {
				return fmt.Errorf("--catalog %s: %s is not a directory", c.Name, c.Ref)
			}
		}
	}
	hubCats := a.hubCatalogs()
	var ch *clusterHub
	if len(a.State) > 0 || a.Cluster != nil {
		var err error
		if ch, err = a.readState(ctx, log); err != nil {
			if ctx.Err() != nil {
				// Stopped while reading the state (a must-gather, a
				// live cluster): a graceful stop, nothing served yet.
				log.Info("stopped before serving")
				return nil
			}
			return err
		}
		hubCats = ch.catalogs
	}
	var stopping atomic.Bool
	opts := httpserver.HubOptions{Catalogs: hubCats, Ready: func() bool { return !stopping.Load() }, Metrics: httpserver.NewHubMetrics(),
		Logger: log, Budget: a.Budget, MaxTerms: a.MaxTerms}
	if ch != nil {
		opts.Cluster = ch
		if a.Cluster != nil {
			opts.StateInterval = a.stateInterval()
		}
	}
	hub, err := httpserver.NewHub(opts)
	if err != nil {
		return err
	}
	if a.OnHub != nil {
		a.OnHub(hub)
	}
	web, err := a.startHTTP(hub, log)
	if err != nil {
		return err
	}

	// The catalogs, in parallel; each image with a poll interval goes on
	// being polled.
	loadCtx, stopLoads := context.WithCancel(ctx)
	var loads sync.WaitGroup
	first := make(chan struct{}, len(a.Catalogs))
	for _, c := range a.Catalogs {
		loads.Add(1)
		go func() {
			defer loads.Done()
			a.keep(loadCtx, hub, c, log, first)
		}()
	}
	if ch != nil && a.Cluster != nil {
		loads.Add(1)
		go func() {
			defer loads.Done()
			a.followCluster(loadCtx, hub, ch, log)
		}()
	}
	var stopMemory func()
	go func() {
		for range a.Catalogs {
			select {
			case <-first:
			case <-loadCtx.Done():
				return
			}
		}
		freeOSMemory()
		log.Info("every catalog's first load is done", "catalogs", len(a.Catalogs))
	}()
	defer func() {
		if stopMemory != nil {
			stopMemory()
		}
	}()
	stopMemory = limitServeMemory(100 * time.Millisecond)

	var webErr error
	select {
	case webErr = <-web.served:
	case <-ctx.Done():
	}
	log.Info("shutting down the hub")
	stopping.Store(true)
	stopLoads()
	grace := a.ShutdownGrace
	if grace <= 0 {
		grace = 500 * time.Millisecond
	}
	if webErr == nil {
		web.stop(grace)
		webErr = <-web.served
	}
	loads.Wait()
	hub.Close()
	if webErr != nil {
		return fmt.Errorf("serve HTTP: %w", webErr)
	}
	return nil
}

// duplicateHubName is the error of two catalogs c and o of one name in
// the hub: it says to give one of them a name of its own with name=.
func duplicateHubName(o, c HubCatalogFlag) error {
	if c.SourceName == "" && o.SourceName == "" {
		// The same NAME twice: two CatalogSources of one name in two
		// namespaces, as per-namespace catalogs often are, or a mistake.
		ex := c.Name + "-2"
		if c.Namespace != "" && c.Namespace != o.Namespace {
			ex = c.Name + "-" + c.Namespace
		}
		return fmt.Errorf("--catalog %s: two catalogs are named %q: give each a name of its own in the hub with name=HUBNAME (e.g. --catalog %s=REF,name=%s)",
			c.flagName(), c.Name, c.flagName(), ex)
	}
	return fmt.Errorf("--catalog %s: two catalogs are named %q in the hub (--catalog %s is too): give each a name of its own with name=HUBNAME",
		c.flagName(), c.Name, o.flagName())
}

// startHTTP serves the hub's handler, with TLS as serve has it.
func (a *Hub) startHTTP(hub *httpserver.Hub, log *slog.Logger) (*webServer, error) {
	hsrv := hub.HTTPServer()
	if err := withTLS(hsrv, a.HTTPTLSCert, a.HTTPTLSKey); err != nil {
		return nil, err
	}
	w, lis, scheme, err := listenAndServe(hsrv, a.HTTPListener, a.HTTPAddr, log)
	if err != nil {
		return nil, err
	}
	log.Info("serving the hub over HTTP", "address", lis.Addr().String(), "scheme", scheme, "catalogs", len(a.Catalogs), "url", browseURL(scheme, a.HTTPAddr, lis.Addr()))
	if a.OnServing != nil {
		a.OnServing(lis.Addr())
	}
	return w, nil
}

// keep loads a catalog and, for an image, keeps it up to date: its
// digest is resolved at every poll (catalogd's pollIntervalMinutes: the
// next poll is the interval, with 1% of jitter, after the last that
// worked), and a new digest is loaded and swapped in. A load that fails
// leaves the last good snapshot served and is tried again after a wait
// that doubles at each failure. A directory is read once. first gets one
// value after the first attempt.
func (a *Hub) keep(ctx context.Context, hub *httpserver.Hub, c HubCatalogFlag, log *slog.Logger, first chan<- struct{}) {
	isImage := !isDirRef(c.Ref)
	var served string // the digest served
	failures := 0
	once := sync.OnceFunc(func() { first <- struct{}{} })
	defer once()
	for {
		start := time.Now()
		digest, ref := "", c.Ref
		var err error
		if isImage && a.Digest != nil {
			digest, ref, err = a.Digest(ctx, c.Ref)
		}
		changed := err == nil && (served == "" || digest != served)
		if changed {
			var snap *cache.Snapshot
			if snap, err = a.load(ctx, c, ref, log); err == nil {
				if err = hub.Set(c.Name, snap, digest, time.Since(start)); err != nil {
					snap.Close()
				} else {
					served = digest
					if served == "" {
						served = "loaded" // an image pulled without a digest: never polled
					}
				}
			}
		}
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		if err != nil {
			failures++
			hub.Failed(c.Name, err)
		} else {
			failures = 0
			if !changed {
				log.Debug("polled a catalog: its digest is the same", "catalog", c.Name, "digest", digest)
			}
		}
		once()
		var wait time.Duration
		switch {
		case !isImage:
			return
		case err != nil:
			wait = a.retryWait(failures)
			if c.PollInterval > 0 {
				wait = min(wait, c.PollInterval)
			}
		case c.PollInterval == 0 || a.Digest == nil:
			return
		default:
			wait = jitter(c.PollInterval)
		}
		if c.PollInterval > 0 {
			hub.Polled(c.Name, now, now.Add(wait))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// retryWait is the wait before the n-th attempt after failures.
func (a *Hub) retryWait(n int) time.Duration {
	base := a.RetryBase
	if base <= 0 {
		base = 10 * time.Second
	}
	d := base
	for i := 1; i < n && d < 10*time.Minute; i++ {
		d *= 2
	}
	return min(d, 10*time.Minute)
}

// jitter is catalogd's wait.Jitter(d, 0.01): d and up to 1% more.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Float64()*0.01*float64(d))
}

// load reads a catalog into a snapshot with its JSON lines, as serve
// --http-addr's cold start does.
func (a *Hub) load(ctx context.Context, c HubCatalogFlag, ref string, log *slog.Logger) (*cache.Snapshot, error) {
	src, err := resolveCatalog(ctx, a.Sources, ref)
	if err != nil {
		return nil, err
	}
	if src.Close != nil {
		defer src.Close()
	}
	if src.FS == nil {
		return nil, fmt.Errorf("%s is not a catalog", ref)
	}
	l := log.With("catalog", c.Name)
	walk := []declcfg.WalkOption{declcfg.WithMaxFileSize(a.MaxFileSize), declcfg.WithWarnings(func(w *declcfg.Error) { l.Warn(w.Error()) })}
	snap, inMemory, err := LoadServeTemp(ctx, src.FS, a.TempDir, true, walk...)
	if err != nil {
		return nil, err
	}
	if inMemory {
		l.Warn("no writable temporary directory: keeping the catalog's answers in memory")
	}
	return snap, nil
}

// hubCatalogs are the catalogs of the flags, none mapped to a
// CatalogSource yet.
func (a *Hub) hubCatalogs() []httpserver.HubCatalog {
	cats := make([]httpserver.HubCatalog, len(a.Catalogs))
	for i, c := range a.Catalogs {
		cats[i] = httpserver.HubCatalog{Name: c.Name, Ref: c.Ref, Priority: c.Priority, PollIntervalMinutes: int(c.PollInterval / time.Minute)}
	}
	return cats
}

// readState reads the cluster's state and maps each catalog to its
// CatalogSource (mapCatalogs).
func (a *Hub) readState(ctx context.Context, log *slog.Logger) (*clusterHub, error) {
	state, err := a.readObjects(ctx)
	if err != nil {
		return nil, err
	}
	global := a.GlobalNamespace
	if global == "" {
		global = globalNamespaceOf(state)
	}
	cats, err := a.mapCatalogs(state, nil, log)
	if err != nil {
		return nil, err
	}
	ch := newClusterHub(state, global, cats)
	if a.BundleImages != nil {
		ch.bundles = &bundlePuller{images: a.BundleImages, pulled: map[string]*pulledBundle{}}
	}
	return ch, nil
}

// mapCatalogs maps each catalog to the state's CatalogSource it gives the
// content of: by name, or NAMESPACE/NAME when the flag gives it; its
// priority the CatalogSource's unless the flag gives one. A name that
// several CatalogSources have, and a CatalogSource two catalogs would
// give, are errors. prev is the mapping served (nil at the first
// reading): at the first reading a NAMESPACE/NAME the state lacks is an
// error (the question is wrong), and a catalog that no CatalogSource has
// is said once; at a later one, a CatalogSource no longer in the cluster
// was deleted: its catalog is left out of the cluster's answers, as OLM
// leaves it out. Each change from prev is logged.
func (a *Hub) mapCatalogs(state *cluster.State, prev []httpserver.HubCatalog, log *slog.Logger) ([]httpserver.HubCatalog, error) {
	cats := a.hubCatalogs()
	byName := map[string][]string{}
	var keys []string
	for _, cs := range state.CatalogSources {
		key := cs.Namespace + "/" + cs.Name
		keys = append(keys, key)
		byName[cs.Name] = append(byName[cs.Name], key)
	}
	for i, f := range a.Catalogs {
		// The CatalogSource's name, not the hub's (name=), at every
		// reading.
		src, key := f.sourceName(), ""
		if f.Namespace != "" {
			key = f.Namespace + "/" + src
			if state.CatalogSource(f.Namespace, src) == nil {
				if prev == nil {
					return nil, fmt.Errorf("--catalog %s: the state has no CatalogSource %s (its CatalogSources: %s)%s", f.flagName(), key, list(keys), suggest.Hint(key, keys))
				}
				key = ""
			}
		} else {
			switch ks := byName[src]; len(ks) {
			case 0:
				if prev == nil {
					log.Warn("the catalog is no CatalogSource of the state: the cluster's answers leave it out", "catalog", f.Name, "catalogSource", src, "catalogSources", list(keys))
				}
			case 1:
				key = ks[0]
			default:
				return nil, fmt.Errorf("--catalog %s: CatalogSources %s have that name: give NAMESPACE/NAME", f.flagName(), strings.Join(ks, " and "))
			}
		}
		if key == "" {
			continue
		}
		for j := range i {
			if cats[j].CatalogSource == key {
				return nil, fmt.Errorf("--catalog %s: CatalogSource %s is given twice", f.flagName(), key)
			}
		}
		cats[i].CatalogSource = key
		if !f.PrioritySet {
			cats[i].Priority = catalogSourceOf(state, key).Spec.Priority
		}
	}
	for i, c := range cats {
		if prev == nil || c == prev[i] {
			continue
		}
		p := prev[i]
		switch {
		case c.CatalogSource == "":
			log.Warn("the catalog's CatalogSource is no longer in the cluster: the cluster's answers leave it out", "catalog", c.Name,
				"catalogSource", p.CatalogSource, "priority", c.Priority)
		case c.CatalogSource != p.CatalogSource:
			log.Info("the catalog gives another CatalogSource's content", "catalog", c.Name, "catalogSource", c.CatalogSource,
				"was", cmp.Or(p.CatalogSource, "none"), "priority", c.Priority, "priorityWas", p.Priority)
		default:
			log.Info("the catalog's priority changed", "catalog", c.Name, "catalogSource", c.CatalogSource, "priority", c.Priority, "priorityWas", p.Priority)
		}
	}
	return cats, nil
}

// readObjects reads the cluster's objects: the files of State, or the
// live Cluster.
func (a *Hub) readObjects(ctx context.Context) (*cluster.State, error) {
	if a.Cluster != nil {
		return cluster.ReadCluster(ctx, a.Cluster)
	}
	return cluster.Read(ctx, a.State...)
}

// stateReadTimeout bounds each reading of a live cluster after the
// first: the interval, and at least a minute.
func (a *Hub) stateReadTimeout() time.Duration {
	if a.stateTimeout > 0 {
		return a.stateTimeout
	}
	return max(a.stateInterval(), time.Minute)
}

func (a *Hub) stateInterval() time.Duration {
	if a.StateInterval > 0 {
		return a.StateInterval
	}
	return DefaultStateInterval
}

// followCluster reads the live cluster's state again every
// StateInterval until ctx is done, each reading within
// stateReadTimeout. A state that changed is served from then on, with
// the catalogs mapped to its CatalogSources anew (mapCatalogs: a
// CatalogSource created, deleted, moved to another namespace or given
// another priority is taken, as OLM takes it at its next sync); one that
// did not change is only recorded; a reading that fails, or whose
// CatalogSources no longer map to the catalogs (a name two of them have
// now), leaves the last good state served, and says so.
func (a *Hub) followCluster(ctx context.Context, hub *httpserver.Hub, first *clusterHub, log *slog.Logger) {
	last, served := stateFingerprint(first.state), first
	for {
		t := time.NewTimer(a.stateInterval())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		// A reading has a bound: an API server that accepts the requests
		// and never answers (client-go sets no deadline of its own) would
		// otherwise keep the last state served as if it were read, and
		// the hub would never say it is stale.
		bound := a.stateReadTimeout()
		rctx, cancel := context.WithTimeout(ctx, bound)
		state, err := a.readObjects(rctx)
		timedOut := rctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if timedOut {
				err = fmt.Errorf("the reading did not finish within %s: %w", bound, err)
			}
			hub.ClusterFailed(err)
			continue
		}
		fp := stateFingerprint(state)
		if fp == last {
			hub.ClusterUnchanged()
			log.Debug("read the cluster state again: it is the same", "state", state.Summary())
			continue
		}
		cats, err := a.mapCatalogs(state, served.catalogs, log)
		if err != nil {
			hub.ClusterFailed(fmt.Errorf("the cluster's CatalogSources no longer map to the hub's catalogs: %w", err))
			continue
		}
		ch := newClusterHub(state, first.global, cats)
		ch.bundles = first.bundles
		if err := hub.SetCluster(ch, cats); err != nil {
			return
		}
		last, served = fp, ch
		log.Info("the cluster state changed: serving it", "state", state.Summary())
	}
}

// stateFingerprint is a digest of the state's objects, to tell a
// reading that changed nothing.
func stateFingerprint(s *cluster.State) [sha256.Size]byte {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, v := range []any{s.Namespaces, s.CatalogSources, s.Subscriptions, s.CSVs, s.OperatorGroups, s.InstallPlans, s.CRDs, s.Copied} {
		if err := enc.Encode(v); err != nil {
			// Not expected of API objects; a state that cannot be
			// compared is taken as changed.
			_, _ = fmt.Fprintf(h, "%p", s)
		}
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// clusterHub is the cluster's state as the hub shows it: httpserver's
// ClusterState over query cluster's answers.
type clusterHub struct {
	// bundles pulls the bundle images of what-ifs (nil: not pulled).
	bundles  *bundlePuller
	state    *cluster.State
	global   string
	catalogs []httpserver.HubCatalog
	overview *HubClusterOverview
	byPkg    map[string][]httpserver.InstalledRef
}

// HubClusterOverview is what the hub's page shows of the state.
type HubClusterOverview struct {
	State           string `json:"state"`
	GlobalNamespace string `json:"globalNamespace"`
	// Namespaces are every namespace the state names, with what it holds.
	Namespaces []HubNamespace `json:"namespaces"`
	// CatalogSources are the state's, each with the hub catalog that
	// gives its content ("": none, OLM cannot reach it).
	CatalogSources []HubCatalogSource `json:"catalogSources"`
}

// HubNamespace is a namespace of the state.
type HubNamespace struct {
	Name           string `json:"name"`
	Subscriptions  int    `json:"subscriptions"`
	CSVs           int    `json:"csvs"`
	OperatorGroups int    `json:"operatorGroups"`
	InstallPlans   int    `json:"installPlans"`
}

// HubCatalogSource is a CatalogSource of the state.
type HubCatalogSource struct {
	CatalogSource string `json:"catalogSource"`
	Priority      int    `json:"priority"`
	Image         string `json:"image,omitempty"`
	// Catalog is the hub's catalog of its content; "" when none is
	// given: OLM cannot reach it.
	Catalog string `json:"catalog,omitempty"`
}

func newClusterHub(state *cluster.State, global string, cats []httpserver.HubCatalog) *clusterHub {
	c := &clusterHub{state: state, global: global, catalogs: cats, byPkg: map[string][]httpserver.InstalledRef{}}
	o := &HubClusterOverview{State: state.Summary(), GlobalNamespace: global, Namespaces: []HubNamespace{}, CatalogSources: []HubCatalogSource{}}
	counts := map[string]*HubNamespace{}
	ns := func(name string) *HubNamespace {
		if counts[name] == nil {
			counts[name] = &HubNamespace{Name: name}
		}
		return counts[name]
	}
	for _, n := range state.Namespaces {
		ns(n.Name)
	}
	for _, s := range state.Subscriptions {
		ns(s.Namespace).Subscriptions++
	}
	for _, x := range state.CSVs {
		ns(x.Namespace).CSVs++
	}
	for _, g := range state.OperatorGroups {
		ns(g.Namespace).OperatorGroups++
	}
	for _, p := range state.InstallPlans {
		ns(p.Namespace).InstallPlans++
	}
	for _, name := range slices.Sorted(func(y func(string) bool) {
		for k := range counts {
			if !y(k) {
				return
			}
		}
	}) {
		o.Namespaces = append(o.Namespaces, *counts[name])
	}
	for _, cs := range state.CatalogSources {
		key := cs.Namespace + "/" + cs.Name
		hc := HubCatalogSource{CatalogSource: key, Priority: cs.Spec.Priority, Image: cs.Spec.Image}
		for _, h := range cats {
			if h.CatalogSource == key {
				hc.Catalog, hc.Priority = h.Name, h.Priority
			}
		}
		o.CatalogSources = append(o.CatalogSources, hc)
	}
	c.overview = o
	for _, s := range state.Subscriptions {
		if s.Spec == nil || s.Status.InstalledCSV == "" {
			continue
		}
		c.byPkg[s.Spec.Package] = append(c.byPkg[s.Spec.Package], httpserver.InstalledRef{Namespace: s.Namespace, CSV: s.Status.InstalledCSV,
			Subscription: s.Name, Source: s.Spec.CatalogSourceNamespace + "/" + s.Spec.CatalogSource})
	}
	return c
}

func (c *clusterHub) Overview() any { return c.overview }

func (c *clusterHub) InstalledPackages() map[string][]httpserver.InstalledRef { return c.byPkg }

// Answers are the cluster's answers over the catalogs a hub serves: each
// CatalogSource with a catalog served has its content, the others none.
func (c *clusterHub) Answers(_ context.Context, cats []httpserver.WorldCatalog) (httpserver.ClusterAnswers, error) {
	cc := &clusterCatalogs{byKey: cluster.Catalogs{}, read: map[string]bundleReader{}}
	served := map[string]httpserver.WorldCatalog{}
	for _, wc := range cats {
		if wc.CatalogSource == "" || wc.Catalog == nil {
			continue
		}
		cat := wc.Catalog
		// OLM names a CatalogSource's bundles by the CatalogSource
		// (a Subscription's spec.source): a catalog served under a name
		// of its own (name=) answers under its CatalogSource's.
		if _, name, _ := strings.Cut(wc.CatalogSource, "/"); cat.Name != name {
			cat = cat.Renamed(name)
		}
		cc.byKey[wc.CatalogSource] = cat
		cc.read[wc.CatalogSource] = bundleReader(wc.Bundles)
		served[wc.CatalogSource] = wc
	}
	w := &clusterWorld{hub: c, cats: cc}
	for _, cs := range c.state.CatalogSources {
		key := cs.Namespace + "/" + cs.Name
		rc := ClusterCatalog{CatalogSource: key, Priority: cs.Spec.Priority, Image: cs.Spec.Image}
		for _, h := range c.catalogs {
			if h.CatalogSource == key {
				rc.Priority = h.Priority
			}
		}
		if wc, ok := served[key]; ok {
			rc.Ref = wc.Ref
		}
		w.catalogs = append(w.catalogs, rc)
	}
	return w, nil
}

// clusterWorld answers over one set of catalogs; the answer to no
// question in particular (every namespace, no plan) is made once.
type clusterWorld struct {
	hub      *clusterHub
	cats     *clusterCatalogs
	catalogs []ClusterCatalog

	// base and inst are kept once made, unless undecided (a bound
	// reached on a busy machine: the next request answers again); mu
	// makes requests asking meanwhile wait for the one answering.
	baseMu  sync.Mutex
	base    *ClusterReport
	baseErr error

	instMu  sync.Mutex
	inst    *HubInstalled
	instErr error
}

// Report answers q as `opm alpha query cluster -o json` does.
func (w *clusterWorld) Report(ctx context.Context, q httpserver.ClusterQuestion) (*httpserver.ClusterResult, error) {
	var rep *ClusterReport
	var err error
	if q.Namespace == "" && len(q.Subscribe) == 0 && !q.Plan {
		rep, err = w.baseReport(q)
	} else {
		rep, err = w.report(ctx, q)
	}
	if err != nil {
		return nil, err
	}
	return &httpserver.ClusterResult{Answer: rep, Undecided: rep.Undecided()}, nil
}

func (w *clusterWorld) baseReport(q httpserver.ClusterQuestion) (*ClusterReport, error) {
	w.baseMu.Lock()
	defer w.baseMu.Unlock()
	if w.base != nil || w.baseErr != nil {
		return w.base, w.baseErr
	}
	// Not a request's context: others wait for the same answer.
	rep, err := w.report(context.Background(), q)
	if err == nil && rep.Undecided() {
		return rep, nil
	}
	w.base, w.baseErr = rep, err
	return rep, err
}

func (w *clusterWorld) report(ctx context.Context, q httpserver.ClusterQuestion) (*ClusterReport, error) {
	qc := &QueryCluster{Namespace: q.Namespace, Subscribe: q.Subscribe, Plan: q.Plan, Limits: q.Limits, GlobalNamespace: w.hub.global}
	if b := w.hub.bundles; b != nil {
		qc.BundleImages, qc.pulled = b.images, b.pull
	}
	rep := &ClusterReport{State: w.hub.state.Summary(), GlobalNamespace: w.hub.global, Catalogs: w.catalogs}
	opts := cluster.ResolveOptions{GlobalNamespace: w.hub.global, Limits: q.Limits}
	if err := qc.answer(ctx, w.hub.state, w.cats, opts, rep); err != nil {
		var ne *namespaceError
		var se *subscribeError
		switch {
		case errors.As(err, &ne):
			return nil, &httpserver.QuestionError{Code: http.StatusNotFound, Err: err}
		case errors.As(err, &se):
			return nil, &httpserver.QuestionError{Code: http.StatusBadRequest, Err: err}
		}
		return nil, err
	}
	return rep, nil
}

// bundlePuller pulls the bundle images of the hub's what-ifs, each once
// while the hub runs (a bundle image is referred to by digest, as OPM
// writes catalogs, or stands for one release); an image whose pull
// failed is tried again by the next question.
type bundlePuller struct {
	images SourceResolver
	mu     sync.Mutex
	pulled map[string]*pulledBundle
}

type pulledBundle struct {
	done chan struct{}
	b    *cluster.PlanBundle
	err  error
}

func (p *bundlePuller) pull(ctx context.Context, image string) (*cluster.PlanBundle, error) {
	p.mu.Lock()
	e := p.pulled[image]
	if e == nil {
		e = &pulledBundle{done: make(chan struct{})}
		p.pulled[image] = e
		p.mu.Unlock()
		e.b, e.err = pullPlanBundle(ctx, p.images, image)
		if e.err != nil {
			p.mu.Lock()
			delete(p.pulled, image)
			p.mu.Unlock()
		}
		close(e.done)
		return e.b, e.err
	}
	p.mu.Unlock()
	select {
	case <-e.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.err != nil {
		// The pull of another question failed (or was canceled with it):
		// this one tries on its own.
		return p.pull(ctx, image)
	}
	return e.b, nil
}

// HubInstalled is /api/v1/cluster/installed: every operator the state
// has installed (or subscribed to), with what OLM's next sync does to it.
type HubInstalled struct {
	State           string              `json:"state"`
	GlobalNamespace string              `json:"globalNamespace"`
	Operators       []HubInstalledEntry `json:"operators"`
}

// HubInstalledEntry is an installed CSV, or a Subscription whose CSV is
// not installed yet.
type HubInstalledEntry struct {
	Namespace string `json:"namespace"`
	// CSV is the installed CSV ("": the Subscription has installed
	// nothing yet), Version its version, Phase its phase.
	CSV     string `json:"csv,omitempty"`
	Version string `json:"version,omitempty"`
	Phase   string `json:"phase,omitempty"`
	Package string `json:"package,omitempty"`
	// Subscription is the one that has it; nil for a CSV no Subscription
	// names (OLM keeps it as it is).
	Subscription *HubSubscription `json:"subscription,omitempty"`
	// Next is what the next sync does to the Subscription: its outcome
	// (stays, upgrades, installs, blocked, waiting, not resolved), the
	// CSV it moves to, and why it is blocked.
	Next *cluster.SubscriptionOutcome `json:"next,omitempty"`
	// OperatorGroup is the verdict of the OperatorGroup rules for the
	// CSV.
	OperatorGroup *cluster.GroupVerdict `json:"operatorGroup,omitempty"`
	// InstallPlans are the namespace's InstallPlans not yet complete
	// that name the CSV (or the Subscription's).
	InstallPlans []HubInstallPlan `json:"installPlans,omitempty"`
}

// HubSubscription is a Subscription of the state.
type HubSubscription struct {
	Name     string `json:"name"`
	Channel  string `json:"channel,omitempty"`
	Source   string `json:"source"`
	Approval string `json:"approval,omitempty"`
	// Catalog is the hub's catalog of the source ("": none given, OLM
	// cannot reach it).
	Catalog string `json:"catalog,omitempty"`
}

// HubInstallPlan is an InstallPlan waiting or running.
type HubInstallPlan struct {
	Name     string   `json:"name"`
	Phase    string   `json:"phase,omitempty"`
	Approval string   `json:"approval,omitempty"`
	Approved bool     `json:"approved"`
	CSVs     []string `json:"csvs,omitempty"`
}

// Installed answers the installed view.
func (w *clusterWorld) Installed(ctx context.Context) (any, error) {
	w.instMu.Lock()
	defer w.instMu.Unlock()
	if w.inst != nil || w.instErr != nil {
		return w.inst, w.instErr
	}
	inst, undecided, err := w.installed()
	if err == nil && undecided {
		return inst, nil
	}
	w.inst, w.instErr = inst, err
	return inst, err
}

// installed makes the installed view; undecided when the answer it is
// made of is.
func (w *clusterWorld) installed() (*HubInstalled, bool, error) {
	rep, err := w.baseReport(httpserver.ClusterQuestion{})
	if err != nil {
		return nil, false, err
	}
	st := w.hub.state
	out := &HubInstalled{State: rep.State, GlobalNamespace: rep.GlobalNamespace, Operators: []HubInstalledEntry{}}
	outcome := map[[2]string]cluster.SubscriptionOutcome{}
	verdict := map[[2]string]*cluster.GroupVerdict{}
	for _, n := range rep.Namespaces {
		for _, o := range n.Subscriptions {
			outcome[[2]string{n.Namespace, o.Name}] = o
		}
		for _, v := range n.OperatorGroups {
			verdict[[2]string{v.Namespace, v.CSV}] = v
		}
	}
	hubName := map[string]string{}
	for _, h := range w.hub.catalogs {
		if h.CatalogSource != "" {
			hubName[h.CatalogSource] = h.Name
		}
	}
	plans := func(ns string, names ...string) []HubInstallPlan {
		var ps []HubInstallPlan
		for _, ip := range st.InstallPlansIn(ns) {
			if ip.Status.Phase == "Complete" || ip.Status.Phase == "Failed" {
				continue
			}
			if !slices.ContainsFunc(names, func(n string) bool { return n != "" && slices.Contains(ip.Spec.ClusterServiceVersionNames, n) }) {
				continue
			}
			ps = append(ps, HubInstallPlan{Name: ip.Name, Phase: string(ip.Status.Phase), Approval: string(ip.Spec.Approval),
				Approved: ip.Spec.Approved, CSVs: ip.Spec.ClusterServiceVersionNames})
		}
		return ps
	}
	named := map[[2]string]bool{}
	for _, s := range st.Subscriptions {
		if s.Spec == nil {
			continue
		}
		src := s.Spec.CatalogSourceNamespace + "/" + s.Spec.CatalogSource
		e := HubInstalledEntry{Namespace: s.Namespace, CSV: s.Status.InstalledCSV, Package: s.Spec.Package,
			Subscription: &HubSubscription{Name: s.Name, Channel: s.Spec.Channel, Source: src, Approval: string(s.Spec.InstallPlanApproval), Catalog: hubName[src]}}
		if o, ok := outcome[[2]string{s.Namespace, s.Name}]; ok {
			e.Next = &o
		}
		if csv := st.CSV(s.Namespace, s.Status.InstalledCSV); csv != nil {
			e.Version, e.Phase = csv.Spec.Version.String(), string(csv.Status.Phase)
			named[[2]string{s.Namespace, csv.Name}] = true
		}
		e.OperatorGroup = verdict[[2]string{s.Namespace, s.Status.InstalledCSV}]
		e.InstallPlans = plans(s.Namespace, s.Status.InstalledCSV, s.Status.CurrentCSV)
		out.Operators = append(out.Operators, e)
	}
	for _, csv := range st.CSVs {
		if named[[2]string{csv.Namespace, csv.Name}] {
			continue
		}
		out.Operators = append(out.Operators, HubInstalledEntry{Namespace: csv.Namespace, CSV: csv.Name, Version: csv.Spec.Version.String(),
			Phase: string(csv.Status.Phase), OperatorGroup: verdict[[2]string{csv.Namespace, csv.Name}], InstallPlans: plans(csv.Namespace, csv.Name)})
	}
	slices.SortStableFunc(out.Operators, func(a, b HubInstalledEntry) int {
		if a.Namespace != b.Namespace {
			return strings.Compare(a.Namespace, b.Namespace)
		}
		return strings.Compare(a.Package+"/"+a.CSV, b.Package+"/"+b.CSV)
	})
	return out, rep.Undecided(), nil
}
