package registry

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"slices"
	"sort"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
)

// Options configure a Builder.
type Options struct {
	// Sink receives each bundle's answer and each custom-schema blob as
	// the catalog is read. Required.
	Sink Sink
	// Stash, when set, keeps each package's icon and description out of
	// memory until the load is done.
	Stash Stash
	// Lines, when set, receives every blob of the catalog as it is read
	// (the JSON lines the HTTP side serves).
	Lines LineSink
	// Walk configures the catalog loader (Load).
	Walk []declcfg.WalkOption
}

// LineSink keeps the blobs of a catalog. PutLine is called from several
// goroutines at once; the Blob is only valid during the call.
type LineSink interface {
	PutLine(b *declcfg.Blob) error
}

// Builder makes an Index in one pass over a catalog's blobs: it feeds the
// model (which validates the catalog with upstream's rules) and, for each
// bundle blob, computes the bundle's answer while the blob is at hand and
// hands it to the Sink. AddBlob may be called from several goroutines at
// once (it is a declcfg.WalkFunc); Build is called once, at the end.
type Builder struct {
	opts  Options
	model *model.Builder

	mu       sync.Mutex
	pkgs     map[string]*pkgInfo
	bundles  map[bundleKey]*bundleRec
	deferred []deferredBundle
	metas    chunked[metaRec]
	errs     []error
}

// metaRec is a custom blob with its place in the catalog (file and blob
// index in walk order), which decides between identical duplicates
// independently of the order the parallel walk produced them in.
type metaRec struct {
	Meta
	file, index int
}

type bundleKey struct{ pkg, name string }

// bundleRec is what the Index keeps of a bundle blob.
type bundleRec struct {
	body     BodyRef
	hasImage bool
	provides []GVK
}

// deferredBundle is a bundle whose answer waits for its package's blob.
type deferredBundle struct {
	blob []byte
	path string
}

// NewBuilder returns an empty Builder.
func NewBuilder(opts Options) *Builder {
	return &Builder{
		opts:    opts,
		model:   model.NewBuilder(),
		pkgs:    map[string]*pkgInfo{},
		bundles: map[bundleKey]*bundleRec{},
	}
}

// AddBlob adds one blob. Problems with the catalog are collected for
// Build; AddBlob returns an error only when the Sink fails.
func (bld *Builder) AddBlob(b *declcfg.Blob) error {
	bld.model.AddBlob(b)
	switch b.Schema {
	case declcfg.SchemaPackage:
		p, err := declcfg.DecodePackage(b.JSON)
		if err != nil || p.Name == "" {
			return nil // reported by the model
		}
		bld.mu.Lock()
		_, dup := bld.pkgs[p.Name]
		bld.mu.Unlock()
		if dup {
			return nil // reported by the model
		}
		info, err := newPkgInfo(&p, bld.opts.Stash)
		if err != nil {
			return fmt.Errorf("stash package %q: %w", p.Name, err)
		}
		bld.mu.Lock()
		if _, dup := bld.pkgs[p.Name]; !dup {
			bld.pkgs[p.Name] = info
		}
		bld.mu.Unlock()
	case declcfg.SchemaBundle:
		return bld.addBundle(b.JSON, b.Path, false)
	case declcfg.SchemaChannel, declcfg.SchemaDeprecations:
	default:
		if err := ValidateMetaKey(b.Schema, b.Package); err != nil {
			// Upstream refuses to serve such a blob: it could never be asked for.
			bld.mu.Lock()
			bld.errs = append(bld.errs, fmt.Errorf("%s: invalid custom schema meta: %w", b.Pos(), err))
			bld.mu.Unlock()
			return nil
		}
		ref, err := bld.opts.Sink.PutMeta(b.JSON)
		if err != nil {
			return fmt.Errorf("store %s blob: %w", b.Schema, err)
		}
		h := fnv.New64a()
		h.Write(b.JSON)
		m := metaRec{Meta{Schema: b.Schema, Package: b.Package, Name: b.Name, Hash: h.Sum64(), Body: ref}, b.File, b.Index}
		bld.mu.Lock()
		bld.metas.add(m)
		bld.mu.Unlock()
	}
	return nil
}

