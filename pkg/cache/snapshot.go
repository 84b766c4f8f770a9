package cache

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fastopm/fastopm/pkg/registry"
)

// FileName is the name of the cache file inside a cache directory.
const FileName = "fastopm-serve.cache"

// Snapshot is a loaded serve cache: the Index in memory, the answers read
// from the cache file when a request needs them.
type Snapshot struct {
	// Index is the catalog's query index.
	Index *registry.Index
	// Fingerprint identifies the catalog the cache was built from (empty
	// for a cache that was never saved).
	Fingerprint Fingerprint
	// Producer is the version of the opm that built the cache.
	Producer string
	// Path is the cache file ("" for an unlinked temporary file).
	Path string

	// Modified is when the snapshot was made: the cache file's time for
	// a saved cache. The HTTP side gives it as Last-Modified, as catalogd
	// gives its catalog file's.
	Modified time.Time

	f         Storage
	bodiesEnd int64
	lines     *Lines
	extra     io.Closer // the storage of lines added by AddLines
	closed    atomic.Bool
}

// Lines is the catalog as JSON lines, as catalogd serves it; nil for a
// cache built without them (Writer.KeepLines, DirBuild.KeepLines) until
// AddLines derives them.
func (s *Snapshot) Lines() *Lines { return s.lines }

// Reason says why a cache was not used.
type Reason int

// Reasons a cache is rejected.
const (
	// Missing: there is no cache of this opm in the directory.
	Missing Reason = iota + 1
	// OtherFormat: the cache was written by an opm with another cache
	// format (including upstream opm's).
	OtherFormat
	// Corrupt: the cache file is damaged or incomplete.
	Corrupt
	// Stale: the catalog changed since the cache was built.
	Stale
	// Incomplete: the cache lacks a part that was asked for (the JSON
	// lines of a cache built without them, when --cache-http asks).
	Incomplete
)

