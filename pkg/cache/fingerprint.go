package cache

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"sort"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// Fingerprint identifies a catalog's content: the path, size and 64-bit
// xxHash (XXH64) of every file the catalog loader reads, and of every
// .indexignore file (which decide what it reads). A cache is valid for a
// catalog exactly when their fingerprints are equal.
//
// The hash detects changes, not attacks: whoever can change the catalog
// can rebuild the cache as well, so a cryptographic hash would buy nothing,
// and XXH64 reads the catalog about four times as fast as SHA-256 (format
// version 2 used SHA-256; the check is most of a warm start's work).
type Fingerprint struct {
	// Files sorted by path.
	Files []FileSum
}

// Size is the total size of the fingerprinted files.
func (fp Fingerprint) Size() int64 {
	var n int64
	for _, f := range fp.Files {
		n += f.Size
	}
	return n
}

// FileSum is one file of a Fingerprint.
type FileSum struct {
	Path string
	Size int64
	Sum  [8]byte // XXH64, big-endian
}

// ComputeFingerprint reads every catalog file of fsys, in parallel. opts
// are the loader's (the size limit decides which files it reads).
func ComputeFingerprint(ctx context.Context, fsys fs.FS, opts ...declcfg.WalkOption) (Fingerprint, error) {
	files, err := catalogFiles(fsys, opts)
	if err != nil {
		return Fingerprint{}, err
	}
	if err := hashFiles(ctx, fsys, files); err != nil {
		return Fingerprint{}, err
	}
	return Fingerprint{Files: files}, nil
}

// Check compares the catalog at fsys with the fingerprint. A difference is
// a *RejectedError of reason Stale naming the first file (by path) that
// was added, removed or changed. cachePath names the cache in the error.
func (fp Fingerprint) Check(ctx context.Context, fsys fs.FS, cachePath string, opts ...declcfg.WalkOption) error {
	files, err := catalogFiles(fsys, opts)
	if err != nil {
		return err
	}
	stale := func(format string, args ...any) error {
		return rejected(Stale, cachePath, "the catalog changed since the cache was built: "+format, args...)
	}
	for i := 0; i < len(files) || i < len(fp.Files); i++ {
		switch {
		case i >= len(files):
			return stale("file %q was removed", fp.Files[i].Path)
		case i >= len(fp.Files):
			return stale("file %q was added", files[i].Path)
		case files[i].Path < fp.Files[i].Path:
			return stale("file %q was added", files[i].Path)
		case files[i].Path > fp.Files[i].Path:
			return stale("file %q was removed", fp.Files[i].Path)
		case files[i].Size != fp.Files[i].Size:
			return stale("file %q changed (%d bytes, was %d)", files[i].Path, files[i].Size, fp.Files[i].Size)
		}
	}
	if err := hashFiles(ctx, fsys, files); err != nil {
		return err
	}
	for i := range files {
		if files[i].Sum != fp.Files[i].Sum || files[i].Size != fp.Files[i].Size {
			return stale("file %q changed (xxh64 %x, was %x)", files[i].Path, files[i].Sum[:], fp.Files[i].Sum[:])
		}
	}
	return nil
}

// catalogFiles lists the files the catalog loader reads (declcfg.ListFiles),
// plus the .indexignore files, sorted by path, with their sizes. A problem
// the loader would report fails the listing.
func catalogFiles(fsys fs.FS, opts []declcfg.WalkOption) ([]FileSum, error) {
	listed, errs := declcfg.ListFiles(fsys, opts...)
	if len(errs) > 0 {
		return nil, errs
	}
	files := make([]FileSum, 0, len(listed.Catalog)+len(listed.IndexIgnore))
	for _, f := range listed.Catalog {
		files = append(files, FileSum{Path: f.Path, Size: f.Size})
	}
	for _, f := range listed.IndexIgnore {
		files = append(files, FileSum{Path: f.Path, Size: f.Size})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// hashFiles fills in the Sum (and the size actually read) of each file.
func hashFiles(ctx context.Context, fsys fs.FS, files []FileSum) error {
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), max(len(files), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 256<<10)
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if stop || i >= len(files) || ctx.Err() != nil {
					return
				}
				if err := hashFile(fsys, &files[i], buf); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

func hashFile(fsys fs.FS, f *FileSum, buf []byte) error {
	r, err := fsys.Open(f.Path)
	if err != nil {
		return fmt.Errorf("fingerprint catalog: %w", err)
	}
	defer r.Close()
	h := xxhash.New()
	n, err := io.CopyBuffer(h, struct{ io.Reader }{r}, buf) // our buffer, not WriteTo's
	if err != nil {
		return fmt.Errorf("fingerprint catalog: %s: %w", f.Path, err)
	}
	f.Size = n
	binary.BigEndian.PutUint64(f.Sum[:], h.Sum64())
	return nil
}
