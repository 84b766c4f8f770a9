package cache

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"syscall"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// The catalog as JSON lines: what OLM v1's catalogd serves at
// /api/v1/all, and the index its /api/v1/metas answers from.
//
// catalogd reads a catalog with upstream's loader one file at a time (in
// fs.WalkDir order) and writes each blob as encoding/json encodes it as a
// map (keys sorted, no HTML escaping) followed by a newline: the canonical
// JSON our loader gives (declcfg.Meta.JSON) plus "\n". Its index maps each
// blob's schema, package and name (the blob's own keys: an olm.package has
// no "package") to the blob's place in that file.
//
// The parallel load produces the blobs in no particular order. Writer.PutLine
// stores each line as it comes, in staging storage, with its place in the
// catalog (file, and position in the file); Finish and Snapshot copy the
// lines into one contiguous section in catalogd's order.

// lineRec is a stored line and its place in the catalog.
type lineRec struct {
	file, index       int32
	n                 uint32
	off               uint64 // in the staging storage
	schema, pkg, name string
}

// lineLog collects the lines of a load.
type lineLog struct {
	stage *Writer // where the lines wait; the Writer itself when nil storage was given

	mu     sync.Mutex
	recs   []lineRec
	intern map[string]string
}

// KeepLines makes the Writer keep the catalog as JSON lines (PutLine), for
// the HTTP side of opm serve. The lines wait in staging until Finish or
// Snapshot puts them in order; with a nil staging they wait in the
// Writer's own storage (a cache build's scratch file, which Finish
// discards anyway). KeepLines must be called before the load starts.
func (w *Writer) KeepLines(staging Storage) error {
	stage := w
	if staging != nil {
		var err error
		if stage, err = NewWriter(staging); err != nil {
			return err
		}
	}
	w.lines = &lineLog{stage: stage, intern: map[string]string{}}
	return nil
}

// LineBuilder collects a catalog's JSON lines apart from a load: for a
// saved cache built without them (a gRPC-only image) that opm serve
// --http-addr serves, the lines are derived from the catalog at start-up,
// once its fingerprint has matched the cache's. PutLine receives every
// blob of a declcfg.Walk of the catalog; Snapshot.AddLines then puts them
// in catalogd's order, exactly as a cache built with them holds them.
type LineBuilder struct{ w *Writer }

// NewLineBuilder keeps the lines in dst, both empty storages; they wait in
// staging while the walk runs. dst then belongs to the snapshot that
// serves the lines; staging is closed once the lines are in order.
func NewLineBuilder(dst, staging Storage) (*LineBuilder, error) {
	w, err := NewWriter(dst)
	if err != nil {
		return nil, err
	}
	if err := w.KeepLines(staging); err != nil {
		return nil, err
	}
	return &LineBuilder{w: w}, nil
}

// PutLine stores one blob; it is safe for concurrent use.
func (b *LineBuilder) PutLine(blob *declcfg.Blob) error { return b.w.PutLine(blob) }

// AddLines puts the lines of b in order and serves them with s, which then
// owns b's storage (Close closes it). s must not hold lines yet.
func (s *Snapshot) AddLines(b *LineBuilder) error {
	if s.lines != nil {
		return errors.New("the snapshot already holds the catalog's JSON lines")
	}
	tmp, err := b.w.Snapshot(nil)
	if err != nil {
		b.Close()
		return err
	}
	s.lines, s.extra = tmp.lines, tmp.f
	return nil
}

// Close releases a builder that was not given to a snapshot.
func (b *LineBuilder) Close() error {
	if b.w.lines != nil && b.w.lines.stage != b.w {
		b.w.lines.stage.f.Close()
	}
	return b.w.f.Close()
}

// PutLine stores one blob of the catalog as a JSON line. It is the
// registry.LineSink of the load; it is safe for concurrent use.
func (w *Writer) PutLine(b *declcfg.Blob) error {
	l := w.lines
	if l == nil {
		return nil
	}
	if len(b.JSON)+1 > math.MaxUint32 {
		return fmt.Errorf("%s: %w", b.Pos(), errTooLarge)
	}
	bp := bufPool.Get().(*[]byte)
	rec := append(append((*bp)[:0], b.JSON...), '\n')
	off, err := l.stage.append(rec)
	*bp = rec
	bufPool.Put(bp)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.recs = append(l.recs, lineRec{
		file: int32(b.File), index: int32(b.Index), n: uint32(len(rec)), off: uint64(off),
		schema: l.str(b.Schema), pkg: l.str(b.Package), name: l.str(b.Name),
	})
	l.mu.Unlock()
	return nil
}

