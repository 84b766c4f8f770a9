package action

import (
	"io/fs"
	"path"
	"runtime"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/image"
	"github.com/fastopm/fastopm/pkg/indexignore"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// Rendering a catalog image does phase one (read, check and decode every
// blob) while the image is being extracted: image.ExtractFS hands each
// catalog file over as soon as its layer has been read (WithFileStream),
// and a preparse parses it then, on the cores the decompression of the
// other layers leaves free, instead of after the whole image is there.
//
// What is parsed early is a guess: a later layer (or a later entry of the
// same layer) may remove or replace a file, and the .indexignore files
// decide which files count. So the walk of the extracted tree still
// decides everything; declcfg.WithParsed gives it, for each file it lists,
// the early result when that result was parsed from the file's current
// content (same path, same image.ContentID), and the walk parses the
// others itself. The output is what the walk alone gives.
//
// Files the .indexignore files streamed so far exclude are not parsed
// (nor the .indexignore files): the walk never reads them, and they may be
// large and no catalog at all. That too is a guess (an .indexignore may
// come after the files it excludes, or be replaced), safe either way: a
// file skipped that counts is parsed by the walk.

// preparseConfig is what a preparse needs of the render.
type preparseConfig struct {
	maxSize int64          // the largest file read (0: the loader's default; < 0: no limit)
	format  declcfg.Format // the output's
	pool    *parsePool     // the workers, shared by the images of a render (nil: a pool of its own)
}

// preparse holds the catalog files parsed during an extraction. Their
// blobs are checked, decoded and encoded in the output format at once
// (render's phase two for them is a copy), the output kept in scratch
// storage.
type preparse struct {
	src     *fileSource // the blobs' source; its fsys is set once the tree is complete
	format  declcfg.Format
	walk    []declcfg.WalkOption
	maxSize int64
	pool    *parsePool
	ownPool bool

	busy  sync.WaitGroup // files queued or being parsed
	mu    sync.Mutex
	files map[preKey]*preFile

	ignoreMu sync.Mutex
	ignores  map[string][]byte    // the directory and content of each .indexignore streamed, the last one of a directory
	matcher  *indexignore.Matcher // ignores' patterns; nil when one changed
}

// maxIgnoreSize is the largest .indexignore whose patterns a preparse
// follows.
const maxIgnoreSize = 1 << 20

type preKey struct {
	path string
	id   image.ContentID
}

// preFile is what parsing one file gave.
type preFile struct {
	items              []declcfg.RenderItem // in the file's order
	checks             declcfg.Errors       // the blobs' problems
	problems, warnings declcfg.Errors       // the parse's
}

func newPreparse(c preparseConfig) *preparse {
	maxSize := c.maxSize
	if maxSize == 0 {
		maxSize = declcfg.DefaultMaxFileSize
	}
	p := &preparse{
		src:     &fileSource{spill: scratch.CreateOrMemory("", "opm-render-*"), files: map[string]fs.File{}, whole: map[string][]byte{}},
		format:  c.format,
		walk:    []declcfg.WalkOption{declcfg.WithMaxFileSize(c.maxSize), declcfg.WithWarnings(func(*declcfg.Error) {})},
		maxSize: maxSize,
		pool:    c.pool,
		files:   map[preKey]*preFile{},
		ignores: map[string][]byte{},
	}
	if p.pool == nil {
		p.pool, p.ownPool = newParsePool(), true
	}
	return p
}

// add queues f to be parsed (image.WithFileStream's callback).
func (p *preparse) add(f image.StreamedFile) {
	if p.maxSize >= 0 && f.Size > p.maxSize {
		return // the walk reports it
	}
	if p.ignored(f) {
		return
	}
	p.busy.Add(1)
	p.pool.add(parseJob{p, f})
}

// ignored reports whether f is an .indexignore, whose patterns it records,
// or a file the .indexignore files streamed so far exclude.
func (p *preparse) ignored(f image.StreamedFile) bool {
	p.ignoreMu.Lock()
	defer p.ignoreMu.Unlock()
	if dir, base := path.Split(f.Path); base == indexignore.FileName {
		dir = path.Clean(dir)
		p.matcher = nil
		if f.Size <= maxIgnoreSize {
			content := make([]byte, f.Size)
			if _, err := f.Content.ReadAt(content, 0); err == nil || f.Size == 0 {
				p.ignores[dir] = content
				return true
			}
		}
		delete(p.ignores, dir) // unknown: nothing skipped for it
		return true
	}
	if len(p.ignores) == 0 {
		return false
	}
	if p.matcher == nil {
		p.matcher = &indexignore.Matcher{}
		for dir, content := range p.ignores {
			_ = p.matcher.Add(dir, content) // a bad one: the walk reports it
		}
	}
	return p.matcher.Match(f.Path)
}

// parse parses f; buf and out are the worker's buffers.
func (p *preparse) parse(f image.StreamedFile, buf, out *[]byte) {
	defer p.busy.Done()
	if int64(cap(*buf)) < f.Size {
		*buf = make([]byte, f.Size)
	}
	data := (*buf)[:f.Size]
	if _, err := f.Content.ReadAt(data, 0); err != nil && len(data) > 0 {
		return // the walk reads the file again and reports what is wrong
	}
	pf := &preFile{}
	var err error
	pf.problems, pf.warnings, err = declcfg.ParseFile(f.Path, data, 0, func(b *declcfg.Blob) error {
		if it, ok := p.item(b, out, &pf.checks); ok {
			pf.items = append(pf.items, it)
		}
		return nil
	}, p.walk...)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.files[preKey{f.Path, f.ID}] = pf
	p.mu.Unlock()
}

// parsePool parses the files of the catalog images of a render as they
// come, a worker per core whatever the number of images.
type parsePool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []parseJob
	closed  bool
	workers int
}

