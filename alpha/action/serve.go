package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/server"
	"github.com/fastopm/fastopm/pkg/version"
)

// Enforcement says whether a cache that cannot be used is an error.
type Enforcement int

// Enforcement modes of --cache-enforce-integrity.
const (
	// EnforceDefault is upstream's default: enforce when a cache
	// directory is given and --cache-only is not. A cache directory that
	// is empty or missing is then built, with a warning, instead of
	// failing: a pod must not crash-loop because an image shipped no
	// cache.
	EnforceDefault Enforcement = iota
	// EnforceOn refuses to start without a valid cache (and checks the
	// cache with --cache-only).
	EnforceOn
	// EnforceOff rebuilds a cache that cannot be used.
	EnforceOff
)

// Serve serves a file-based catalog over gRPC, as `opm serve` does: the
// Registry API (pkg/server) answered from a serve cache (pkg/cache), built
// from the catalog or loaded from a cache directory.
type Serve struct {
	// CatalogDir is the catalog's root directory.
	CatalogDir string
	// Port is the TCP port to listen on (all interfaces), used when
	// Listener is nil.
	Port string
	// Listener, when set, is served instead of Port (tests).
	Listener net.Listener

	// CacheDir keeps the serve cache; empty builds it in a temporary file
	// that is gone when the process ends.
	CacheDir string
	// CacheOnly builds (or, with enforcement, checks) the cache and
	// returns without serving.
	CacheOnly bool
	// Enforce is --cache-enforce-integrity.
	Enforce Enforcement
	// CacheHTTP is --cache-http: a cache built by this run also carries
	// the catalog as JSON lines, what the HTTP side serves, so that a
	// later `serve --http-addr` over it need not derive them. With
	// CacheOnly, an existing cache without them is not what was asked
	// for: it is rebuilt (refused with enforcement). HTTPAddr (or
	// HTTPListener) counts as CacheHTTP for the cache. It needs CacheDir.
	CacheHTTP bool
	// TempDir holds the temporary answer file of a cold start
	// (os.TempDir() when empty).
	TempDir string
	// MaxFileSize is the largest catalog file read, in bytes (0: the
	// loader's default, declcfg.DefaultMaxFileSize; < 0: no limit).
	MaxFileSize int64

	// PprofAddr serves net/http/pprof when not empty.
	PprofAddr string
	// PprofCaptureProfiles records a CPU profile of the start-up, served
	// at /debug/pprof/startup/cpu once the catalog is served.
	PprofCaptureProfiles bool
	// TerminationLog receives the error that ends the command (Kubernetes
	// shows it as the container's termination message). Empty disables.
	TerminationLog string

	// HTTPAddr, when not empty, serves the catalog over HTTP as well
	// (pkg/httpserver: catalogd's API, JSON answers, metrics, a web page)
	// on that address; HTTPListener, when set, is served instead (tests).
	HTTPAddr     string
	HTTPListener net.Listener
	// HTTPCatalogName is the catalog's name in catalogd's URLs
	// (/catalogs/NAME/api/v1/all); default the catalog directory's name.
	HTTPCatalogName string
	// HTTPTLSCert and HTTPTLSKey, both or neither, serve HTTPS.
	HTTPTLSCert, HTTPTLSKey string

	// Logger receives the logs; nil discards them.
	Logger *slog.Logger
	// ShutdownGrace bounds how long in-flight calls may run after a stop
	// signal (default 500ms: every command stops within a second of a
	// signal, pkg/interrupt).
	ShutdownGrace time.Duration
	// OnServing, when set, is called with the listening address once the
	// catalog is served.
	OnServing func(addr net.Addr)
}

