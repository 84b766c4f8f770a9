package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// The cache file:
//
//	header   16 bytes: magic "FASTOPM\x00", format version (uint32 LE),
//	         4 reserved bytes
//	bodies   bundle records and custom-blob records (located by the
//	         index). In a saved cache (Finish) they are in the index's
//	         order, so the file is reproducible; in the unsaved cache of a
//	         cold start (Snapshot), in the order they were produced.
//	lines    the catalog as JSON lines, in catalogd's order (lines.go);
//	         only when asked for (KeepLines): a saved cache built for
//	         the HTTP side (opm serve --cache-http), a cold start with
//	         --http-addr
//	index    the serialized registry.Index, catalog fingerprint and the
//	         table of the lines
//	trailer  32 bytes: index offset and length (uint64 LE), CRC-32C of the
//	         index, format version (uint32 LE), magic "FOPMIDX\x00"
//
// Start-up reads the header, the trailer and the index; bodies are read
// when a request needs them.
const (
	headerSize   = 16
	trailerSize  = 32
	headerMagic  = "FASTOPM\x00"
	trailerMagic = "FOPMIDX\x00"
)

// FormatVersion is the version of the cache format and of the answers'
// encoding. It changes whenever a cache built by an older opm could answer
// differently from a fresh one, or could not be read by it as its own;
// such a cache is rebuilt (or refused, with integrity enforcement).
//
// Version 2 added the JSON lines and always carried them; version 3
// carries them only when asked for, and fingerprints the catalog with
// XXH64 instead of SHA-256.
const FormatVersion = 3

// Writer stores answers in a cache file as a catalog is read. It is the
// registry.Sink of a cache build; its methods are safe for concurrent use.
//
// Small records are gathered in memory and written a batch at a time: a
// catalog of many small custom blobs would otherwise cost a system call
// per blob.
type Writer struct {
	f Storage

	mu   sync.Mutex
	size int64 // the bytes stored, written or pending
	// pending holds the records at [pendingOff, size) that are not yet
	// written; when not empty it ends at size.
	pending    []byte
	pendingOff int64
	err        error

	lines *lineLog // KeepLines
}

// A record up to batchRecord bytes waits in Writer.pending until
// batchSize bytes are there.
const (
	batchRecord = 64 << 10
	batchSize   = 1 << 20
)

var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// Storage is where a Writer keeps a cache's bytes: a *scratch.File (an
// unlinked temporary file, or memory) for a cold start or the records of a
// cache build.
type Storage interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

// NewWriter stores answers in st, which must be empty: as a cache of its
// own (Snapshot), or as the scratch space of a cache file that Finish
// writes elsewhere.
func NewWriter(st Storage) (*Writer, error) {
	var h [headerSize]byte
	copy(h[:], headerMagic)
	binary.LittleEndian.PutUint32(h[8:], FormatVersion)
	if _, err := st.WriteAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("write cache header: %w", err)
	}
	return &Writer{f: st, size: headerSize}, nil
}

// append stores rec at the end of the file and returns its offset.
func (w *Writer) append(rec []byte) (int64, error) {
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return 0, w.err
	}
	off := w.size
	w.size += int64(len(rec))
	if len(rec) <= batchRecord {
		if len(w.pending)+len(rec) > batchSize {
			w.flushLocked()
		}
		if len(w.pending) == 0 {
			w.pendingOff = off
		}
		w.pending = append(w.pending, rec...)
		err := w.err
		w.mu.Unlock()
		return off, err
	}
	// pending must stay contiguous and end at size.
	w.flushLocked()
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if _, err := w.f.WriteAt(rec, off); err != nil {
		return 0, w.fail(err)
	}
	return off, nil
}

// flushLocked writes the pending records. w.mu is held.
func (w *Writer) flushLocked() {
	if len(w.pending) == 0 || w.err != nil {
		return
	}
	if _, err := w.f.WriteAt(w.pending, w.pendingOff); err != nil {
		w.err = fmt.Errorf("write cache: %w", err)
	}
	w.pending = w.pending[:0]
}

// fail records the first write error and returns it.
func (w *Writer) fail(err error) error {
	err = fmt.Errorf("write cache: %w", err)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
	return err
}

// errTooLarge is a record whose length does not fit the cache's 32 bits.
var errTooLarge = errors.New("record larger than 4 GiB")

