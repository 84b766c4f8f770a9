package cache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fastopm/fastopm/pkg/interrupt"
	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// tempPrefix starts the names of the files a build writes into a cache
// directory before renaming the finished cache into place.
const tempPrefix = ".fastopm-serve-tmp-"

// DirBuild writes a new cache into a cache directory. Its Writer is the
// registry.Sink (and Stash) of the catalog load; Commit puts the finished
// cache in place.
//
// The cache file is reproducible: the same catalog built by the same opm
// (producer) gives the same bytes, whatever the scheduling of the parallel
// load. The load stores the answers, in the order its workers produce
// them, in an unlinked scratch file in the directory; Commit moves them
// into the cache file in the index's order (Writer.Finish).
type DirBuild struct {
	dir     string
	f       *os.File // the new cache, under a temporary name
	scratch *scratch.File
	w       *Writer
	done    bool
	// forget unregisters the removal of f on a signal (pkg/interrupt).
	forget func()
}

// NewDirBuild starts a build in dir, created when missing. It first
// removes what builds killed before they finished left there.
func NewDirBuild(dir string) (*DirBuild, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cache directory: %w", err)
	}
	// A failure here shows again, better worded, when the new file is
	// created.
	_, _ = removeDeadBuilds(dir)
	f, err := createBuildFile(dir)
	if err != nil {
		return nil, fmt.Errorf("create cache file: %w", err)
	}
	name := f.Name()
	forget := interrupt.OnExit(func() { _ = os.Remove(name) })
	// The scratch file is next to the cache, on the same file system, so
	// that the final copy can stay in the kernel.
	sc, err := scratch.Create(dir, tempPrefix+"*")
	if err != nil {
		forget()
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("create cache file: %w", err)
	}
	w, err := NewWriter(sc)
	if err != nil {
		forget()
		sc.Close()
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &DirBuild{dir: dir, f: f, scratch: sc, w: w, forget: forget}, nil
}

// Writer stores the answers of the load: it is the load's Sink, Stash and,
// after KeepLines, Lines (registry.Options).
func (b *DirBuild) Writer() *Writer { return b.w }

// KeepLines makes the cache carry the catalog as JSON lines, for the HTTP
// side of opm serve (--cache-http); without it the cache holds the gRPC
// answers only. The lines are staged in the build's scratch file. It must
// be called before the load starts.
func (b *DirBuild) KeepLines() error { return b.w.KeepLines(nil) }

// Commit writes the cache of the Index x, the answers the Writer stored,
// the catalog's fingerprint fp (taken before the load: if the catalog
// changes during the build, the cache is stale at the next start rather
// than wrong) and the producer's version, and renames it into place
// atomically: a concurrent reader sees the old cache or the new one. The
// file is readable by every user, as a catalog image's cache must be (it
// is built as root and served as another user). The Snapshot returned
// serves the new cache.
func (b *DirBuild) Commit(ctx context.Context, x *registry.Index, fp Fingerprint, producer string) (*Snapshot, error) {
	defer b.scratch.Close()
	snap, err := b.w.Finish(ctx, b.f, x, fp, producer)
	if err != nil {
		b.Abort()
		return nil, err
	}
	if err := b.f.Chmod(0o644); err != nil {
		b.Abort()
		return nil, fmt.Errorf("make cache readable: %w", err)
	}
	final := filepath.Join(b.dir, FileName)
	if err := os.Rename(b.f.Name(), final); err != nil {
		b.Abort()
		return nil, fmt.Errorf("install cache: %w", err)
	}
	b.done = true
	b.forget()
	snap.Path = final
	return snap, nil
}

// Abort gives the build up and removes its files. It does nothing after
// Commit succeeded.
func (b *DirBuild) Abort() {
	if b.done {
		return
	}
	b.done = true
	b.forget()
	b.scratch.Close()
	b.f.Close()
	os.Remove(b.f.Name())
}

// IsReadOnly reports whether err comes from a file system that refuses
// writes (read-only, or not writable by this user).
func IsReadOnly(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}
