package cache

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fastopm/fastopm/pkg/registry"
)

// The cache file:
//
//	header   16 bytes: magic "FASTOPM\x00", format version (uint32 LE),
//	         4 reserved bytes
//	bodies   bundle records and custom-blob records, in the order they
//	         were produced (located by the index)
//	index    the serialized registry.Index and catalog fingerprint
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
// differently from a fresh one; such a cache is rebuilt (or refused, with
// integrity enforcement).
const FormatVersion = 1

// Writer stores answers in a cache file as a catalog is read. It is the
// registry.Sink of a cache build; its methods are safe for concurrent use.
type Writer struct {
	f storage

	mu        sync.Mutex
	size      int64
	bodiesEnd int64 // set by Finish
	err       error
}

var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// storage is where a cache's bytes live: a file, or memory when no file
// can be written.
type storage interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

// NewWriter starts a cache file in f, which must be empty and open for
// reading and writing.
func NewWriter(f *os.File) (*Writer, error) { return newWriter(f) }

func newWriter(f storage) (*Writer, error) {
	var h [headerSize]byte
	copy(h[:], headerMagic)
	binary.LittleEndian.PutUint32(h[8:], FormatVersion)
	if _, err := f.WriteAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("write cache header: %w", err)
	}
	return &Writer{f: f, size: headerSize}, nil
}

// append writes rec at the end of the file and returns its offset.
func (w *Writer) append(rec []byte) (int64, error) {
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return 0, w.err
	}
	off := w.size
	w.size += int64(len(rec))
	w.mu.Unlock()
	if _, err := w.f.WriteAt(rec, off); err != nil {
		err = fmt.Errorf("write cache: %w", err)
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
		return 0, err
	}
	return off, nil
}

// PutBundle encodes and stores a bundle's answer.
func (w *Writer) PutBundle(a *registry.BundleAnswer) (registry.BodyRef, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	rec, err := encodeBundle((*bp)[:0], a)
	*bp = rec
	if err != nil {
		return registry.BodyRef{}, err
	}
	total, list := recordLens(rec)
	off, err := w.append(rec)
	if err != nil {
		return registry.BodyRef{}, err
	}
	return registry.BodyRef{Off: uint64(off), Len: uint32(total), Aux: uint32(list)}, nil
}

// PutMeta stores a custom-schema blob as an encoded google.protobuf.Struct,
// prefixed with its CRC-32C.
func (w *Writer) PutMeta(blob []byte) (registry.BodyRef, error) {
	var v map[string]any
	if err := json.Unmarshal(blob, &v); err != nil {
		return registry.BodyRef{}, fmt.Errorf("decode blob: %w", err)
	}
	s, err := structpb.NewStruct(v)
	if err != nil {
		return registry.BodyRef{}, fmt.Errorf("convert blob to a protobuf Struct: %w", err)
	}
	rec := make([]byte, 4, 4+proto.Size(s))
	rec, err = proto.MarshalOptions{Deterministic: true}.MarshalAppend(rec, s)
	if err != nil {
		return registry.BodyRef{}, fmt.Errorf("encode blob: %w", err)
	}
	binary.LittleEndian.PutUint32(rec, crc32.Checksum(rec[4:], castagnoli))
	off, err := w.append(rec)
	if err != nil {
		return registry.BodyRef{}, err
	}
	return registry.BodyRef{Off: uint64(off), Len: uint32(len(rec))}, nil
}

// Finish appends the index and the trailer, completing the cache file.
func (w *Writer) Finish(x *registry.Index, fp Fingerprint, producer string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	idx := encodeIndex(x, fp, producer)
	var t [trailerSize]byte
	binary.LittleEndian.PutUint64(t[0:], uint64(w.size))
	binary.LittleEndian.PutUint64(t[8:], uint64(len(idx)))
	binary.LittleEndian.PutUint32(t[16:], crc32.Checksum(idx, castagnoli))
	binary.LittleEndian.PutUint32(t[20:], FormatVersion)
	copy(t[24:], trailerMagic)
	if _, err := w.f.WriteAt(append(idx, t[:]...), w.size); err != nil {
		w.err = fmt.Errorf("write cache index: %w", err)
		return w.err
	}
	w.bodiesEnd = w.size
	w.size += int64(len(idx)) + trailerSize
	return nil
}

// Snapshot serves the answers this Writer stored, with the Index x built
// alongside, without reading the file back. The Snapshot owns the file.
func (w *Writer) Snapshot(x *registry.Index) (*Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil, w.err
	}
	end := w.size
	if w.bodiesEnd > 0 {
		end = w.bodiesEnd
	}
	return &Snapshot{Index: x, f: w.f, bodiesEnd: end}, nil
}

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// errClosed is returned by reads after Close.
var errClosed = errors.New("cache closed")
