package image

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fastopm/fastopm/pkg/diskcache"
	"github.com/fastopm/fastopm/pkg/progress"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// Option configures Pull, Unpack, Extract, UnpackBundle, Push and Write.
// Each function reads the options that concern it and ignores the others,
// so a command can build one option list from its flags and pass it to
// everything.
type Option func(*options) error

type options struct {
	plainHTTP     bool
	skipTLSVerify bool
	rootCAs       *x509.CertPool
	auth          authn.Authenticator
	cacheDir      string
	cacheMax      int64 // 0: diskcache.DefaultMaxSize; < 0: no bound
	platform      *v1.Platform
	limits        Limits
	paths         []string
	check         func(dir string) error
	progress      *progress.Reporter
	stream        func(StreamedFile)

	cache *cacheHandle // the cache directory, opened once

	// dial replaces the dialer of the default transport; tests use it to
	// reach an in-process TLS registry under a non-loopback host name.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func makeOptions(opts ...Option) (*options, error) {
	o := &options{limits: DefaultLimits, cache: &cacheHandle{}}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// WithProgress shows the bytes of a push on r's status line and sums the
// push up once it is done; a nil r (not a terminal) shows nothing.
func WithProgress(r *progress.Reporter) Option {
	return func(o *options) error {
		o.progress = r
		return nil
	}
}

// WithPlainHTTP lets the registry be reached over plain HTTP (opm's
// --use-http). HTTPS is still tried first. Registries on loopback and
// private addresses are always allowed plain HTTP, as go-containerregistry
// does.
func WithPlainHTTP(on bool) Option {
	return func(o *options) error {
		o.plainHTTP = on
		return nil
	}
}

// WithSkipTLSVerify accepts any TLS certificate from the registry (opm's
// --skip-tls-verify).
func WithSkipTLSVerify(on bool) Option {
	return func(o *options) error {
		o.skipTLSVerify = on
		return nil
	}
}

// WithRootCAs verifies registry certificates against pool instead of the
// system roots (opm alpha bundle unpack's --root-ca).
func WithRootCAs(pool *x509.CertPool) Option {
	return func(o *options) error {
		o.rootCAs = pool
		return nil
	}
}

// WithAuth uses a for every registry, instead of looking credentials up in
// the keychain (image.Keychain: Docker and Podman auth files).
func WithAuth(a authn.Authenticator) Option {
	return func(o *options) error {
		if a == nil {
			return errors.New("image: WithAuth: nil authenticator")
		}
		o.auth = a
		return nil
	}
}

// WithCacheDir keeps pulled manifests, configs and layers in dir, keyed by
// digest, so that pulling the same content again downloads nothing, and
// what unpacking each layer yields (its entries and the content of the
// files unpacked from it), so that unpacking it again reads no layer. The
// directory is created when needed and bounded in size (WithCacheMaxSize).
// An empty dir disables the cache (the default).
func WithCacheDir(dir string) Option {
	return func(o *options) error {
		o.cacheDir = dir
		return nil
	}
}

// WithCacheMaxSize bounds the cache directory of WithCacheDir to n bytes:
// past it, the files used least recently are removed. 0 takes
// DefaultCacheMaxSize; a negative n sets no bound.
func WithCacheMaxSize(n int64) Option {
	return func(o *options) error {
		o.cacheMax = n
		return nil
	}
}

// WithError fails every function it is given to with err: for callers
// that build an option list from settings that may be wrong (an
// environment variable), so that the error surfaces where the options are
// used.
func WithError(err error) Option {
	return func(*options) error { return err }
}

// DefaultCacheMaxSize is the bound of the cache directory unless
// WithCacheMaxSize sets another.
const DefaultCacheMaxSize = diskcache.DefaultMaxSize

// openCache opens the cache directory; nil without WithCacheDir.
func (o *options) openCache() (*diskcache.Dir, error) {
	if o.cacheDir == "" {
		return nil, nil
	}
	h := o.cache
	h.once.Do(func() {
		max := o.cacheMax
		if max == 0 {
			max = DefaultCacheMaxSize
		}
		h.dir, h.err = diskcache.Open(o.cacheDir, max, blobsSub, recordsSub)
		if h.err != nil {
			h.err = fmt.Errorf("image cache: %w", h.err)
		}
	})
	return h.dir, h.err
}

// cacheHandle is the cache directory of a list of options, opened when
// first needed.
type cacheHandle struct {
	once sync.Once
	dir  *diskcache.Dir
	err  error
}

// WithPlatform picks the image for p out of a multi-platform index; an
// index without an image for p is an error. Without it Pull prefers
// linux on the host's architecture, then linux/amd64, then the first image
// of the index: catalog and bundle content is the same on every platform.
func WithPlatform(p v1.Platform) Option {
	return func(o *options) error {
		if p.OS == "" || p.Architecture == "" {
			return fmt.Errorf("image: WithPlatform: platform %q needs an OS and an architecture", p.String())
		}
		o.platform = &p
		return nil
	}
}

// WithLimits bounds what Unpack writes. Zero fields take the value of
// DefaultLimits.
func WithLimits(l Limits) Option {
	return func(o *options) error {
		if l.MaxFileSize < 0 || l.MaxTotalSize < 0 || l.MaxEntries < 0 {
			return errors.New("image: WithLimits: limits must not be negative")
		}
		o.limits = l.withDefaults()
		return nil
	}
}

// WithFileStream has ExtractFS hand fn each regular file of a catalog
// image's catalog as soon as a layer's content for it has been read, while
// the extraction goes on, so that the caller can start reading the files
// (opm render parses them) before the whole image is there. fn is called
// from the goroutines reading layers and must not block for long.
//
// A file handed to fn may be missing from the final tree, or hold other
// content there: a later layer, or a later entry of the same layer, may
// remove or replace it. The files of ExtractFS's x.FS tell which content
// they hold: their FileInfo's Sys() is the ContentID given to fn for that
// content. Nothing is handed when the extraction falls back to a directory
// on disk.
func WithFileStream(fn func(StreamedFile)) Option {
	return func(o *options) error {
		o.stream = fn
		return nil
	}
}

// StreamedFile is a catalog file as WithFileStream hands it.
type StreamedFile struct {
	Path string // slash-separated, relative to the catalog root
	Size int64  // bytes
	// Content holds its Size bytes until x.Close, unless the extraction
	// drops them sooner (a read then fails): once the tree holds neither
	// the file nor any other file whose content its layer stored.
	Content io.ReaderAt
	ID      ContentID // which content this is
}

// ContentID identifies the content of a file of ExtractFS's catalog in
// memory: the Sys() of its FileInfo. It is where the bytes are kept and how
// many there are: an empty file takes no room, so the content written
// after it in the same storage starts at the same place.
type ContentID struct {
	f      *scratch.File
	off, n int64
}

// WithPaths makes Unpack extract only the given sub-trees of the image
// filesystem (for example "/configs", or "manifests" and "metadata"),
// keeping their paths: "/configs/a.json" lands in DEST/configs/a.json.
// Entries elsewhere are read past without being checked or written.
// Without it (or with "/") the whole filesystem is unpacked.
func WithPaths(paths ...string) Option {
	return func(o *options) error {
		for _, p := range paths {
			clean, err := cleanPath(p)
			if err != nil {
				return fmt.Errorf("image: WithPaths: %q: %w", p, err)
			}
			if clean == "." {
				o.paths = nil
				return nil
			}
			o.paths = append(o.paths, clean)
		}
		return nil
	}
}

// WithCheck makes UnpackBundle run check on the unpacked bundle directory
// before anything is written to the output directory; an error from check
// aborts the unpack. opm alpha bundle unpack uses it for bundle
// validation (unless --skip-validation).
func WithCheck(check func(dir string) error) Option {
	return func(o *options) error {
		o.check = check
		return nil
	}
}

// nameOptions returns the options for parsing references.
func (o *options) nameOptions() []name.Option {
	if o.plainHTTP {
		return []name.Option{name.Insecure}
	}
	return nil
}

// parseReference parses ref as an image reference (tag or digest).
func (o *options) parseReference(ref string) (name.Reference, error) {
	r, err := name.ParseReference(ref, o.nameOptions()...)
	if err != nil {
		return nil, fmt.Errorf("parse image reference %q: %w", ref, err)
	}
	return r, nil
}

// httpTransport returns the transport for registry requests.
func (o *options) httpTransport() http.RoundTripper {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	if o.skipTLSVerify || o.rootCAs != nil {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if t.TLSClientConfig != nil {
			cfg = t.TLSClientConfig.Clone()
		}
		cfg.InsecureSkipVerify = o.skipTLSVerify //nolint:gosec // the user asked for it (--skip-tls-verify)
		if o.rootCAs != nil {
			cfg.RootCAs = o.rootCAs
		}
		t.TLSClientConfig = cfg
	}
	if o.dial != nil {
		t.DialContext = o.dial
		t.Proxy = nil
	}
	return t
}

// remoteOptions returns the go-containerregistry options for ctx.
func (o *options) remoteOptions(ctx context.Context) []remote.Option {
	ropts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(o.httpTransport()),
		remote.WithUserAgent("opm"),
	}
	switch {
	case o.auth != nil:
		ropts = append(ropts, remote.WithAuth(o.auth))
	default:
		ropts = append(ropts, remote.WithAuthFromKeychain(Keychain))
	}
	return ropts
}

// preferredPlatforms lists the platforms Pull tries, best first, when no
// platform was asked for.
func preferredPlatforms() []v1.Platform {
	host := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	if host.Architecture == "amd64" {
		return []v1.Platform{host}
	}
	return []v1.Platform{host, {OS: "linux", Architecture: "amd64"}}
}

// cleanPath turns a path of the image filesystem into a clean relative
// slash path ("." for the root). It strips leading slashes and rejects
// paths that climb above the root or contain NUL.
func cleanPath(p string) (string, error) {
	for i := 0; i < len(p); i++ {
		if p[i] == 0 {
			return "", errors.New("path contains a NUL byte")
		}
	}
	rel := path.Clean(trimLeadingSlashes(p))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", errUnsafe("path climbs out of the destination")
	}
	return rel, nil
}

func trimLeadingSlashes(p string) string {
	for len(p) > 0 && p[0] == '/' {
		p = p[1:]
	}
	if p == "" {
		return "."
	}
	return p
}
