// Package diskcache keeps files in a directory that several opm processes
// share, bounded in size: the image cache (`--image-cache-dir`: pulled
// blobs and what each layer yields) and the catalog cache of the query
// commands (`--catalog-cache-dir`) are such directories.
//
// What a Dir guarantees:
//
//   - a file appears whole or not at all: it is written under a temporary
//     name in its own directory and renamed into place (Commit), so a
//     reader never sees a partial file, and two processes that write the
//     same file at once both succeed, one replacing the other's equal
//     content;
//   - the directory stays under its bound: after every Commit, the files
//     of its sub-directories (those named to Open; nothing else in the
//     directory, which may be one the user keeps other files in) used least
//     recently (by modification time, which Touch sets on every
//     use) are removed until the total is at most nine tenths of the
//     bound, one process at a time (a lock file; a process that finds the
//     lock taken leaves the trimming to the other); a file larger than the
//     bound is not kept at all;
//   - a file open in one process stays readable while another removes or
//     replaces it (Unix semantics: the open file keeps its content).
//
// What it does not do is check content: the caller names files by the
// digest of what they hold, or stores a checksum in them, and verifies it
// before use.
package diskcache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// DefaultMaxSize is the bound of a Dir unless the caller sets another:
// room for the layers of a few large catalog images.
const DefaultMaxSize = 4 << 30 // 4 GiB

// tempPrefix starts the names of files being written.
const tempPrefix = ".tmp-"

// staleAge is how old a temporary file must be for Trim to take it for a
// dead process's and remove it.
const staleAge = time.Hour

// lockName is the lock file that keeps two processes from trimming at
// once.
const lockName = ".trim.lock"

// Dir is a size-bounded directory of files, in sub-directories.
type Dir struct {
	root string
	max  int64    // bytes; <= 0: no bound
	subs []string // the sub-directories it keeps files in
}

// Open returns the Dir at root, created if missing, bounded to max bytes
// (max <= 0: unbounded), that keeps its files in the sub-directories subs
// (slash-separated, relative to root). Only the files directly in those
// are ever trimmed: root may be a directory the user keeps other files in
// (--catalog-cache-dir ~/work), and those are never removed.
func Open(root string, max int64, subs ...string) (*Dir, error) {
	if len(subs) == 0 {
		return nil, errors.New("diskcache: no sub-directory to keep files in")
	}
	for _, s := range subs {
		if !fs.ValidPath(s) || s == "." {
			return nil, fmt.Errorf("diskcache: sub-directory %q is not a relative path", s)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("create cache directory %s: %w", root, err)
	}
	return &Dir{root: root, max: max, subs: subs}, nil
}

// checkSub refuses a sub-directory not named to Open: its files would be
// outside the bound.
func (d *Dir) checkSub(sub string) error {
	for _, s := range d.subs {
		if s == sub {
			return nil
		}
	}
	return fmt.Errorf("diskcache: sub-directory %q was not named to Open", sub)
}

// Root is the directory.
func (d *Dir) Root() string { return d.root }

// MaxSize is the bound, in bytes (<= 0: none).
func (d *Dir) MaxSize() int64 { return d.max }

// Path is where the file name of the sub-directory sub lives.
func (d *Dir) Path(sub, name string) string { return filepath.Join(d.root, sub, name) }

// Touch marks the file at p used now, so that trimming keeps it longer.
// A failure (the file was just removed, a read-only directory) changes
// nothing.
func (d *Dir) Touch(p string) {
	now := time.Now()
	_ = os.Chtimes(p, now, now)
}

// Create returns a new temporary file in the sub-directory sub (created
// if missing), to be written and then given to Commit or removed.
func (d *Dir) Create(sub, name string) (*os.File, error) {
	if err := d.checkSub(sub); err != nil {
		return nil, err
	}
	dir := filepath.Join(d.root, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, tempPrefix+name+"-*")
}

// Commit renames the temporary file tmp (the name of a file of Create,
// written, open or closed) into place as the file name of sub, then trims
// the directory. A file larger than the bound is removed instead, and
// ErrTooLarge returned. On any error tmp is removed. A handle the caller
// keeps on tmp goes on reading the file where it now lives.
func (d *Dir) Commit(tmp, sub, name string) error {
	fail := func(err error) error {
		os.Remove(tmp)
		return err
	}
	if err := d.checkSub(sub); err != nil {
		return fail(err)
	}
	st, err := os.Stat(tmp)
	if err != nil {
		return fail(err)
	}
	if d.max > 0 && st.Size() > d.max {
		return fail(fmt.Errorf("%w: %d bytes, the cache holds at most %d", ErrTooLarge, st.Size(), d.max))
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, d.Path(sub, name)); err != nil {
		return fail(err)
	}
	// The file is in place; trimming is best effort.
	_ = d.Trim()
	return nil
}

// ErrTooLarge is Commit's error for a file larger than the bound.
var ErrTooLarge = errors.New("too large for the cache")

// file is a file Trim may remove.
type file struct {
	path string
	size int64
	used time.Time
}

// Trim removes the files used least recently, among those directly in
// the sub-directories named to Open, until they hold at most nine tenths
// of the bound, and temporary files older than an
// hour (left by a process that died), which an unbounded Dir removes
// too. It does nothing when another process is trimming.
func (d *Dir) Trim() error {
	lock, err := os.OpenFile(filepath.Join(d.root, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return nil // another process trims
	}
	var (
		files []file
		total int64
	)
	now := time.Now()
	for _, sub := range d.subs {
		dir := filepath.Join(d.root, filepath.FromSlash(sub))
		entries, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // nothing written there yet
			}
			return err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			p := filepath.Join(dir, e.Name())
			if strings.HasPrefix(e.Name(), tempPrefix) {
				if now.Sub(fi.ModTime()) > staleAge {
					_ = os.Remove(p)
				}
				continue
			}
			files = append(files, file{p, fi.Size(), fi.ModTime()})
			total += fi.Size()
		}
	}
	if d.max <= 0 || total <= d.max {
		return nil
	}
	sort.Slice(files, func(i, j int) bool {
		if !files[i].used.Equal(files[j].used) {
			return files[i].used.Before(files[j].used)
		}
		return files[i].path < files[j].path
	})
	goal := d.max / 10 * 9
	for _, f := range files {
		if total <= goal {
			break
		}
		if err := os.Remove(f.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.size
		}
	}
	return nil
}
