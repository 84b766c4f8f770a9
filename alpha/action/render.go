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
// rewriting) keep their canonical bytes in the spill file, or in memory
// when there is none, and blobs of in-memory sources their typed value.
type renderEntry struct {
	src     *fileSource
	path    string
	off, n  int
	spilled bool   // the canonical bytes are in src.spill at soff
	soff    int64  // where, when spilled
	data    []byte // owned canonical JSON, or nil
	value   any    // typed value from an in-memory source, or nil
	schema  string
}

// spill holds the canonical bytes of rewritten blobs between the phases,
// in an unlinked temporary file: rendering a YAML catalog then needs no
// more memory than rendering a JSON one.
type spill struct {
	mu     sync.Mutex
	f      *os.File
	size   int64
	failed bool // no temporary file: keep the bytes in memory
}

// put stores b and returns its offset; ok is false when b must be kept in
// memory instead.
func (s *spill) put(b []byte) (off int64, ok bool) {
	s.mu.Lock()
	if s.f == nil && !s.failed {
		f, err := os.CreateTemp("", "opm-render-*")
		if err != nil {
			s.failed = true
		} else {
			_ = os.Remove(f.Name()) // gone with the process, whatever happens
			s.f = f
		}
	}
	if s.failed {
		s.mu.Unlock()
		return 0, false
	}
	off = s.size
	s.size += int64(len(b))
	s.mu.Unlock()
	if _, err := s.f.WriteAt(b, off); err != nil {
		return 0, false
	}
	return off, true
}

func (s *spill) close() {
	if s.f != nil {
		_ = s.f.Close()
	}
}

// fileSource reads blobs back from a catalog tree in phase two.
type fileSource struct {
	fsys  fs.FS
	spill *spill
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
	var (
		items   []declcfg.RenderItem
		sources []*fileSource
		sp      = &spill{}
	)
	defer func() {
		for _, s := range sources {
			s.close()
		}
		sp.close()
	}()
	for _, ref := range r.Refs {
		src, err := resolver.Resolve(ctx, ref)
		if err != nil {
			return fmt.Errorf("render reference %q: %w", ref, err)
		}
		if src.Close != nil {
			defer src.Close() //nolint:errcheck // best-effort cleanup of a temporary unpack
		}
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
		sources = append(sources, fsrc)
		refItems, err := collect(ctx, fsrc)
		if err != nil {
			return fmt.Errorf("render reference %q: %w", ref, err)
		}
		items = append(items, refItems...)
	}
	return writeOrdered(ctx, w, declcfg.RenderOrder(items), format)
}

// collect is phase one for a catalog tree: every blob is read, checked and
// decoded once, and remembered by position (or by value when it had to be
// rewritten).
func collect(ctx context.Context, src *fileSource) ([]declcfg.RenderItem, error) {
	type located struct {
		file, index int
		item        declcfg.RenderItem
	}
	var (
		mu   sync.Mutex
		all  []located
		errs declcfg.Errors
	)
	err := declcfg.Walk(ctx, src.fsys, func(b *declcfg.Blob) error {
		if err := checkDecodes(&b.Meta); err != nil {
			mu.Lock()
			errs = append(errs, &declcfg.Error{Path: b.Path, Line: b.Line, Col: b.Col, Err: err})
			mu.Unlock()
			return nil
		}
		e := &renderEntry{src: src, path: b.Path, off: b.Offset, n: len(b.Blob), schema: b.Schema}
		if !b.Verbatim {
			if e.soff, e.spilled = src.spill.put(b.Blob); !e.spilled {
				e.data = bytes.Clone(b.Blob)
			}
		}
		group := b.Package
		if b.Schema == declcfg.SchemaPackage {
			group = b.Name
		}
		it := declcfg.RenderItem{Schema: b.Schema, Group: group, Name: b.Name, Value: e}
		mu.Lock()
		all = append(all, located{b.File, b.Index, it})
		mu.Unlock()
		return nil
	})
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

// checkDecodes reports a blob that upstream could not decode into its type.
func checkDecodes(m *declcfg.Meta) error {
	var err error
	switch m.Schema {
	case declcfg.SchemaPackage:
		_, err = declcfg.DecodePackage(m.Blob)
	case declcfg.SchemaChannel:
		_, err = declcfg.DecodeChannel(m.Blob)
	case declcfg.SchemaBundle:
		_, err = declcfg.DecodeBundle(m.Blob)
	case declcfg.SchemaDeprecations:
		_, err = declcfg.DecodeDeprecation(m.Blob)
	}
	if err != nil {
		return fmt.Errorf("invalid %s blob: %w", m.Schema, err)
	}
	return nil
}

// encode renders one entry in format f; scratch is a reusable read
// buffer.
func (e *renderEntry) encode(dst []byte, f declcfg.Format, scratch *[]byte) ([]byte, error) {
	v := e.value
	if v == nil {
		data := e.data
		switch {
		case e.spilled:
			if cap(*scratch) < e.n {
				*scratch = make([]byte, e.n)
			}
			data = (*scratch)[:e.n]
			if _, err := e.src.spill.f.ReadAt(data, e.soff); err != nil {
				return dst, fmt.Errorf("read back %s: %w", e.path, err)
			}
		case data == nil:
			var err error
			if data, err = e.src.readAt(e.path, e.off, e.n, *scratch); err != nil {
				return dst, err
			}
			*scratch = data
		}
		meta := declcfg.Meta{Schema: e.schema, Blob: data}
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
				var scratch []byte
				for _, it := range c.items {
					if c.out, c.err = it.Value.(*renderEntry).encode(c.out, f, &scratch); c.err != nil {
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