func (r Reason) String() string {
	switch r {
	case Missing:
		return "missing"
	case OtherFormat:
		return "built by another version"
	case Corrupt:
		return "corrupt"
	case Stale:
		return "stale"
	case Incomplete:
		return "incomplete"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// RejectedError says precisely why a cache cannot be used.
type RejectedError struct {
	Reason Reason
	// Path is the cache file or directory.
	Path string
	// Detail is the precise cause, for people.
	Detail string
	// Empty is set for a Missing cache whose directory does not exist or
	// has no entries at all.
	Empty bool
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("cache %s is %s: %s", e.Path, e.Reason, e.Detail)
}

func rejected(r Reason, path, format string, args ...any) *RejectedError {
	return &RejectedError{Reason: r, Path: path, Detail: fmt.Sprintf(format, args...)}
}

// upstreamEntries are what upstream opm's cache backends leave in a cache
// directory.
var upstreamEntries = []string{"pogreb.v1", "digest", "packages.json", "cache"}

// OpenDir opens the cache in dir. A directory without a usable cache gives
// a *RejectedError. Opening only reads: it works on a read-only file
// system.
func OpenDir(dir string) (*Snapshot, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e := rejected(Missing, dir, "the directory does not exist")
		e.Empty = true
		return nil, e
	case err != nil:
		return nil, fmt.Errorf("read cache directory: %w", err)
	}
	var names, foreign []string
	for _, ent := range entries {
		if ent.Name() == FileName {
			return Open(filepath.Join(dir, FileName))
		}
		if strings.HasPrefix(ent.Name(), tempPrefix) {
			continue // an interrupted build
		}
		names = append(names, ent.Name())
		if slices.Contains(upstreamEntries, ent.Name()) {
			foreign = append(foreign, ent.Name())
		}
	}
	switch {
	case len(foreign) > 0:
		return nil, rejected(OtherFormat, dir, "it holds a cache of upstream opm (%s), which this opm does not read; rebuild it with this opm (opm serve --cache-only)", strings.Join(foreign, ", "))
	case len(names) > 0:
		return nil, rejected(Missing, dir, "there is no %s in the directory (it holds: %s)", FileName, strings.Join(names, ", "))
	}
	e := rejected(Missing, dir, "the directory is empty")
	e.Empty = true
	return nil, e
}

// Open opens a cache file and reads its index. The file's answers are read
// when requested; Close releases the file.
func Open(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, rejected(Missing, path, "the file does not exist")
	}
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	s, err := load(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func load(f *os.File, path string) (*Snapshot, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	size := st.Size()
	if size < headerSize+trailerSize {
		return nil, rejected(Corrupt, path, "the file is truncated (%d bytes)", size)
	}
	var h [headerSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("read cache header: %w", err)
	}
	if string(h[:8]) != headerMagic {
		return nil, rejected(Corrupt, path, "it is not a serve cache of this opm (bad magic)")
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != FormatVersion {
		return nil, rejected(OtherFormat, path, "it was written in cache format version %d; this opm reads version %d", v, FormatVersion)
	}
	var t [trailerSize]byte
	if _, err := f.ReadAt(t[:], size-trailerSize); err != nil {
		return nil, fmt.Errorf("read cache trailer: %w", err)
	}
	if string(t[24:]) != trailerMagic || binary.LittleEndian.Uint32(t[20:]) != FormatVersion {
		return nil, rejected(Corrupt, path, "it has no index (was the build interrupted?)")
	}
	off, n := binary.LittleEndian.Uint64(t[0:]), binary.LittleEndian.Uint64(t[8:])
	if off < headerSize || n > uint64(size) || off+n+trailerSize != uint64(size) {
		return nil, rejected(Corrupt, path, "the index location is out of range")
	}
	idx := make([]byte, n)
	if _, err := f.ReadAt(idx, int64(off)); err != nil {
		return nil, fmt.Errorf("read cache index: %w", err)
	}
	if crc32.Checksum(idx, castagnoli) != binary.LittleEndian.Uint32(t[16:]) {
		return nil, rejected(Corrupt, path, "the index checksum does not match")
	}
	x, fp, producer, lines, err := decodeIndex(idx)
	if err != nil {
		return nil, rejected(Corrupt, path, "the index does not decode: %v", err)
	}
	if err := x.Validate(); err != nil {
		return nil, rejected(Corrupt, path, "%v", err)
	}
	if lines != nil && (lines.off < headerSize || lines.off+lines.size > int64(off)) {
		return nil, rejected(Corrupt, path, "the catalog's JSON lines are out of range")
	}
	for i := range x.Bundles {
		if !inRange(x.Bundles[i].Body, bodiesEnd(lines, off)) || x.Bundles[i].Body.Prefix > x.Bundles[i].Body.Len || x.Bundles[i].Body.Prefix < recordHeader {
			return nil, rejected(Corrupt, path, "bundle %q: answer location out of range", x.Bundles[i].Name)
		}
	}
	for i := range x.Metas {
		if !inRange(x.Metas[i].Body, bodiesEnd(lines, off)) || x.Metas[i].Body.Len < 4 {
			return nil, rejected(Corrupt, path, "custom blob %q: location out of range", x.Metas[i].Name)
		}
	}
	if lines != nil {
		lines.f = f
		lines.finish()
	}
	return &Snapshot{Index: x, Fingerprint: fp, Producer: producer, Path: path, f: f, bodiesEnd: bodiesEnd(lines, off), lines: lines, Modified: st.ModTime()}, nil
}

// bodiesEnd is where a saved cache's records end: at its lines, or at its
// index (off).
func bodiesEnd(lines *Lines, off uint64) int64 {
	if lines != nil {
		return lines.off
	}
	return int64(off)
}

func inRange(r registry.BodyRef, end int64) bool {
	return r.Off >= headerSize && r.Off+uint64(r.Len) <= uint64(end)
}

// ErrCorruptAnswer is returned when a stored answer fails its checksum.
var ErrCorruptAnswer = errors.New("stored answer is corrupt")

// ReadBundle reads a bundle's stored segments. Without payload only the
// segments ListBundles needs are read (csvJson and object are nil).
func (s *Snapshot) ReadBundle(b *registry.Bundle, payload bool) (*Parts, error) {
	n := b.Body.Prefix
	if payload {
		n = b.Body.Len
	}
	rec, err := s.read(b.Body.Off, n)
	if err != nil {
		return nil, fmt.Errorf("bundle %q: %w", b.Name, err)
	}
	p, err := decodeRecord(rec)
	if err != nil {
		return nil, fmt.Errorf("bundle %q: %w: %w", b.Name, ErrCorruptAnswer, err)
	}
	return p, nil
}

// ReadMeta reads a custom-schema blob as an encoded google.protobuf.Struct.
func (s *Snapshot) ReadMeta(m *registry.Meta) ([]byte, error) {
	rec, err := s.read(m.Body.Off, m.Body.Len)
	if err != nil {
		return nil, fmt.Errorf("custom blob %q: %w", m.Name, err)
	}
	if len(rec) < 4 || crc32.Checksum(rec[4:], castagnoli) != binary.LittleEndian.Uint32(rec) {
		return nil, fmt.Errorf("custom blob %q: %w", m.Name, ErrCorruptAnswer)
	}
	return rec[4:], nil
}

func (s *Snapshot) read(off uint64, n uint32) ([]byte, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	if off+uint64(n) > uint64(s.bodiesEnd) {
		return nil, fmt.Errorf("%w: location out of range", ErrCorruptAnswer)
	}
	return readRecord(s.f, off, n)
}

// readRecord reads the n bytes at off of a cache's storage; fewer is an
// error.
func readRecord(f io.ReaderAt, off uint64, n uint32) ([]byte, error) {
	buf := make([]byte, n)
	if m, err := f.ReadAt(buf, int64(off)); m < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read cache: %w", err)
	}
	return buf, nil
}

// Verify reads every stored answer and checks its checksums, so that a
// cache that passes can answer every request: `opm serve` runs it on a
// cache before serving from it. It reads the answers in file order, a
// megabyte at a time (a cache of 100 MB takes a few tens of
// milliseconds). A damaged answer gives a *RejectedError with Reason
// Corrupt naming it.
func (s *Snapshot) Verify(ctx context.Context) error {
	type span struct {
		off  uint64
		n    uint32
		meta int // index into Metas, or -1 for Bundles[bundle]
		bndl int
	}
	spans := make([]span, 0, len(s.Index.Bundles)+len(s.Index.Metas))
	for i := range s.Index.Bundles {
		b := &s.Index.Bundles[i].Body
		spans = append(spans, span{b.Off, b.Len, -1, i})
	}
	for i := range s.Index.Metas {
		m := &s.Index.Metas[i].Body
		spans = append(spans, span{m.Off, m.Len, i, -1})
	}
	if !slices.IsSortedFunc(spans, func(a, b span) int { return cmp.Compare(a.off, b.off) }) {
		slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.off, b.off) })
	}
	var (
		buf    = make([]byte, verifyWindow)
		win    []byte // the file's bytes at [winOff, winOff+len(win))
		winOff uint64
	)
	for i, sp := range spans {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if s.closed.Load() {
			return errClosed
		}
		end := sp.off + uint64(sp.n)
		if end > uint64(s.bodiesEnd) {
			return rejected(Corrupt, s.Path, "%s: %v: location out of range", s.spanName(sp.meta, sp.bndl), ErrCorruptAnswer)
		}
		var rec []byte
		switch {
		case sp.off >= winOff && end <= winOff+uint64(len(win)):
			rec = win[sp.off-winOff : end-winOff]
		case int(sp.n) > len(buf):
			var err error
			if rec, err = readRecord(s.f, sp.off, sp.n); err != nil {
				return err
			}
		default:
			n := min(uint64(len(buf)), uint64(s.bodiesEnd)-sp.off)
			m, err := s.f.ReadAt(buf[:n], int64(sp.off))
			if m < int(sp.n) {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("read cache: %w", err)
			}
			win, winOff = buf[:m], sp.off
			rec = win[:sp.n]
		}
		var bad error
		if sp.meta >= 0 {
			if len(rec) < 4 || crc32.Checksum(rec[4:], castagnoli) != binary.LittleEndian.Uint32(rec) {
				bad = ErrCorruptAnswer
			}
		} else if _, err := decodeRecord(rec); err != nil {
			bad = fmt.Errorf("%w: %w", ErrCorruptAnswer, err)
		}
		if bad != nil {
			return rejected(Corrupt, s.Path, "%s: %v", s.spanName(sp.meta, sp.bndl), bad)
		}
	}
	return nil
}

// VerifyLines checks the checksum of the catalog's JSON lines, which only
// the HTTP side reads (Verify leaves them out: a gRPC-only pod need not
// read them). A damaged section gives a *RejectedError with Reason
// Corrupt.
func (s *Snapshot) VerifyLines(ctx context.Context) error {
	if s.lines == nil {
		return nil
	}
	if err := s.lines.verify(ctx); err != nil {
		if errors.Is(err, ErrCorruptAnswer) {
			return rejected(Corrupt, s.Path, "%v", err)
		}
		return err
	}
	return nil
}

// verifyWindow is how much of the file Verify reads at a time.
var verifyWindow = 1 << 20 // a variable for the tests

// spanName names the answer Verify found damaged.
func (s *Snapshot) spanName(meta, bundle int) string {
	if meta >= 0 {
		m := &s.Index.Metas[meta]
		return fmt.Sprintf("custom blob %q", m.Name)
	}
	b := &s.Index.Bundles[bundle]
	return fmt.Sprintf("bundle %q of package %q", b.Name, s.Index.Packages[b.Package].Name)
}

// Close releases the cache file.
func (s *Snapshot) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.extra != nil {
		s.extra.Close()
	}
	return s.f.Close()
}
