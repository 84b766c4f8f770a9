package action

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// The serve load: one pass over the catalog (registry.Load) that validates
// it, builds the query index and hands every answer to a cache Writer,
// under the load's memory policy (memlimit.go). pkg/cache is only the
// storage format; what is read, where the answers go and how much memory
// the load may take are decided here.

// LoadServeTemp loads the catalog at fsys into a cache that is never
// saved: an unlinked temporary file in tmpDir (os.TempDir() when empty),
// gone with the process, or memory when no file can be created there
// (inMemory). It is the cold start of `opm serve` without --cache-dir.
// With lines, the snapshot also keeps the catalog as JSON lines for the
// HTTP side (cache.Snapshot.Lines); they wait in a second temporary file
// until the load is done.
func LoadServeTemp(ctx context.Context, fsys fs.FS, tmpDir string, lines bool, walk ...declcfg.WalkOption) (snap *cache.Snapshot, inMemory bool, err error) {
	defer limitLoadMemory(catalogSize(fsys, walk))()
	st := scratch.CreateOrMemory(tmpDir, "fastopm-serve-*.cache")
	w, err := cache.NewWriter(st)
	if err != nil {
		st.Close()
		return nil, false, err
	}
	opts := registry.Options{Sink: w, Walk: walk}
	var staging *scratch.File
	if lines {
		// Snapshot closes the staging file once the lines are in order;
		// a load that fails closes it here (a hub tries a failing
		// catalog again and again: each attempt's file would stay open,
		// and its bytes on disk, until a finalizer ran).
		staging = scratch.CreateOrMemory(tmpDir, "fastopm-lines-*.tmp")
		if err := w.KeepLines(staging); err != nil {
			st.Close()
			staging.Close()
			return nil, false, err
		}
		opts.Lines = w
	}
	if !st.InMemory() {
		// Stashing into memory would only keep the bytes for as long as
		// the cache is served.
		opts.Stash = w
	}
	x, err := registry.Load(ctx, fsys, opts)
	if err == nil {
		snap, err = w.Snapshot(x)
	}
	if err != nil {
		st.Close()
		if staging != nil {
			_ = staging.Close() // already closed when Snapshot got that far
		}
		return nil, false, err
	}
	return snap, st.InMemory(), nil
}

// LoadServeDir loads the catalog at fsys into a new cache in dir (created
// when missing), replacing the cache there atomically, and returns it
// opened. producer is the version of opm recorded in the cache. With
// lines, the cache also carries the catalog as JSON lines for the HTTP
// side (`--cache-http`); without, it holds what gRPC serves, and
// LoadServeLines derives the lines when HTTP is asked for. It is `opm
// serve --cache-dir`'s build, and --cache-only's.
func LoadServeDir(ctx context.Context, fsys fs.FS, dir, producer string, lines bool, walk ...declcfg.WalkOption) (*cache.Snapshot, error) {
	b, err := cache.NewDirBuild(dir)
	if err != nil {
		return nil, err
	}
	if lines {
		if err := b.KeepLines(); err != nil {
			b.Abort()
			return nil, err
		}
	}
	// The fingerprint is taken first: if the catalog changes during the
	// build, the cache is stale at the next start rather than wrong.
	fp, err := cache.ComputeFingerprint(ctx, fsys, walk...)
	if err != nil {
		b.Abort()
		return nil, err
	}
	defer limitLoadMemory(fp.Size())()
	w := b.Writer()
	x, err := registry.Load(ctx, fsys, registry.Options{Sink: w, Stash: w, Lines: w, Walk: walk})
	if err != nil {
		b.Abort()
		return nil, err
	}
	return b.Commit(ctx, x, fp, producer)
}

// LoadServeLines reads the catalog at fsys as JSON lines in catalogd's
// order, for a saved cache built without them that is to serve HTTP: the
// lines are what a cache built with them holds, byte for byte, read from
// the same catalog (the caller checks the cache's fingerprint). They wait
// in unlinked temporary files in tmpDir (os.TempDir() when empty), or in
// memory when no file can be created there (inMemory); give the result to
// the snapshot with Snapshot.AddLines, or Close it.
func LoadServeLines(ctx context.Context, fsys fs.FS, tmpDir string, walk ...declcfg.WalkOption) (b *cache.LineBuilder, inMemory bool, err error) {
	dst := scratch.CreateOrMemory(tmpDir, "fastopm-lines-*.cache")
	b, err = cache.NewLineBuilder(dst, scratch.CreateOrMemory(tmpDir, "fastopm-lines-*.tmp"))
	if err != nil {
		dst.Close()
		return nil, false, err
	}
	err = declcfg.Walk(ctx, fsys, func(blob *declcfg.Blob) error {
		if err := b.PutLine(blob); err != nil {
			return fmt.Errorf("store %s: %w", blob.Pos(), err)
		}
		return nil
	}, walk...)
	if err != nil {
		b.Close()
		return nil, false, err
	}
	return b, dst.InMemory(), nil
}

// catalogSize is the size of the files the loader will read, or 0 when
// they cannot be listed (the load then reports why).
func catalogSize(fsys fs.FS, walk []declcfg.WalkOption) int64 {
	files, _ := declcfg.ListFiles(fsys, walk...)
	var n int64
	for _, f := range files.Catalog {
		n += f.Size
	}
	return n
}