// Run serves until ctx is done (a stop signal), then stops gracefully and
// returns nil. It returns an error, also written to the termination log,
// when the catalog cannot be served.
func (s Serve) Run(ctx context.Context) (err error) {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	defer func() {
		if err != nil && s.TerminationLog != "" {
			if werr := os.WriteFile(s.TerminationLog, []byte(err.Error()+"\n"), 0o644); werr != nil {
				log.Warn("unable to write the termination log", "path", s.TerminationLog, "error", werr)
			}
		}
	}()

	prof, err := startProfiler(s.PprofAddr, s.PprofCaptureProfiles, log)
	if err != nil {
		return fmt.Errorf("could not start pprof endpoint: %w", err)
	}
	defer prof.stop()

	if s.Enforce == EnforceOn && s.CacheDir == "" {
		return errors.New("--cache-dir must be specified with --cache-enforce-integrity")
	}
	if s.CacheHTTP && s.CacheDir == "" {
		// Without a cache directory the cache is a temporary file, gone
		// when opm exits: storing the lines in it would do nothing
		// (--http-addr derives them anyway). Refused as upstream
		// refuses --cache-enforce-integrity without it.
		return errors.New("--cache-dir must be specified with --cache-http")
	}
	if err := s.checkFlags(); err != nil {
		return err
	}
	st, err := os.Stat(s.CatalogDir)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("catalog %q is not a directory", s.CatalogDir)
	}
	log = log.With("configs", s.CatalogDir)

	start := time.Now()
	snap, err := s.load(ctx, os.DirFS(s.CatalogDir), log)
	if err != nil {
		if ctx.Err() != nil && !s.CacheOnly {
			// Stopped while loading: a graceful stop, nothing to serve.
			log.Info("stopped before serving")
			return nil
		}
		if berr := BundleNotCatalog(s.CatalogDir); berr != nil {
			return berr
		}
		return err
	}
	defer snap.Close()
	if s.CacheOnly {
		return nil
	}

	lis := s.Listener
	if lis == nil {
		if lis, err = net.Listen("tcp", ":"+s.Port); err != nil {
			return fmt.Errorf("failed to listen: %w", err)
		}
	}
	var (
		side  *httpSide
		sopts = server.Options{Logger: log}
	)
	if s.httpOn() {
		if side, err = newHTTPSide(&sopts); err != nil {
			lis.Close()
			return err
		}
	}
	srv, err := server.New(snap, sopts)
	if err != nil {
		lis.Close()
		return err
	}
	var web *webServer
	if side != nil {
		if web, err = side.start(s, snap, srv, log); err != nil {
			lis.Close()
			return err
		}
		defer limitServeMemory(100 * time.Millisecond)()
	}
	srv.Health.SetServing(true)
	served := make(chan error, 1)
	go func() { served <- srv.GRPC.Serve(lis) }()
	prof.stopCapture()
	log.Info("serving registry", "port", portOf(lis.Addr()), "packages", len(snap.Index.Packages),
		"bundles", len(snap.Index.Bundles), "startup", time.Since(start).Round(time.Millisecond))
	if side != nil {
		side.loaded(time.Since(start))
	}
	if s.OnServing != nil {
		s.OnServing(lis.Addr())
	}

	var webErr <-chan error
	if web != nil {
		webErr = web.served
	}
	select {
	case err := <-served:
		web.stop(time.Second)
		return fmt.Errorf("serve: %w", err)
	case err := <-webErr:
		srv.Stop(time.Second)
		<-served
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down server")
	grace := s.ShutdownGrace
	if grace <= 0 {
		grace = 500 * time.Millisecond
	}
	// gRPC health turns NOT_SERVING first, so /readyz fails while both
	// servers drain.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); web.stop(grace) }()
	srv.Stop(grace)
	wg.Wait()
	if err := <-served; err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// checkFlags refuses flags that would do nothing, in upstream's words
// for --cache-enforce-integrity without --cache-dir: the HTTP flags
// without --http-addr (nothing is served over HTTP), --cache-only
// without --cache-dir (the cache would be a temporary file, built and
// removed).
func (s Serve) checkFlags() error {
	if !s.httpOn() {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--http-tls-cert", s.HTTPTLSCert != ""}, {"--http-tls-key", s.HTTPTLSKey != ""}, {"--http-catalog-name", s.HTTPCatalogName != ""}} {
			if f.set {
				return fmt.Errorf("--http-addr must be specified with %s", f.name)
			}
		}
	}
	if s.CacheOnly && s.CacheDir == "" {
		return errors.New("--cache-dir must be specified with --cache-only")
	}
	return nil
}

