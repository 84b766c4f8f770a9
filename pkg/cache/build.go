package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"syscall"
	"time"

	"github.com/fastopm/fastopm/pkg/registry"
)

// tempPrefix starts the names of the files a build writes into a cache
// directory before renaming the finished cache into place.
const tempPrefix = ".fastopm-serve-tmp-"

// Build reads the catalog at fsys once, validates it and stores its
// answers without saving a cache: in an unlinked temporary file in tmpDir
// (os.TempDir() when empty) so nothing is left behind, or, when no file
// can be created there, in memory. InMemory reports the latter.
func Build(ctx context.Context, fsys fs.FS, tmpDir string) (snap *Snapshot, inMemory bool, err error) {
	if files, err := catalogFiles(fsys); err == nil {
		defer limitLoadMemory(files)()
	}
	var st storage
	f, err := os.CreateTemp(tmpDir, "fastopm-serve-*.cache")
	if err == nil {
		// Unlinked at once: the file lives as long as the process holds
		// it, even after a SIGKILL.
		_ = os.Remove(f.Name())
		st = f
	} else {
		st, inMemory = &memStorage{}, true
	}
	w, err := newWriter(st)
	if err != nil {
		st.Close()
		return nil, false, err
	}
	var sink registry.Sink = w
	if inMemory {
		// Stashing into memory would only keep the stashed bytes for as
		// long as the cache is served.
		sink = struct{ sinkOnly }{w}
	}
	x, err := registry.Load(ctx, fsys, registry.Options{Sink: sink})
	if err != nil {
		st.Close()
		return nil, false, err
	}
	snap, err = w.Snapshot(x)
	if err != nil {
		st.Close()
		return nil, false, err
	}
	return snap, inMemory, nil
}

// sinkOnly hides a Writer's registry.Stash methods.
type sinkOnly interface {
	PutBundle(a *registry.BundleAnswer) (registry.BodyRef, error)
	PutMeta(blob []byte) (registry.BodyRef, error)
}

// BuildDir builds the cache of the catalog at fsys into dir (created when
// missing) and returns it, opened. The new cache replaces the old one
// atomically: a concurrent reader sees the old cache or the new one. The
// files are readable by every user, as a catalog image's cache must be
// (it is built as root and served as another user).
//
// The cache file is reproducible: the same catalog built by the same opm
// (producer) gives the same bytes, whatever the scheduling of the parallel
// load. The load stores the answers, in the order its workers produce
// them, in an unlinked scratch file in dir; Writer.Finish then moves them
// into the cache file in the index's order.
func BuildDir(ctx context.Context, fsys fs.FS, dir, producer string) (*Snapshot, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cache directory: %w", err)
	}
	// What builds killed before they finished left behind; a failure
	// here shows again, better worded, when the new file is created.
	_, _ = removeDeadBuilds(dir)
	f, err := createBuildFile(dir)
	if err != nil {
		return nil, fmt.Errorf("create cache file: %w", err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// The scratch file is next to the cache, on the same file system, so
	// that the final copy can stay in the kernel; unlinked at once, it
	// disappears with the process whatever happens.
	scratch, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("create cache file: %w", err)
	}
	_ = os.Remove(scratch.Name())
	defer scratch.Close()
	// The fingerprint is taken first: if the catalog changes during the
	// build, the cache is stale at the next start rather than wrong.
	fp, err := ComputeFingerprint(ctx, fsys)
	if err != nil {
		return nil, err
	}
	defer limitLoadMemory(fp.Files)()
	w, err := NewWriter(scratch)
	if err != nil {
		return nil, err
	}
	x, err := registry.Load(ctx, fsys, registry.Options{Sink: w})
	if err != nil {
		return nil, err
	}
	snap, err := w.Finish(ctx, f, x, fp, producer)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		return nil, fmt.Errorf("make cache readable: %w", err)
	}
	final := filepath.Join(dir, FileName)
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("install cache: %w", err)
	}
	done = true
	snap.Path = final
	return snap, nil
}

// limitLoadMemory sets a soft memory limit for the time of a catalog load
// and returns the function that lifts it. The load's live heap grows with
// the catalog (its model and index) while most of what it allocates is
// short-lived; without a limit the collector lets the heap reach twice the
// live size before it runs, which is what a pod's memory peak would be.
//
// A load asks for 40 MiB plus a sixteenth of the catalog's bytes, above
// the live heap of the catalogs measured (at most about 30 MiB on the
// 491 MB benchmark catalog, half of it file buffers): there the peak drops
// from 157 to 90 MB at the same CPU time. A catalog heavier per byte (many
// small bundles) would make the collector run all the time under that
// limit, so a watcher keeps the limit at least half again the live heap
// while loads run. Loads that overlap in one process add up their
// requests; the last one to end restores the limit found by the first. A
// GOMEMLIMIT set by the user is left alone.
func limitLoadMemory(files []FileSum) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	var size int64
	for _, f := range files {
		size += f.Size
	}
	ask := 40<<20 + size/16
	lm := &loadMemory
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if lm.loads == 0 {
		lm.prev = debug.SetMemoryLimit(-1)
		lm.asked, lm.limit = 0, 0
		lm.stop = make(chan struct{})
		go lm.watch(lm.stop)
	}
	lm.loads++
	lm.asked += ask
	lm.raise(lm.asked)
	return func() {
		lm.mu.Lock()
		defer lm.mu.Unlock()
		lm.loads--
		lm.asked -= ask
		if lm.loads > 0 {
			return // the limit stays at least what the others asked for
		}
		// The watcher sees stop closed as soon as it gets the lock, and
		// never raises the limit again.
		close(lm.stop)
		debug.SetMemoryLimit(lm.prev)
	}
}

// loadMemory is the process's memory limit policy while catalogs load.
var loadMemory loadMemoryState

type loadMemoryState struct {
	mu    sync.Mutex
	loads int           // loads running
	prev  int64         // the limit before the first of them
	asked int64         // what the running loads asked for, together
	limit int64         // the limit set
	stop  chan struct{} // closed when the last load ends
}

// raise sets the limit to want if that is higher. lm.mu is held.
func (lm *loadMemoryState) raise(want int64) {
	if want > lm.limit {
		lm.limit = want
		debug.SetMemoryLimit(want)
	}
}

// watch keeps the limit at least half again the live heap until stop is
// closed.
func (lm *loadMemoryState) watch(stop chan struct{}) {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		metrics.Read(live)
		if live[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		lm.mu.Lock()
		select {
		case <-stop:
			lm.mu.Unlock()
			return
		default:
		}
		lm.raise(int64(live[0].Value.Uint64()) * 3 / 2)
		lm.mu.Unlock()
	}
}

// IsReadOnly reports whether err comes from a file system that refuses
// writes (read-only, or not writable by this user).
func IsReadOnly(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// memStorage is a cache kept in memory, for when no file can be written.
type memStorage struct {
	mu  sync.RWMutex
	buf []byte
}

func (m *memStorage) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if end := int(off) + len(p); end > len(m.buf) {
		if end > cap(m.buf) {
			nb := make([]byte, end, max(2*cap(m.buf), end))
			copy(nb, m.buf)
			m.buf = nb
		}
		m.buf = m.buf[:end]
	}
	copy(m.buf[off:], p)
	return len(p), nil
}

func (m *memStorage) ReadAt(p []byte, off int64) (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if off >= int64(len(m.buf)) {
		return 0, io.EOF
	}
	n := copy(p, m.buf[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memStorage) Close() error {
	m.mu.Lock()
	m.buf = nil
	m.mu.Unlock()
	return nil
}