// PutBundle encodes and stores a bundle's answer.
func (w *Writer) PutBundle(a *registry.BundleAnswer) (registry.BodyRef, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	rec, err := encodeBundle((*bp)[:0], a)
	*bp = rec
	if err != nil {
		return registry.BodyRef{}, err
	}
	if len(rec) > math.MaxUint32 {
		return registry.BodyRef{}, errTooLarge
	}
	total, list := recordLens(rec)
	off, err := w.append(rec)
	if err != nil {
		return registry.BodyRef{}, err
	}
	return registry.BodyRef{Off: uint64(off), Len: uint32(total), Prefix: uint32(list)}, nil
}

// PutMeta stores a custom-schema blob as an encoded google.protobuf.Struct,
// prefixed with its CRC-32C.
func (w *Writer) PutMeta(blob []byte) (registry.BodyRef, error) {
	enc := structEncoders.Get().(*structEncoder)
	defer structEncoders.Put(enc)
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	rec, err := enc.appendStruct(append((*bp)[:0], 0, 0, 0, 0), blob)
	*bp = rec
	if err != nil {
		return registry.BodyRef{}, fmt.Errorf("encode blob as a protobuf Struct: %w", err)
	}
	if len(rec) > math.MaxUint32 {
		return registry.BodyRef{}, errTooLarge
	}
	binary.LittleEndian.PutUint32(rec, crc32.Checksum(rec[4:], castagnoli))
	off, err := w.append(rec)
	if err != nil {
		return registry.BodyRef{}, err
	}
	return registry.BodyRef{Off: uint64(off), Len: uint32(len(rec))}, nil
}

var structEncoders = sync.Pool{New: func() any { return new(structEncoder) }}

// Stash keeps b in the storage until the load is done (registry.Stash).
// No index refers to it, so Finish leaves it out of a saved cache.
func (w *Writer) Stash(b []byte) (registry.BodyRef, error) {
	if len(b) > math.MaxUint32 {
		return registry.BodyRef{}, errTooLarge
	}
	off, err := w.append(b)
	if err != nil {
		return registry.BodyRef{}, err
	}
	return registry.BodyRef{Off: uint64(off), Len: uint32(len(b))}, nil
}

// ReadStash reads back what Stash kept.
func (w *Writer) ReadStash(r registry.BodyRef) ([]byte, error) {
	w.mu.Lock()
	if len(w.pending) > 0 && int64(r.Off) >= w.pendingOff {
		start := int64(r.Off) - w.pendingOff
		if start+int64(r.Len) > int64(len(w.pending)) {
			w.mu.Unlock()
			return nil, fmt.Errorf("read cache: %w", io.ErrUnexpectedEOF)
		}
		b := bytes.Clone(w.pending[start : start+int64(r.Len)])
		w.mu.Unlock()
		return b, nil
	}
	w.mu.Unlock()
	return readRecord(w.f, r.Off, r.Len)
}