func (s Serve) httpOn() bool { return s.HTTPAddr != "" || s.HTTPListener != nil }

// webServer is an HTTP server that serve or hub started (pkg/httpserver).
type webServer struct {
	srv    *http.Server
	served chan error
	log    *slog.Logger
}

// stop shuts the HTTP server down, letting requests finish for up to
// grace. A nil webServer does nothing.
func (w *webServer) stop(grace time.Duration) {
	if w == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil {
		w.log.Warn("HTTP requests did not finish in time; stopping", "error", err)
		w.srv.Close()
	}
}

func portOf(a net.Addr) string {
	if _, port, err := net.SplitHostPort(a.String()); err == nil {
		return port
	}
	return a.String()
}

// walk is how the catalog is read. Files other tools read differently
// are logged as warnings when the catalog is read (not when a cache is
// reused).
func (s Serve) walk() []declcfg.WalkOption {
	opts := []declcfg.WalkOption{declcfg.WithMaxFileSize(s.MaxFileSize)}
	if s.Logger != nil {
		log := s.Logger.With("configs", s.CatalogDir)
		opts = append(opts, declcfg.WithWarnings(func(w *declcfg.Error) { log.Warn(w.Error()) }))
	}
	return opts
}

// load returns the snapshot to serve, applying the cache policy.
func (s Serve) load(ctx context.Context, fsys fs.FS, log *slog.Logger) (*cache.Snapshot, error) {
	if s.CacheDir == "" {
		return s.buildTemp(ctx, fsys, log)
	}
	log = log.With("cache", s.CacheDir)
	enforce := s.Enforce == EnforceOn || (s.Enforce == EnforceDefault && !s.CacheOnly)

	snap, err := cache.OpenDir(s.CacheDir)
	if err == nil {
		if err = s.checkCache(ctx, fsys, snap, log); err != nil {
			snap.Close()
		}
	}
	if err == nil {
		log.Info("found a valid cache", "built-by", snap.Producer)
		return snap, nil
	}
	var rej *cache.RejectedError
	if !errors.As(err, &rej) {
		return nil, fmt.Errorf("load cache: %w", err)
	}
	switch {
	case enforce && s.Enforce == EnforceDefault && rej.Reason == cache.Missing && rej.Empty:
		log.Warn("no pre-built cache: building it now (ship one in the image with `opm serve --cache-only` for a fast start)", "reason", rej.Detail)
	case enforce:
		return nil, fmt.Errorf("integrity check failed: %w", err)
	default:
		log.Info("building cache", "reason", rej.Error())
	}
	snap, err = LoadServeDir(ctx, fsys, s.CacheDir, version.Version, s.CacheHTTP || s.httpOn(), s.walk()...)
	if err == nil {
		freeOSMemory()
		log.Info("cache built", "file", snap.Path)
		return snap, nil
	}
	if !cache.IsReadOnly(err) || s.CacheOnly {
		return nil, fmt.Errorf("failed to build cache: %w", err)
	}
	log.Warn("cannot write the cache directory; serving from a temporary cache", "error", err)
	return s.buildTemp(ctx, fsys, log)
}