type parseJob struct {
	p *preparse
	f image.StreamedFile
}

func newParsePool() *parsePool {
	pp := &parsePool{}
	pp.cond = sync.NewCond(&pp.mu)
	return pp
}

// add queues j, starting a worker if there are fewer than cores.
func (pp *parsePool) add(j parseJob) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.queue = append(pp.queue, j)
	if pp.workers < runtime.GOMAXPROCS(0) {
		pp.workers++
		go pp.work()
	}
	pp.cond.Signal()
}

// work runs queued jobs until close.
func (pp *parsePool) work() {
	var buf, out []byte
	for {
		pp.mu.Lock()
		for len(pp.queue) == 0 && !pp.closed {
			pp.cond.Wait()
		}
		if len(pp.queue) == 0 {
			pp.mu.Unlock()
			return
		}
		j := pp.queue[0]
		pp.queue[0] = parseJob{}
		pp.queue = pp.queue[1:]
		pp.mu.Unlock()
		j.p.parse(j.f, &buf, &out)
	}
}

// close stops the workers once the queue is empty.
func (pp *parsePool) close() {
	pp.mu.Lock()
	pp.closed = true
	pp.cond.Broadcast()
	pp.mu.Unlock()
}

// item is the render item of b, encoded in the output format and kept in
// the spill; a blob that fails to decode is a problem appended to checks
// (no item), and one that fails to encode or spill is left to phase two,
// which reports it.
func (p *preparse) item(b *declcfg.Blob, out *[]byte, checks *declcfg.Errors) (declcfg.RenderItem, bool) {
	v, err := declcfg.DecodeView(&b.Meta)
	if err != nil {
		*checks = append(*checks, &declcfg.Error{Path: b.Path, Line: b.Line, Col: b.Col, Err: err})
		return declcfg.RenderItem{}, false
	}
	if bd, ok := v.(*declcfg.Bundle); ok {
		declcfg.PrepareForRender(bd)
	}
	group := b.Package
	if b.Schema == declcfg.SchemaPackage {
		group = b.Name
	}
	enc, err := p.format.Append((*out)[:0], v)
	*out = enc
	if err == nil {
		if off, err := p.src.spill.Append(enc); err == nil {
			e := &renderEntry{src: p.src, path: b.Path, n: len(enc), schema: b.Schema, encoded: true, soff: off}
			return declcfg.RenderItem{Schema: b.Schema, Group: group, Name: b.Name, Value: e}, true
		}
	}
	it, problem := p.src.item(b)
	return it, problem == nil
}

// wait waits for the files queued to be parsed.
func (p *preparse) wait() { p.busy.Wait() }

// lookup returns the early result for the file of the complete tree at
// path, if it was parsed from the content the file holds.
func (p *preparse) lookup(path string) *preFile {
	fi, err := fs.Stat(p.src.fsys, path)
	if err != nil {
		return nil
	}
	id, ok := fi.Sys().(image.ContentID)
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.files[preKey{path, id}]
}

// close releases the spilled blobs, and stops the pool if it is the
// preparse's own.
func (p *preparse) close() {
	p.wait()
	if p.ownPool {
		p.pool.close()
	}
	p.src.spill.Close()
}