func (bld *Builder) addBundle(blob []byte, file string, final bool) error {
	bd, err := declcfg.DecodeBundle(blob)
	if err != nil {
		return nil // reported by the model
	}
	bld.mu.Lock()
	pkg := bld.pkgs[bd.Package]
	bld.mu.Unlock()
	w := workPool.Get().(*bundleWork)
	defer workPool.Put(w)
	err = w.fill(&bd, pkg)
	switch {
	case errors.Is(err, errNeedPackage) && !final:
		bld.mu.Lock()
		bld.deferred = append(bld.deferred, deferredBundle{blob: bytes.Clone(blob), path: file})
		bld.mu.Unlock()
		return nil
	case errors.Is(err, errNeedPackage):
		return nil // a bundle of an unknown package: reported by the model
	case errors.Is(err, ErrStorage):
		return err
	case err != nil:
		bld.mu.Lock()
		bld.errs = append(bld.errs, fmt.Errorf("%s: package %q: %w", file, bd.Package, err))
		bld.mu.Unlock()
		return nil
	}
	ref, err := bld.opts.Sink.PutBundle(&w.ans)
	if err != nil {
		return fmt.Errorf("store bundle %q: %w", bd.Name, err)
	}
	rec := &bundleRec{body: ref, hasImage: bd.Image != "", provides: clone(w.ans.ProvidedAPIs)}
	bld.mu.Lock()
	bld.bundles[bundleKey{bd.Package, bd.Name}] = rec
	bld.mu.Unlock()
	return nil
}

// InvalidCatalogError is a catalog that must not be served. Its text is
// upstream opm's validation error.
type InvalidCatalogError struct {
	// Problems are every problem found, in upstream's order.
	Problems model.Problems
	err      error
}

func (e *InvalidCatalogError) Error() string { return e.err.Error() }

// Unwrap returns the validation error tree.
func (e *InvalidCatalogError) Unwrap() error { return e.err }

// Build validates the catalog and returns its Index. walkErr is the error
// declcfg.Walk returned: its file problems are reported with the model's.
// An invalid catalog is an *InvalidCatalogError.
func (bld *Builder) Build(walkErr error) (*Index, error) {
	var walkErrs declcfg.Errors
	if walkErr != nil && !errors.As(walkErr, &walkErrs) {
		return nil, walkErr
	}
	bld.model.AddLoadErrors(walkErrs)
	m, all := bld.model.Build()
	if err := all.Err(); err != nil {
		return nil, &InvalidCatalogError{Problems: all, err: err}
	}
	for _, d := range bld.deferred {
		if err := bld.addBundle(d.blob, d.path, true); err != nil {
			return nil, err
		}
	}
	bld.deferred = nil
	if len(bld.errs) > 0 {
		sort.Slice(bld.errs, func(i, j int) bool { return bld.errs[i].Error() < bld.errs[j].Error() })
		return nil, fmt.Errorf("cannot serve the catalog: %w", errors.Join(bld.errs...))
	}
	return bld.index(m)
}