// checkCache decides whether an opened cache can be served: the catalog's
// fingerprint must match and every stored answer its checksum (a server
// that says SERVING must be able to answer every request), and, with HTTP
// on, the JSON lines their checksum; a cache built without the lines gets
// them derived from the catalog instead. The checks run at the same time;
// the first failure stops the others.
func (s Serve) checkCache(ctx context.Context, fsys fs.FS, snap *cache.Snapshot, log *slog.Logger) error {
	if s.CacheOnly && (s.CacheHTTP || s.httpOn()) && snap.Lines() == nil {
		return &cache.RejectedError{Reason: cache.Incomplete, Path: snap.Path,
			Detail: "it holds no JSON lines of the catalog (it was built without --cache-http), which --cache-http asks for"}
	}
	derive := s.httpOn() && snap.Lines() == nil && !s.CacheOnly
	if derive {
		defer limitLoadMemory(snap.Fingerprint.Size())()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		errs  [4]error // in the order they are reported: stale, damaged answers, damaged lines, derivation
		lines *cache.LineBuilder
		inMem bool
		start = time.Now()
	)
	run := func(i int, fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = fn(); errs[i] != nil {
				cancel()
			}
		}()
	}
	run(0, func() error { return snap.Fingerprint.Check(ctx, fsys, snap.Path, s.walk()...) })
	run(1, func() error { return snap.Verify(ctx) })
	switch {
	case derive:
		run(3, func() (err error) {
			lines, inMem, err = LoadServeLines(ctx, fsys, s.TempDir, s.walk()...)
			return err
		})
	case s.httpOn():
		run(2, func() error { return snap.VerifyLines(ctx) })
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		// A check stopped by another's failure reports that failure.
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	if first != nil {
		if lines != nil {
			lines.Close()
		}
		return first
	}
	if !derive {
		return nil
	}
	if err := snap.AddLines(lines); err != nil {
		return err
	}
	freeOSMemory()
	if inMem {
		log.Warn("no writable temporary directory: keeping the catalog's JSON lines in memory")
	}
	log.Info("the cache holds no JSON lines for HTTP (built without --cache-http): derived them from the catalog",
		"bytes", snap.Lines().Size(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

func (s Serve) buildTemp(ctx context.Context, fsys fs.FS, log *slog.Logger) (*cache.Snapshot, error) {
	snap, inMemory, err := LoadServeTemp(ctx, fsys, s.TempDir, s.HTTPAddr != "" || s.HTTPListener != nil, s.walk()...)
	if err != nil {
		return nil, err
	}
	if inMemory {
		log.Warn("no writable temporary directory: keeping the answers in memory")
	}
	freeOSMemory()
	return snap, nil
}

// freeOSMemory returns the memory of the catalog load to the OS before
// serving: a catalog pod's memory use is measured from then on. The first
// collection empties the load's buffer pools into their victim caches,
// the second (inside FreeOSMemory) frees them.
func freeOSMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// profiler serves net/http/pprof and the CPU profile of the start-up.
type profiler struct {
	srv *http.Server
	log *slog.Logger

	mu       sync.Mutex
	capture  *bytes.Buffer
	capDone  bool
	serveErr chan error
}

const startupProfilePath = "/debug/pprof/startup/cpu"

func startProfiler(addr string, capture bool, log *slog.Logger) (*profiler, error) {
	p := &profiler{log: log}
	if addr == "" {
		if capture {
			log.Warn("--pprof-capture-profiles has no effect without --pprof-addr (pprof is off by default here, unlike upstream)")
		}
		return p, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	mux.HandleFunc(startupProfilePath, p.startupProfile)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	p.serveErr = make(chan error, 1)
	go func() { p.serveErr <- p.srv.Serve(lis) }()
	log.Info("serving pprof", "address", lis.Addr().String())
	if capture {
		p.capture = &bytes.Buffer{}
		if err := pprof.StartCPUProfile(p.capture); err != nil {
			p.stop()
			return nil, fmt.Errorf("could not start CPU profile: %w", err)
		}
	}
	return p, nil
}

func (p *profiler) startupProfile(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.capture == nil || !p.capDone {
		http.Error(w, "cpu profile cache is not yet ready", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write(p.capture.Bytes())
}

func (p *profiler) stopCapture() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.capture != nil && !p.capDone {
		pprof.StopCPUProfile()
		p.capDone = true
	}
}

func (p *profiler) stop() {
	p.stopCapture()
	if p.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil {
		p.log.Warn("error shutting down pprof server", "error", err)
	}
	if err := <-p.serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		p.log.Warn("pprof server", "error", err)
	}
}