// str interns s. l.mu is held.
func (l *lineLog) str(s string) string {
	if v, ok := l.intern[s]; ok {
		return v
	}
	s = string([]byte(s)) // the blob's bytes do not outlive the call
	l.intern[s] = s
	return s
}

// order puts the lines in catalogd's order and returns the table that
// describes them (offsets from the start of the section) and the copies
// that build the section from the staging storage.
func (l *lineLog) order() (*Lines, []move) {
	slices.SortFunc(l.recs, func(a, b lineRec) int {
		if c := cmp.Compare(a.file, b.file); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
	t := &Lines{ids: map[string]uint32{"": 0}, strs: []string{""}}
	t.entries = make([]lineEntry, len(l.recs))
	var moves []move
	var end int64
	for i, r := range l.recs {
		end += int64(r.n)
		t.entries[i] = lineEntry{end: end, schema: t.id(r.schema), pkg: t.id(r.pkg), name: t.id(r.name)}
		if k := len(moves) - 1; k >= 0 && moves[k].from+moves[k].n == int64(r.off) {
			moves[k].n += int64(r.n)
		} else {
			moves = append(moves, move{int64(r.off), int64(r.n)})
		}
	}
	t.size = end
	t.ids = nil
	l.recs, l.intern = nil, nil
	return t, moves
}

// move is a copy of n bytes at from in a staging storage.
type move struct{ from, n int64 }

// Lines is the catalog as JSON lines, in catalogd's order, stored in one
// section of the cache, and the index of catalogd's metas query.
type Lines struct {
	f    io.ReaderAt
	off  int64  // the section's place in the file
	size int64  // its length
	sum  uint32 // its CRC-32C (a saved cache)

	entries []lineEntry
	strs    []string          // schema, package and name strings; strs[0] is ""
	ids     map[string]uint32 // while the table is built
	// bySchema, byPackage and byName list the lines of each value, in
	// order.
	bySchema, byPackage, byName map[string][]int32
}

// lineEntry is one line: where it ends in the section, and its schema,
// package and name (indexes into strs; 0 for a blob without that key).
type lineEntry struct {
	end               int64
	schema, pkg, name uint32
}

func (t *Lines) id(s string) uint32 {
	if v, ok := t.ids[s]; ok {
		return v
	}
	v := uint32(len(t.strs))
	t.strs = append(t.strs, s)
	t.ids[s] = v
	return v
}

// finish builds the query maps.
func (t *Lines) finish() {
	t.bySchema, t.byPackage, t.byName = map[string][]int32{}, map[string][]int32{}, map[string][]int32{}
	for i, e := range t.entries {
		add := func(m map[string][]int32, id uint32) {
			if id != 0 {
				s := t.strs[id]
				m[s] = append(m[s], int32(i))
			}
		}
		add(t.bySchema, e.schema)
		add(t.byPackage, e.pkg)
		add(t.byName, e.name)
	}
}

// Len is the number of lines.
func (t *Lines) Len() int { return len(t.entries) }

// Size is the length of the whole catalog as JSON lines.
func (t *Lines) Size() int64 { return t.size }

// All reads the whole catalog as JSON lines.
func (t *Lines) All() *io.SectionReader { return io.NewSectionReader(t.f, t.off, t.size) }

// OpenAll opens the whole catalog as JSON lines as a file of its own: an
// io.ReadSeeker over a new descriptor of the cache file, whose SendChunk
// lets an HTTP server send it with sendfile(2), or All's reader when the
// cache's file cannot be opened again (a cache in memory). The caller
// closes it.
func (t *Lines) OpenAll() (io.ReadSeekCloser, error) {
	var (
		f   *os.File
		err error
	)
	switch src := t.f.(type) {
	case *scratch.File:
		f, err = src.Reopen()
	case *os.File:
		if f, err = os.Open(fmt.Sprintf("/proc/self/fd/%d", src.Fd())); err != nil {
			f, err = os.Open(src.Name())
		}
	default:
		err = errors.New("not a file")
	}
	if err != nil {
		return struct {
			io.ReadSeeker
			io.Closer
		}{t.All(), io.NopCloser(nil)}, nil
	}
	return &sectionFile{f: f, base: t.off, size: t.size}, nil
}

// sectionFile is a section of a file read through its own descriptor,
// whose offset it keeps at the section's current position, so that
// sendfile(2), which reads from the descriptor's offset, sends the right
// bytes.
type sectionFile struct {
	f          *os.File
	base, size int64
	pos        int64
}

func (s *sectionFile) Read(p []byte) (int, error) {
	if s.pos >= s.size {
		return 0, io.EOF
	}
	if int64(len(p)) > s.size-s.pos {
		p = p[:s.size-s.pos]
	}
	n, err := s.f.Read(p)
	s.pos += int64(n)
	if err == io.EOF && s.pos < s.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (s *sectionFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += s.pos
	case io.SeekEnd:
		off += s.size
	}
	if off < 0 {
		return 0, errors.New("seek before the start")
	}
	if _, err := s.f.Seek(s.base+off, io.SeekStart); err != nil {
		return 0, err
	}
	s.pos = off
	return off, nil
}

// SendChunk returns a reader of the next n bytes at most of the section
// that net/http's connections send with sendfile(2) (it is a syscall.Conn
// bounded by an io.LimitedReader: sendfile reads from the descriptor's
// offset, which Seek keeps at the section's position), and a function to
// call once the reader was consumed, which catches the position up with
// the descriptor's.
func (s *sectionFile) SendChunk(n int64) (*io.LimitedReader, func() error) {
	n = max(min(n, s.size-s.pos), 0)
	return &io.LimitedReader{R: rawFile{s.f}, N: n}, func() error {
		cur, err := s.f.Seek(0, io.SeekCurrent)
		if err != nil {
			return err
		}
		s.pos = cur - s.base
		return nil
	}
}

// rawFile is the descriptor as sendfile wants it; only SendChunk's bounded
// reader exposes it, so nothing reads past the section.
type rawFile struct{ f *os.File }

func (r rawFile) Read(p []byte) (int, error)            { return r.f.Read(p) }
func (r rawFile) SyscallConn() (syscall.RawConn, error) { return r.f.SyscallConn() }

func (s *sectionFile) Close() error { return s.f.Close() }

// Line returns where line i is in the section, and its length.
func (t *Lines) Line(i int) (off, n int64) {
	start := int64(0)
	if i > 0 {
		start = t.entries[i-1].end
	}
	return start, t.entries[i].end - start
}

// Meta returns line i's schema, package and name.
func (t *Lines) Meta(i int) (schema, pkg, name string) {
	e := t.entries[i]
	return t.strs[e.schema], t.strs[e.pkg], t.strs[e.name]
}

// Select returns the lines that catalogd's metas query answers, in order:
// the blobs of schema (any schema when empty) whose package and name are
// pkg and name (either when empty).
func (t *Lines) Select(schema, pkg, name string) []int32 {
	var (
		list  []int32
		check []func(e lineEntry) bool
	)
	want := func(s string, field func(e lineEntry) uint32) func(e lineEntry) bool {
		return func(e lineEntry) bool { return t.strs[field(e)] == s }
	}
	schemaOf := func(e lineEntry) uint32 { return e.schema }
	pkgOf := func(e lineEntry) uint32 { return e.pkg }
	switch {
	case name != "":
		list = t.byName[name]
		if pkg != "" {
			check = append(check, want(pkg, pkgOf))
		}
		if schema != "" {
			check = append(check, want(schema, schemaOf))
		}
	case pkg != "":
		list = t.byPackage[pkg]
		if schema != "" {
			check = append(check, want(schema, schemaOf))
		}
	case schema != "":
		list = t.bySchema[schema]
	default:
		// catalogd answers from its schema sections: every blob has one.
		out := make([]int32, 0, len(t.entries))
		for i, e := range t.entries {
			if e.schema != 0 {
				out = append(out, int32(i))
			}
		}
		return out
	}
	if len(check) == 0 {
		return list
	}
	var out []int32
next:
	for _, i := range list {
		for _, c := range check {
			if !c(t.entries[i]) {
				continue next
			}
		}
		out = append(out, i)
	}
	return out
}

// Span is a run of adjacent lines: n bytes at off in the section.
type Span struct{ Off, N int64 }

// Spans joins the lines into runs of adjacent lines.
func (t *Lines) Spans(lines []int32) []Span {
	var out []Span
	for _, i := range lines {
		off, n := t.Line(int(i))
		if k := len(out) - 1; k >= 0 && out[k].Off+out[k].N == off {
			out[k].N += n
			continue
		}
		out = append(out, Span{off, n})
	}
	return out
}

// ReadAt reads the section's bytes at off.
func (t *Lines) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > t.size {
		return 0, fmt.Errorf("read lines: offset %d out of range", off)
	}
	if int64(len(p)) > t.size-off {
		n, err := t.f.ReadAt(p[:t.size-off], t.off+off)
		if err == nil {
			err = io.EOF
		}
		return n, err
	}
	return t.f.ReadAt(p, t.off+off)
}

// writeLines copies the ordered lines from staging to dst at dstOff and
// returns their CRC-32C.
func writeLines(ctx context.Context, dst io.WriterAt, dstOff int64, src io.ReaderAt, moves []move) (uint32, error) {
	buf := make([]byte, 1<<20)
	var sum uint32
	at := dstOff
	for i, m := range moves {
		if i%256 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		for done := int64(0); done < m.n; {
			chunk := buf[:min(int64(len(buf)), m.n-done)]
			if n, err := src.ReadAt(chunk, m.from+done); n < len(chunk) {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return 0, fmt.Errorf("read staged lines: %w", err)
			}
			if _, err := dst.WriteAt(chunk, at); err != nil {
				return 0, fmt.Errorf("write lines: %w", err)
			}
			sum = crc32.Update(sum, castagnoli, chunk)
			at += int64(len(chunk))
			done += int64(len(chunk))
		}
	}
	return sum, nil
}

// encodeLines appends the table to an index.
func encodeLines(e *encoder, t *Lines) {
	if t == nil {
		e.uv(0)
		return
	}
	e.uv(1)
	e.uv(uint64(t.off))
	e.uv(uint64(t.size))
	e.b = binary.LittleEndian.AppendUint32(e.b, t.sum)
	e.int(len(t.strs) - 1)
	for _, s := range t.strs[1:] {
		e.str(s)
	}
	e.int(len(t.entries))
	start := int64(0)
	for _, en := range t.entries {
		e.uv(uint64(en.end - start))
		e.uv(uint64(en.schema))
		e.uv(uint64(en.pkg))
		e.uv(uint64(en.name))
		start = en.end
	}
}

// decodeLines reads what encodeLines wrote.
func decodeLines(d *decoder) *Lines {
	switch d.uv() {
	case 0:
		return nil
	case 1:
	default:
		if d.err == nil {
			d.err = errors.New("bad lines flag")
		}
		return nil
	}
	t := &Lines{off: int64(d.int(1 << 62)), size: int64(d.int(1 << 62))}
	if s := d.raw(4); s != nil {
		t.sum = binary.LittleEndian.Uint32(s)
	}
	t.strs = make([]string, d.count()+1)
	for i := 1; i < len(t.strs); i++ {
		t.strs[i] = d.str()
	}
	t.entries = list[lineEntry](d.count())
	var end int64
	maxID := len(t.strs) - 1
	for i := range t.entries {
		end += int64(d.int(math.MaxUint32))
		t.entries[i] = lineEntry{end: end, schema: uint32(d.int(maxID)), pkg: uint32(d.int(maxID)), name: uint32(d.int(maxID))}
	}
	if d.err == nil && end != t.size {
		d.err = fmt.Errorf("the lines add up to %d bytes, not %d", end, t.size)
	}
	return t
}

// verifyLines checks the section's checksum.
func (t *Lines) verify(ctx context.Context) error {
	buf := make([]byte, verifyWindow)
	var sum uint32
	for at := int64(0); at < t.size; {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		chunk := buf[:min(int64(len(buf)), t.size-at)]
		if n, err := t.f.ReadAt(chunk, t.off+at); n < len(chunk) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("read cache: %w", err)
		}
		sum = crc32.Update(sum, castagnoli, chunk)
		at += int64(len(chunk))
	}
	if sum != t.sum {
		return fmt.Errorf("the catalog's JSON lines: %w", ErrCorruptAnswer)
	}
	return nil
}
