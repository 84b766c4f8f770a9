// Package action holds one use case per opm command: Render, Validate and
// the others. Commands in cmd/opm parse flags and call exactly one action.
package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// Render prints the blobs of one or more catalogs in upstream's order and
// format. It does not validate.
type Render struct {
	// Refs are the catalogs to render, in order; their blobs compose into
	// one output.
	Refs []string
	// Format is json (default) or yaml.
	Format declcfg.Format
	// Sources resolves a reference; nil means directories only.
	Sources SourceResolver
	// MaxFileSize is the largest catalog file read, in bytes (0: the
	// loader's default, declcfg.DefaultMaxFileSize; < 0: no limit).
	MaxFileSize int64
	// Warn, when set, receives the warnings about files of a catalog
	// tree that other tools read differently (declcfg.WithWarnings).
	Warn func(msg string)
}

// A Source is one rendered reference: either a catalog tree read in a
// streaming fashion, or blobs already in memory.
type Source struct {
	// FS is a catalog tree, loaded with declcfg.Walk.
	FS fs.FS
	// Config holds blobs already in memory (bundle directories, bundle
	// images). Used when FS is nil.
	Config *declcfg.DeclarativeConfig
	// Close releases what the source holds (an unpacked image, say).
	Close func() error

	// pre holds FS's files parsed while a catalog image was extracted.
	pre *preparse
}

// SourceResolver turns a reference given on the command line into a Source.
type SourceResolver interface {
	Resolve(ctx context.Context, ref string) (*Source, error)
}

// DirResolver resolves references that are local catalog directories.
type DirResolver struct{}

// Resolve returns the directory as a catalog tree.
func (DirResolver) Resolve(_ context.Context, ref string) (*Source, error) {
	st, err := os.Stat(ref)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%q is a file: render takes catalog directories, bundle directories or image references", ref)
	}
	return &Source{FS: os.DirFS(ref)}, nil
}

// renderEntry is one blob waiting for phase two. Blobs that were verbatim
// in their file are read back from it; the others (YAML, JSON that needed
// rewriting) keep their canonical bytes in scratch storage (an unlinked
// temporary file, so that rendering a YAML catalog needs no more memory
// than rendering a JSON one), and blobs of in-memory sources their typed
// value.
type renderEntry struct {
	src     *fileSource
	path    string
	off, n  int
	spilled bool   // the canonical bytes are in src.spill at soff
	encoded bool   // what src.spill holds at soff is the n bytes of the entry's output
	soff    int64  // where, when spilled
	data    []byte // the canonical bytes, when the scratch file failed
	value   any    // typed value from an in-memory source, or nil
	schema  string
}

// fileSource reads blobs back from a catalog tree in phase two.
type fileSource struct {
	fsys  fs.FS
	spill *scratch.File
	mu    sync.Mutex
	files map[string]fs.File
	whole map[string][]byte
}

// readAt returns the n bytes at off in path, in buf when it has room.
func (s *fileSource) readAt(path string, off, n int, buf []byte) ([]byte, error) {
	s.mu.Lock()
	f, ok := s.files[path]
	if !ok {
		var err error
		if f, err = s.fsys.Open(path); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.files[path] = f
	}
	ra, isRA := f.(io.ReaderAt)
	if !isRA {
		data, ok := s.whole[path]
		if !ok {
			var err error
			if data, err = fs.ReadFile(s.fsys, path); err != nil {
				s.mu.Unlock()
				return nil, err
			}
			s.whole[path] = data
		}
		s.mu.Unlock()
		if off+n > len(data) {
			return nil, fmt.Errorf("%s changed while rendering", path)
		}
		return data[off : off+n], nil
	}
	s.mu.Unlock()
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := ra.ReadAt(buf, int64(off)); err != nil {
		return nil, fmt.Errorf("%s changed while rendering: %w", path, err)
	}
	return buf, nil
}

func (s *fileSource) close() {
	for _, f := range s.files {
		_ = f.Close()
	}
}

