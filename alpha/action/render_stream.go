package action

import (
	"io/fs"
	"runtime"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/image"
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

// preparse holds the catalog files parsed during an extraction.
type preparse struct {
	src     *fileSource // the blobs' source; its fsys is set once the tree is complete
	walk    []declcfg.WalkOption
	maxSize int64

	sem chan struct{} // bounds the parses running at once
	wg  sync.WaitGroup

	mu    sync.Mutex
	files map[preKey]*preFile
}

type preKey struct {
	path string
	id   image.ContentID
}

// preFile is what parsing one file gave.
type preFile struct {
	items              []declcfg.RenderItem // in the file's order
	checks             declcfg.Errors       // the blobs' CheckBlob problems
	problems, warnings declcfg.Errors       // the parse's
}

// newPreparse returns a preparse reading files of at most maxSize bytes
// (0: the loader's default; < 0: no limit).
func newPreparse(maxSize int64) *preparse {
	walk := []declcfg.WalkOption{declcfg.WithMaxFileSize(maxSize), declcfg.WithWarnings(func(*declcfg.Error) {})}
	if maxSize == 0 {
		maxSize = declcfg.DefaultMaxFileSize
	}
	return &preparse{
		src:     &fileSource{spill: scratch.CreateOrMemory("", "opm-render-*"), files: map[string]fs.File{}, whole: map[string][]byte{}},
		walk:    walk,
		maxSize: maxSize,
		sem:     make(chan struct{}, runtime.GOMAXPROCS(0)),
		files:   map[preKey]*preFile{},
	}
}

// add parses f in the background (image.WithFileStream's callback).
func (p *preparse) add(f image.StreamedFile) {
	if p.maxSize >= 0 && f.Size > p.maxSize {
		return // the walk reports it
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.sem <- struct{}{}
		defer func() { <-p.sem }()
		buf := make([]byte, f.Size)
		if _, err := f.Content.ReadAt(buf, 0); err != nil && int64(len(buf)) > 0 {
			return // the walk reads it again and reports what is wrong
		}
		pf := &preFile{}
		var err error
		pf.problems, pf.warnings, err = declcfg.ParseFile(f.Path, buf, 0, func(b *declcfg.Blob) error {
			it, problem := p.src.item(b)
			if problem != nil {
				pf.checks = append(pf.checks, problem)
				return nil
			}
			pf.items = append(pf.items, it)
			return nil
		}, p.walk...)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.files[preKey{f.Path, f.ID}] = pf
		p.mu.Unlock()
	}()
}

// wait waits for the parses under way.
func (p *preparse) wait() { p.wg.Wait() }

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

// close releases the spilled blobs.
func (p *preparse) close() {
	p.wait()
	p.src.spill.Close()
}
