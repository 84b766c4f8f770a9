package cache

import (
	"context"
	"io/fs"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// The tests build caches the way opm serve does (alpha/action's
// LoadServeTemp and LoadServeDir), without its memory policy.

// build loads the catalog at fsys into an unsaved cache in tmpDir, or in
// memory when no file can be created there.
func build(ctx context.Context, fsys fs.FS, tmpDir string) (*Snapshot, bool, error) {
	st := scratch.CreateOrMemory(tmpDir, "fastopm-serve-*.cache")
	w, err := NewWriter(st)
	if err != nil {
		return nil, false, err
	}
	if err := w.KeepLines(nil); err != nil {
		return nil, false, err
	}
	opts := registry.Options{Sink: w, Lines: w}
	if !st.InMemory() {
		opts.Stash = w
	}
	x, err := registry.Load(ctx, fsys, opts)
	if err != nil {
		st.Close()
		return nil, false, err
	}
	snap, err := w.Snapshot(x)
	return snap, st.InMemory(), err
}

// buildDir builds the cache of the catalog at fsys into dir, with the
// catalog's JSON lines (opm serve --cache-http).
func buildDir(ctx context.Context, fsys fs.FS, dir, producer string) (*Snapshot, error) {
	return buildDirLines(ctx, fsys, dir, producer, true)
}

// buildDirLines builds the cache of the catalog at fsys into dir, with or
// without the catalog's JSON lines.
func buildDirLines(ctx context.Context, fsys fs.FS, dir, producer string, lines bool) (*Snapshot, error) {
	b, err := NewDirBuild(dir)
	if err != nil {
		return nil, err
	}
	if lines {
		if err := b.KeepLines(); err != nil {
			b.Abort()
			return nil, err
		}
	}
	fp, err := ComputeFingerprint(ctx, fsys)
	if err != nil {
		b.Abort()
		return nil, err
	}
	x, err := registry.Load(ctx, fsys, registry.Options{Sink: b.Writer(), Stash: b.Writer(), Lines: b.Writer()})
	if err != nil {
		b.Abort()
		return nil, err
	}
	return b.Commit(ctx, x, fp, producer)
}

// deriveLines gives snap the JSON lines of the catalog at fsys, as opm
// serve --http-addr does over a cache built without them.
func deriveLines(ctx context.Context, fsys fs.FS, snap *Snapshot, tmpDir string) error {
	b, err := NewLineBuilder(scratch.CreateOrMemory(tmpDir, "lines-*"), scratch.CreateOrMemory(tmpDir, "staging-*"))
	if err != nil {
		return err
	}
	if err := declcfg.Walk(ctx, fsys, func(blob *declcfg.Blob) error { return b.PutLine(blob) }); err != nil {
		b.Close()
		return err
	}
	return snap.AddLines(b)
}