// Run renders every reference to w. Every input is read and checked before
// the first byte is written, so a bad input leaves w untouched.
func (r Render) Run(ctx context.Context, w io.Writer) error {
	format := r.Format
	if format == "" {
		format = declcfg.FormatJSON
	}
	resolver := r.Sources
	if resolver == nil {
		resolver = DirResolver{}
	}
	if rr, ok := resolver.(*Resolver); ok && rr.Migrations == nil {
		// Catalog images are parsed while they are extracted.
		pool := newParsePool()
		defer pool.close()
		c := *rr
		c.preparse = &preparseConfig{maxSize: r.MaxFileSize, format: format, pool: pool}
		resolver = &c
	}
	var (
		items   []declcfg.RenderItem
		sources []*fileSource
		sp      = scratch.CreateOrMemory("", "opm-render-*")
	)
	defer func() {
		for _, s := range sources {
			s.close()
		}
		sp.Close()
	}()
	srcs, err := resolveAll(ctx, resolver, r.Refs)
	defer func() {
		for _, src := range srcs {
			if src != nil && src.Close != nil {
				src.Close() //nolint:errcheck // best-effort cleanup of a temporary unpack
			}
		}
	}()
	if err != nil {
		return err
	}
	for i, ref := range r.Refs {
		src := srcs[i]
		if src.FS == nil {
			cfg := src.Config
			for i := range cfg.Bundles {
				declcfg.PrepareForRender(&cfg.Bundles[i])
			}
			for _, it := range cfg.Items() {
				it.Value = &renderEntry{value: it.Value, schema: it.Schema}
				items = append(items, it)
			}
			continue
		}
		fsrc := &fileSource{fsys: src.FS, spill: sp, files: map[string]fs.File{}, whole: map[string][]byte{}}
		if src.pre != nil {
			fsrc = src.pre.src
			fsrc.fsys = src.FS
		}
		sources = append(sources, fsrc)
		walk := []declcfg.WalkOption{declcfg.WithMaxFileSize(r.MaxFileSize)}
		if r.Warn != nil {
			walk = append(walk, declcfg.WithWarnings(func(w *declcfg.Error) {
				r.Warn(fmt.Sprintf("render reference %q: %v", ref, w))
			}))
		}
		refItems, err := collect(ctx, fsrc, src.pre, walk...)
		if err != nil {
			return fmt.Errorf("render reference %q: %w", ref, err)
		}
		items = append(items, refItems...)
	}
	return writeOrdered(ctx, w, declcfg.RenderOrder(items), format)
}

// resolveParallel bounds how many references are resolved (images
// pulled) at a time, as render-template pulls its bundle images.
const resolveParallel = 16

// resolveAll resolves the references, up to resolveParallel at a time: the
// images among them are pulled at once rather than one after another. The
// error is that of the first reference, in the order given, that failed;
// a failure stops the others. Sources are returned (to be closed) even
// with an error.
func resolveAll(ctx context.Context, resolver SourceResolver, refs []string) ([]*Source, error) {
	srcs := make([]*Source, len(refs))
	errs := make([]error, len(refs))
	if len(refs) == 1 {
		srcs[0], errs[0] = resolver.Resolve(ctx, refs[0])
	} else {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Warnings are held per reference and given in the order of the
		// references, as one after the other gives them.
		rr, _ := resolver.(*Resolver)
		warns := make([][]string, len(refs))
		sem := make(chan struct{}, resolveParallel)
		var wg sync.WaitGroup
		for i, ref := range refs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if ctx.Err() != nil {
					errs[i] = ctx.Err()
					return
				}
				res := resolver
				if rr != nil && rr.Warn != nil {
					var mu sync.Mutex
					c := *rr
					c.Warn = func(msg string) {
						mu.Lock()
						warns[i] = append(warns[i], msg)
						mu.Unlock()
					}
					res = &c
				}
				if srcs[i], errs[i] = res.Resolve(ctx, ref); errs[i] != nil {
					cancel()
				}
			}()
		}
		wg.Wait()
		for _, ws := range warns {
			for _, w := range ws {
				rr.Warn(w)
			}
		}
	}
	if f, ok := resolver.(interface{ Finish() }); ok {
		f.Finish()
	}
	first := -1
	for i, err := range errs {
		if err == nil {
			continue
		}
		// A reference stopped by another's failure reports that failure.
		if first < 0 || errors.Is(errs[first], context.Canceled) && !errors.Is(err, context.Canceled) {
			first = i
		}
	}
	if first >= 0 {
		return srcs, fmt.Errorf("render reference %q: %w", refs[first], errs[first])
	}
	return srcs, nil
}

// item is the render item of a blob of the catalog tree, or the blob's
// problem: its bytes are remembered by position when they are verbatim in
// the file, else spilled.
func (src *fileSource) item(b *declcfg.Blob) (declcfg.RenderItem, *declcfg.Error) {
	if err := declcfg.CheckBlob(&b.Meta); err != nil {
		return declcfg.RenderItem{}, &declcfg.Error{Path: b.Path, Line: b.Line, Col: b.Col, Err: err}
	}
	e := &renderEntry{src: src, path: b.Path, off: b.Offset, n: len(b.JSON), schema: b.Schema}
	if !b.Verbatim {
		if off, err := src.spill.Append(b.JSON); err == nil {
			e.soff, e.spilled = off, true
		} else {
			e.data = bytes.Clone(b.JSON) // a full disk costs memory, not the output
		}
	}
	group := b.Package
	if b.Schema == declcfg.SchemaPackage {
		group = b.Name
	}
	return declcfg.RenderItem{Schema: b.Schema, Group: group, Name: b.Name, Value: e}, nil
}

