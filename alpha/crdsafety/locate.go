package crdsafety

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// Locations remembers, while a catalog is read for something else (its
// model), where the olm.bundle blobs that carry objects are, so that
// LoadIndex reads back only the bundles it is asked for instead of the
// whole catalog again. Add may be called from several goroutines at once.
type Locations struct {
	mu      sync.Mutex
	bundles map[bundleKey]location
}

// location is where a bundle's blob is: its file and byte range when the
// blob is the file's bytes verbatim (declcfg.Blob.Verbatim).
type location struct {
	path      string
	line, col int
	off, n    int
	// objects: the blob may have olm.bundle.object properties (false: it
	// has none).
	objects bool
	// verbatim: the file's bytes [off, off+n) are the blob; otherwise (a
	// YAML document, say) it must be parsed again.
	verbatim bool
}

// NewLocations returns an empty Locations.
func NewLocations() *Locations { return &Locations{bundles: map[bundleKey]location{}} }

// Add records the blob if it is an olm.bundle; others are ignored. It is
// a declcfg.WalkFunc's work: the blob's bytes are not kept.
func (l *Locations) Add(blob *declcfg.Blob) {
	if blob.Schema != declcfg.SchemaBundle {
		return
	}
	loc := location{path: blob.Path, line: blob.Line, col: blob.Col, off: blob.Offset, n: len(blob.JSON), verbatim: blob.Verbatim}
	// A blob read back by position is searched for objects then; another
	// is searched now, so that only one with objects makes LoadIndex read
	// the catalog again.
	loc.objects = blob.Verbatim || bytes.Contains(blob.JSON, []byte(property.TypeBundleObject))
	l.mu.Lock()
	l.bundles[bundleKey{blob.Package, blob.Name}] = loc
	l.mu.Unlock()
}

// LoadIndex is the package's LoadIndex over the bundles recorded: the
// CRDs of those for which keep (nil: all) reports true, read from fsys,
// the catalog the locations were recorded from. Blobs that are the file's
// bytes are read back by their position, in parallel; when a kept bundle
// is not (a YAML catalog), the catalog is read again as LoadIndex does.
func (l *Locations) LoadIndex(ctx context.Context, fsys fs.FS, keep func(pkg, name string) bool, opts ...declcfg.WalkOption) (*Index, error) {
	l.mu.Lock()
	byFile := map[string][]bundleKey{}
	var none []bundleKey // without objects
	reparse := false
	for k, loc := range l.bundles {
		switch {
		case keep != nil && !keep(k.pkg, k.name):
		case !loc.objects:
			none = append(none, k)
		case loc.verbatim:
			byFile[loc.path] = append(byFile[loc.path], k)
		default:
			reparse = true
		}
	}
	l.mu.Unlock()
	if reparse {
		return LoadIndex(ctx, fsys, keep, opts...)
	}
	ix := NewIndex()
	for _, k := range none {
		ix.Add(k.pkg, k.name, Bundle{})
	}
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	slices.Sort(files)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, f := range files {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return l.readFile(fsys, f, byFile[f], ix) })
	}
	err := g.Wait()
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// readFile reads the bundles keys of one file, in the order of their
// positions, and adds them to ix.
func (l *Locations) readFile(fsys fs.FS, path string, keys []bundleKey, ix *Index) error {
	l.mu.Lock()
	locs := make([]location, len(keys))
	for i, k := range keys {
		locs[i] = l.bundles[k]
	}
	l.mu.Unlock()
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(locs[a].off, locs[b].off) })
	f, err := fsys.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	var whole []byte // the file, when it cannot be read at an offset
	ra, _ := f.(io.ReaderAt)
	if ra == nil {
		if whole, err = io.ReadAll(f); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	var buf []byte
	for _, i := range order {
		k, loc := keys[i], locs[i]
		pos := fmt.Sprintf("%s:%d:%d", loc.path, loc.line, loc.col)
		if whole != nil {
			if loc.off+loc.n > len(whole) {
				return fmt.Errorf("%s: bundle %q: the file changed while it was read", pos, k.name)
			}
			buf = whole[loc.off : loc.off+loc.n]
		} else {
			buf = slices.Grow(buf[:0], loc.n)[:loc.n]
			if _, err := ra.ReadAt(buf, int64(loc.off)); err != nil {
				return fmt.Errorf("%s: bundle %q: the file changed while it was read: %w", pos, k.name, err)
			}
		}
		b, err := declcfg.DecodeBundle(buf)
		if err != nil || b.Package != k.pkg || b.Name != k.name {
			return fmt.Errorf("%s: bundle %q: the file changed while it was read", pos, k.name)
		}
		crds, err := ReadBundle(b.Properties)
		if err != nil {
			return fmt.Errorf("%s: bundle %q: %w", pos, k.name, err)
		}
		ix.Add(k.pkg, k.name, crds)
	}
	return nil
}