// index assembles the Index from the validated model and the bundle
// records.
func (bld *Builder) index(m model.Model) (*Index, error) {
	x := &Index{}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	bundleIdx := map[bundleKey]int{}
	for pi, name := range names {
		mp := m[name]
		// A bundle's deprecation is the same in each of its channels.
		deps := map[string]*model.Deprecation{}
		for _, ch := range mp.Channels {
			for bn, mb := range ch.Bundles {
				if d, seen := deps[bn]; !seen || d == nil {
					deps[bn] = mb.Deprecation
				}
			}
		}
		bnames := make([]string, 0, len(deps))
		for bn := range deps {
			bnames = append(bnames, bn)
		}
		sort.Strings(bnames)
		for _, bn := range bnames {
			rec := bld.bundles[bundleKey{name, bn}]
			if rec == nil {
				return nil, fmt.Errorf("package %q: bundle %q has no answer", name, bn)
			}
			b := Bundle{Package: pi, Name: bn, HasImage: rec.hasImage, Provides: rec.provides, Body: rec.body,
				Deprecation: deps[bn]}
			bundleIdx[bundleKey{name, bn}] = len(x.Bundles)
			x.Bundles = append(x.Bundles, b)
		}
	}
	for _, name := range names {
		mp := m[name]
		p := Package{Name: name, Deprecation: mp.Deprecation}
		if mp.DefaultChannel != nil {
			p.DefaultChannel = mp.DefaultChannel.Name
		}
		chNames := make([]string, 0, len(mp.Channels))
		for cn := range mp.Channels {
			chNames = append(chNames, cn)
		}
		sort.Strings(chNames)
		for _, cn := range chNames {
			mc := mp.Channels[cn]
			head, err := mc.Head()
			if err != nil {
				return nil, fmt.Errorf("package %q, channel %q: %w", name, cn, err)
			}
			c := Channel{Name: cn, Deprecation: mc.Deprecation}
			for bn, mb := range mc.Bundles {
				c.Entries = append(c.Entries, Entry{Bundle: bundleIdx[bundleKey{name, bn}], Replaces: mb.Replaces,
					Skips: clone(mb.Skips), SkipRange: mb.SkipRange})
			}
			slices.SortFunc(c.Entries, func(a, b Entry) int { return a.Bundle - b.Bundle })
			c.Head, _ = x.EntryIndex(&c, head.Name)
			p.Channels = append(p.Channels, c)
		}
		x.Packages = append(x.Packages, p)
	}
	x.Metas = sortMetas(bld.metas.all())
	bld.metas = chunked[metaRec]{}
	return x, x.Validate()
}

// clone copies a list; an empty list is nil (as a decoded Index has it).
func clone[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// chunked is an append-only list kept in fixed-size chunks, so that it
// grows without copying what it holds: a catalog may have hundreds of
// thousands of custom blobs.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkLen = 4096

func (c *chunked[T]) add(v T) {
	if k := len(c.chunks) - 1; k >= 0 && len(c.chunks[k]) < chunkLen {
		c.chunks[k] = append(c.chunks[k], v)
	} else {
		c.chunks = append(c.chunks, append(make([]T, 0, chunkLen), v))
	}
	c.n++
}

// all returns the elements in one slice.
func (c *chunked[T]) all() []T {
	out := make([]T, 0, c.n)
	for _, ch := range c.chunks {
		out = append(out, ch...)
	}
	return out
}

// sortMetas orders custom blobs by schema, package, name and content, then
// catalog order. Every copy of a blob is kept: upstream's default store
// (pogreb.v1) appends each blob it reads and streams them all.
func sortMetas(ms []metaRec) []Meta {
	slices.SortFunc(ms, func(a, b metaRec) int {
		return cmp.Or(cmp.Compare(a.Schema, b.Schema), cmp.Compare(a.Package, b.Package),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Hash, b.Hash), cmp.Compare(a.file, b.file), cmp.Compare(a.index, b.index))
	})
	if len(ms) == 0 {
		return nil
	}
	out := make([]Meta, len(ms))
	for i := range ms {
		out[i] = ms[i].Meta
	}
	return out
}

// Load reads the catalog at fsys in one pass and builds its Index, storing
// answers in opts.Sink.
func Load(ctx context.Context, fsys fs.FS, opts Options) (*Index, error) {
	bld := NewBuilder(opts)
	fn := bld.AddBlob
	if opts.Lines != nil {
		fn = func(b *declcfg.Blob) error {
			if err := opts.Lines.PutLine(b); err != nil {
				return fmt.Errorf("store %s: %w", b.Pos(), err)
			}
			return bld.AddBlob(b)
		}
	}
	err := declcfg.Walk(ctx, fsys, fn, opts.Walk...)
	return bld.Build(err)
}