// collect is phase one for a catalog tree: every blob is read, checked and
// decoded once, and remembered by position (or by value when it had to be
// rewritten). The files pre parsed already (a catalog image's, parsed
// while it was extracted) are taken from there.
func collect(ctx context.Context, src *fileSource, pre *preparse, walk ...declcfg.WalkOption) ([]declcfg.RenderItem, error) {
	type located struct {
		file, index int
		item        declcfg.RenderItem
	}
	var (
		mu   sync.Mutex
		all  []located
		errs declcfg.Errors
	)
	if pre != nil {
		walk = append(walk, declcfg.WithParsed(func(f declcfg.File, i int) (declcfg.Errors, declcfg.Errors, bool) {
			pf := pre.lookup(f.Path)
			if pf == nil {
				return nil, nil, false
			}
			for j, it := range pf.items {
				all = append(all, located{i, j, it})
			}
			errs = append(errs, pf.checks...)
			return pf.problems, pf.warnings, true
		}))
	}
	err := declcfg.Walk(ctx, src.fsys, func(b *declcfg.Blob) error {
		it, problem := src.item(b)
		mu.Lock()
		if problem != nil {
			errs = append(errs, problem)
		} else {
			all = append(all, located{b.File, b.Index, it})
		}
		mu.Unlock()
		return nil
	}, walk...)
	var walkErrs declcfg.Errors
	if err != nil && !errors.As(err, &walkErrs) {
		return nil, err
	}
	if errs = append(walkErrs, errs...); len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Path < errs[j].Path })
		return nil, errs
	}
	// Load order: file walk order, then position in the file.
	slices.SortFunc(all, func(a, b located) int {
		if a.file != b.file {
			return a.file - b.file
		}
		return a.index - b.index
	})
	items := make([]declcfg.RenderItem, len(all))
	for i, l := range all {
		items[i] = l.item
	}
	return items, nil
}

// encode renders one entry in format f; buf is a reusable read buffer.
func (e *renderEntry) encode(dst []byte, f declcfg.Format, buf *[]byte) ([]byte, error) {
	if e.encoded {
		n := len(dst)
		dst = slices.Grow(dst, e.n)[:n+e.n]
		if _, err := e.src.spill.ReadAt(dst[n:], e.soff); err != nil {
			return dst[:n], fmt.Errorf("read back %s: %w", e.path, err)
		}
		return dst, nil
	}
	v := e.value
	if v == nil {
		data := e.data
		switch {
		case data != nil:
		case e.spilled:
			if cap(*buf) < e.n {
				*buf = make([]byte, e.n)
			}
			data = (*buf)[:e.n]
			if _, err := e.src.spill.ReadAt(data, e.soff); err != nil {
				return dst, fmt.Errorf("read back %s: %w", e.path, err)
			}
		default:
			var err error
			if data, err = e.src.readAt(e.path, e.off, e.n, *buf); err != nil {
				return dst, err
			}
			*buf = data
		}
		meta := declcfg.Meta{Schema: e.schema, JSON: data}
		switch e.schema {
		case declcfg.SchemaPackage:
			p, err := declcfg.DecodePackage(data)
			if err != nil {
				return dst, err
			}
			v = &p
		case declcfg.SchemaChannel:
			c, err := declcfg.DecodeChannel(data)
			if err != nil {
				return dst, err
			}
			v = &c
		case declcfg.SchemaBundle:
			b, err := declcfg.DecodeBundle(data)
			if err != nil {
				return dst, err
			}
			declcfg.PrepareForRender(&b)
			v = &b
		case declcfg.SchemaDeprecations:
			d, err := declcfg.DecodeDeprecation(data)
			if err != nil {
				return dst, err
			}
			v = &d
		default:
			v = &meta
		}
	}
	return f.Append(dst, v)
}

// writeOrdered is phase two: entries are encoded in parallel, in chunks,
// and written in order, with a bounded number of chunks in flight.
func writeOrdered(ctx context.Context, w io.Writer, items []declcfg.RenderItem, f declcfg.Format) error {
	const chunkBytes = 1 << 20
	type chunk struct {
		items []declcfg.RenderItem
		size  int // input bytes, to size the output buffer
		out   []byte
		err   error
		done  chan struct{}
	}
	var chunks []*chunk
	for start := 0; start < len(items); {
		size, end := 0, start
		for end < len(items) && (end == start || size < chunkBytes) {
			e := items[end].Value.(*renderEntry)
			size += e.n + len(e.data) + 1024
			end++
		}
		chunks = append(chunks, &chunk{items: items[start:end], size: size, done: make(chan struct{})})
		start = end
	}
	workers := runtime.GOMAXPROCS(0)
	sem := make(chan struct{}, 2*workers) // chunks encoded but not yet written
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for _, c := range chunks {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func(c *chunk) {
				defer close(c.done)
				// Indented output is about an eighth larger than its input.
				c.out = make([]byte, 0, c.size+c.size/6)
				var buf []byte
				for _, it := range c.items {
					if c.out, c.err = it.Value.(*renderEntry).encode(c.out, f, &buf); c.err != nil {
						return
					}
				}
			}(c)
		}
	}()
	for _, c := range chunks {
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if c.err != nil {
			return c.err
		}
		if _, err := w.Write(c.out); err != nil {
			return err
		}
		c.out = nil
		<-sem
	}
	return nil
}