// Finish writes the complete cache file into dst, which must be empty and
// open for reading and writing: the header; the records x refers to, in
// x's order (bundles by package and name, then custom blobs by schema,
// package, name and content); the index, with fp and producer; the
// trailer. The records are moved from w's storage as they are (on Linux
// by copy_file_range, without passing through memory), not encoded again,
// and x's body references are rewritten to their places in dst. Records x
// does not refer to (duplicate custom blobs) are left out.
//
// The answers reach w in whatever order the parallel load produces them;
// the file written here depends only on the catalog, fp and producer, so
// two builds of the same catalog by the same opm are byte for byte equal.
//
// The Snapshot returned owns dst and serves x. w is done: its storage is
// not used by the Snapshot and may be closed.
func (w *Writer) Finish(ctx context.Context, dst *os.File, x *registry.Index, fp Fingerprint, producer string) (*Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	w.pending = nil
	if w.err != nil {
		return nil, w.err
	}
	// Plan the moves, coalescing records that are already adjacent in w.
	var moves []move
	end := int64(headerSize)
	var bad error
	eachBody(x, func(name string, r *registry.BodyRef) {
		if bad != nil {
			return
		}
		if r.Off < headerSize || r.Off+uint64(r.Len) > uint64(w.size) {
			bad = fmt.Errorf("write cache: %s: stored answer out of range", name)
			return
		}
		if k := len(moves) - 1; k >= 0 && moves[k].from+moves[k].n == int64(r.Off) {
			moves[k].n += int64(r.Len)
		} else {
			moves = append(moves, move{int64(r.Off), int64(r.Len)})
		}
		end += int64(r.Len)
	})
	if bad != nil {
		return nil, bad
	}

	var h [headerSize]byte
	copy(h[:], headerMagic)
	binary.LittleEndian.PutUint32(h[8:], FormatVersion)
	if _, err := dst.WriteAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("write cache header: %w", err)
	}
	if _, err := dst.Seek(headerSize, io.SeekStart); err != nil {
		return nil, fmt.Errorf("write cache: %w", err)
	}
	for i, m := range moves {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := copyRange(dst, w.f, m.from, m.n); err != nil {
			return nil, fmt.Errorf("write cache: %w", err)
		}
	}
	if pos, err := dst.Seek(0, io.SeekCurrent); err != nil || pos != end {
		return nil, fmt.Errorf("write cache: bodies end at %d, want %d (%v)", pos, end, err)
	}
	bodiesEnd := end
	var lines *Lines
	if w.lines != nil {
		if err := w.lines.flush(w); err != nil {
			return nil, err
		}
		if len(w.lines.recs) == 0 && (len(x.Packages) > 0 || len(x.Metas) > 0) {
			return nil, errors.New("write cache: the catalog's JSON lines were not stored (the load's Lines is not set)")
		}
		var lmoves []move
		lines, lmoves = w.lines.order()
		lines.off, lines.f = end, dst
		var err error
		if lines.sum, err = writeLines(ctx, dst, end, w.lines.stage.f, lmoves); err != nil {
			return nil, err
		}
		end += lines.size
		lines.finish()
	}

	at := uint64(headerSize)
	eachBody(x, func(_ string, r *registry.BodyRef) {
		r.Off = at
		at += uint64(r.Len)
	})
	idx := encodeIndex(x, fp, producer, lines)
	var t [trailerSize]byte
	binary.LittleEndian.PutUint64(t[0:], uint64(end))
	binary.LittleEndian.PutUint64(t[8:], uint64(len(idx)))
	binary.LittleEndian.PutUint32(t[16:], crc32.Checksum(idx, castagnoli))
	binary.LittleEndian.PutUint32(t[20:], FormatVersion)
	copy(t[24:], trailerMagic)
	if _, err := dst.WriteAt(append(idx, t[:]...), end); err != nil {
		return nil, fmt.Errorf("write cache index: %w", err)
	}
	modified := time.Now()
	if st, err := dst.Stat(); err == nil {
		modified = st.ModTime()
	}
	return &Snapshot{Index: x, Fingerprint: fp, Producer: producer, f: dst, bodiesEnd: bodiesEnd, lines: lines, Modified: modified}, nil
}

// eachBody calls fn with every body reference of x, in the order of the
// records of a cache file: bundles, then custom blobs.
func eachBody(x *registry.Index, fn func(name string, r *registry.BodyRef)) {
	for i := range x.Bundles {
		fn(x.Bundles[i].Name, &x.Bundles[i].Body)
	}
	for i := range x.Metas {
		fn(x.Metas[i].Name, &x.Metas[i].Body)
	}
}

// copyRange appends n bytes of src, from offset from, to dst at dst's
// current offset: in the kernel when src is a scratch file.
func copyRange(dst *os.File, src Storage, from, n int64) error {
	if sc, ok := src.(*scratch.File); ok {
		return sc.CopyTo(dst, from, n)
	}
	m, err := dst.ReadFrom(io.NewSectionReader(src, from, n))
	if err == nil && m != n {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// Snapshot serves the answers this Writer stored, with the Index x built
// alongside, without reading the file back. The Snapshot owns the file.
func (w *Writer) Snapshot(x *registry.Index) (*Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	w.pending = nil
	if w.err != nil {
		return nil, w.err
	}
	snap := &Snapshot{Index: x, f: w.f, bodiesEnd: w.size, Modified: time.Now()}
	if w.lines != nil {
		stage := w.lines.stage
		if err := w.lines.flush(w); err != nil {
			return nil, err
		}
		lines, moves := w.lines.order()
		lines.off, lines.f = w.size, w.f
		var err error
		if lines.sum, err = writeLines(context.Background(), w.f, w.size, stage.f, moves); err != nil {
			return nil, err
		}
		if stage != w {
			// The staged copies are not needed any more.
			stage.f.Close()
		}
		lines.finish()
		snap.lines = lines
	}
	return snap, nil
}

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// flush writes the lines still pending in a staging Writer other than w
// (whose lock the caller holds).
func (l *lineLog) flush(w *Writer) error {
	if l.stage == w {
		return nil
	}
	l.stage.mu.Lock()
	defer l.stage.mu.Unlock()
	l.stage.flushLocked()
	return l.stage.err
}

// errClosed is returned by reads after Close.
var errClosed = errors.New("cache closed")
