package image

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cespare/xxhash/v2"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastopm/fastopm/pkg/diskcache"
	"github.com/fastopm/fastopm/pkg/interrupt"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// Layer records: what unpacking a layer yields, kept in the cache
// directory so that unpacking the layer again reads none of it.
//
// Unpacking must read every layer to its end, decompressing it (gzip takes
// most of the time of rendering a catalog image), even a layer that holds
// nothing wanted: its whiteouts may hide what an earlier layer wrote. What
// that reading yields depends only on the layer and on the sub-trees
// wanted: the layer's entries (their headers), in order, and the content
// of the regular files in the sub-trees. With WithCacheDir, unpacking a
// layer writes that record into the cache, at DIR/layers/sha256/<hex of
// the layer's digest>, and a later unpack of the same layer (in this image,
// an image sharing its base layers, any process) applies the record
// instead of fetching and decompressing the layer. Applying a record is
// what applying a layer that was read before its turn does (layers.go), so
// the result, the errors and the files handed to WithFileStream are those
// of the layer itself.
//
// A record holds every entry's header, so it serves any selection of
// sub-trees, but only the content of the files the selection that wrote it
// wanted: an unpack that needs the content of a file the record lacks (a
// bundle image unpacked whole after only its manifests) reads the layer
// again and writes a new record for its own selection.
//
// The file: the stored content, back to back; then the index (each entry's
// type, whether its content is stored, mode, size, content offset, name
// and link name, varint-encoded); then the trailer: a magic string, the
// index's offset and length, the layer's digest and the XXH64 of
// everything before the checksum. A record is written under a temporary
// name and renamed into place once the layer's digest has been verified
// (the whole layer read), so it is whole or absent; it is checked (sizes,
// digest, checksum, index) before use, and a record that fails the check
// (truncated, corrupt, written by another format) is removed and the layer
// read again. The checksum guards against damage, not against someone who
// can write the cache directory: the cache is as trusted as the user's own
// files, and a record's entries go through the same checks as a layer's
// (paths, links, devices, limits).

// recordsSub is where records live in the cache directory.
const recordsSub = "layers/sha256"

// recordMagic starts a record's trailer; its last byte is the format's
// version.
const recordMagic = "opmrec\x00\x01"

// trailerSize is the size of a record's trailer: magic, index offset and
// length, layer digest, checksum.
const trailerSize = 8 + 8 + 8 + 32 + 8

// maxRecordIndex bounds a record's index (about 100 bytes an entry): a
// layer with more entries than that is unpacked without a record.
const maxRecordIndex = 64 << 20

// layerRecords is the records of a cache directory.
type layerRecords struct {
	dir *diskcache.Dir
}

// layerRecords returns the records of the cache directory; nil without
// one.
func (o *options) layerRecords() (*layerRecords, error) {
	d, err := o.openCache()
	if d == nil || err != nil {
		return nil, err
	}
	return &layerRecords{dir: d}, nil
}

// recEntry is an entry of a record: the header fields unpacking reads,
// and where its content is.
type recEntry struct {
	hdr    tar.Header
	stored bool  // its content is in the record
	off    int64 // where
}

// replay returns the kept entries of the layer d as a record holds them,
// with the record as the layer's storage (ls), and true; false when there
// is no usable record for what u wants. It tells u's destination of the
// files stored, as reading the layer before its turn would.
func (r *layerRecords) replay(u *unpacker, d v1.Hash, ls *layerStore) ([]keptEntry, bool, error) {
	if !validSHA256(d) {
		return nil, false, nil
	}
	p := r.dir.Path(recordsSub, d.Hex)
	f, err := os.Open(p)
	if err != nil {
		return nil, false, nil
	}
	entries, err := readRecord(f, d)
	if err != nil {
		f.Close()
		_ = os.Remove(p) // damaged: written again by this unpack
		return nil, false, nil
	}
	for i := range entries {
		if _, content := u.keeps(&entries[i].hdr); content && !entries[i].stored {
			f.Close()
			return nil, false, nil // another selection's record
		}
	}
	sf, err := scratch.Wrap(f)
	if err != nil {
		f.Close()
		return nil, false, nil
	}
	r.dir.Touch(p)
	ls.f = sf
	var kept []keptEntry
	for i := range entries {
		e := &entries[i]
		keep, _ := u.keeps(&e.hdr)
		if !keep {
			continue
		}
		if len(kept) >= u.limits.MaxEntries {
			return nil, true, &EntryError{Layer: d, Entry: e.hdr.Name, Err: fmt.Errorf("%w: more than %d entries", ErrLimitExceeded, u.limits.MaxEntries)}
		}
		k := keptEntry{hdr: &e.hdr}
		if e.stored {
			k.off, k.n, k.stored = e.off, e.hdr.Size, true
			if name, err := cleanPath(e.hdr.Name); err == nil {
				u.dest.stored(name, sf, k.off, k.n)
			}
		}
		kept = append(kept, k)
	}
	return kept, true, nil
}

// record reads the layer l (digest d) to its end, keeping what applying
// it needs, as a layer read before its turn does, in a new record that
// becomes the layer's storage (ls); the record is stored in the cache once
// the layer's digest is verified. It returns the kept entries.
func (r *layerRecords) record(ctx context.Context, u *unpacker, l v1.Layer, d v1.Hash, ls *layerStore) ([]keptEntry, error) {
	rc, err := uncompressed(l)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	defer rc.Close()

	// The record is written where it will live; without a valid digest or
	// a writable cache, it is only the layer's scratch storage.
	var tmp string
	if validSHA256(d) {
		if f, err := r.dir.Create(recordsSub, d.Hex); err == nil {
			if sf, err := scratch.Wrap(f); err == nil {
				ls.f, tmp = sf, f.Name()
			} else {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}
	if tmp != "" {
		defer interrupt.OnExit(func() { _ = os.Remove(tmp) })()
	}
	committed := false
	defer func() {
		if tmp != "" && !committed {
			os.Remove(tmp)
		}
	}()
	store := ls.get()

	var (
		index   []byte
		full    bool // the index outgrew maxRecordIndex: no record
		kept    []keptEntry
		stored  int64
		copyBuf = make([]byte, 256<<10)
	)
	r2 := &ctxReader{ctx: ctx, r: rc}
	tr := tar.NewReader(r2)
	for {
		hdr, err := nextHeader(ctx, tr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // entry() ignores it
		}
		keep, content := u.keeps(hdr)
		e := recEntry{hdr: tar.Header{Typeflag: hdr.Typeflag, Name: hdr.Name, Linkname: hdr.Linkname, Mode: hdr.Mode, Size: hdr.Size}}
		// Content beyond the limits is not kept: applying the entry
		// reports the limit before reading it.
		if content && hdr.Size >= 0 && hdr.Size <= u.limits.MaxFileSize && stored+hdr.Size <= u.limits.MaxTotalSize {
			e.off, e.stored = store.Size(), true
			n, err := io.CopyBuffer(appender{store}, io.LimitReader(tr, hdr.Size), copyBuf)
			stored += n
			if err == nil && n < hdr.Size {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("read tar: %w", err)
			}
			if name, err := cleanPath(hdr.Name); err == nil {
				u.dest.stored(name, store, e.off, hdr.Size)
			}
		}
		if !full {
			index = appendRecEntry(index, &e)
			full = len(index) > maxRecordIndex
			if full {
				index = nil
			}
		}
		if keep {
			if len(kept) >= u.limits.MaxEntries {
				return nil, &EntryError{Layer: d, Entry: hdr.Name, Err: fmt.Errorf("%w: more than %d entries", ErrLimitExceeded, u.limits.MaxEntries)}
			}
			k := keptEntry{hdr: &e.hdr, off: e.off, stored: e.stored}
			if e.stored {
				k.n = hdr.Size
			}
			kept = append(kept, k)
		}
	}
	// Read to the end so that the digest of the layer is verified.
	if _, err := io.Copy(io.Discard, r2); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("read: %w", err)
	}
	if tmp != "" && !full {
		if err := writeTrailer(store, index, d); err == nil {
			// A record that cannot be kept (too large for the cache, a
			// full disk) costs the next unpack a read of the layer.
			committed = r.dir.Commit(tmp, recordsSub, d.Hex) == nil
		}
	}
	return kept, nil
}

// appendRecEntry appends e's encoding to b.
func appendRecEntry(b []byte, e *recEntry) []byte {
	var flags byte
	if e.stored {
		flags = 1
	}
	b = append(b, e.hdr.Typeflag, flags)
	b = binary.AppendVarint(b, e.hdr.Mode)
	b = binary.AppendVarint(b, e.hdr.Size)
	if e.stored {
		b = binary.AppendUvarint(b, uint64(e.off))
	}
	b = binary.AppendUvarint(b, uint64(len(e.hdr.Name)))
	b = append(b, e.hdr.Name...)
	b = binary.AppendUvarint(b, uint64(len(e.hdr.Linkname)))
	return append(b, e.hdr.Linkname...)
}

// writeTrailer appends the index and the trailer to the record's content
// in f.
func writeTrailer(f *scratch.File, index []byte, d v1.Hash) error {
	indexOff := f.Size()
	var t [trailerSize]byte
	copy(t[:8], recordMagic)
	binary.BigEndian.PutUint64(t[8:], uint64(indexOff))
	binary.BigEndian.PutUint64(t[16:], uint64(len(index)))
	if _, err := hex.Decode(t[24:56], []byte(d.Hex)); err != nil {
		return err
	}
	if _, err := f.Append(index); err != nil {
		return err
	}
	if _, err := f.Append(t[:trailerSize-8]); err != nil {
		return err
	}
	h := xxhash.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, f.Size())); err != nil {
		return err
	}
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], h.Sum64())
	_, err := f.Append(sum[:])
	return err
}

// errBadRecord is readRecord's error for a file that is no usable record.
var errBadRecord = errors.New("not a valid layer record")

// readRecord checks the record in f for the layer d and returns its
// entries.
func readRecord(f *os.File, d v1.Hash) ([]recEntry, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < trailerSize {
		return nil, errBadRecord
	}
	var t [trailerSize]byte
	if _, err := f.ReadAt(t[:], size-trailerSize); err != nil {
		return nil, errBadRecord
	}
	var digest [32]byte
	if n, err := hex.Decode(digest[:], []byte(d.Hex)); err != nil || n != len(digest) {
		return nil, errBadRecord
	}
	indexOff, indexLen := binary.BigEndian.Uint64(t[8:]), binary.BigEndian.Uint64(t[16:])
	if string(t[:8]) != recordMagic || !bytes.Equal(t[24:56], digest[:]) ||
		indexOff > uint64(size) || indexLen > uint64(size) || indexOff+indexLen != uint64(size-trailerSize) {
		return nil, errBadRecord
	}
	h := xxhash.New()
	buf := make([]byte, 1<<20)
	if _, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, size-8), buf); err != nil {
		return nil, errBadRecord
	}
	if h.Sum64() != binary.BigEndian.Uint64(t[trailerSize-8:]) {
		return nil, errBadRecord
	}
	index := make([]byte, indexLen)
	if _, err := f.ReadAt(index, int64(indexOff)); err != nil {
		return nil, errBadRecord
	}
	return decodeRecIndex(index, int64(indexOff))
}

// decodeRecIndex decodes a record's index; content must lie below end.
func decodeRecIndex(b []byte, end int64) ([]recEntry, error) {
	if end < 0 {
		return nil, errBadRecord
	}
	var out []recEntry
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, errBadRecord
		}
		e := recEntry{hdr: tar.Header{Typeflag: b[0]}}
		flags := b[1]
		if flags > 1 {
			return nil, errBadRecord
		}
		e.stored = flags == 1
		b = b[2:]
		var n int
		if e.hdr.Mode, n = binary.Varint(b); n <= 0 {
			return nil, errBadRecord
		}
		b = b[n:]
		if e.hdr.Size, n = binary.Varint(b); n <= 0 {
			return nil, errBadRecord
		}
		b = b[n:]
		if e.stored {
			off, n := binary.Uvarint(b)
			if n <= 0 || e.hdr.Size < 0 || off > uint64(end) || uint64(e.hdr.Size) > uint64(end)-off {
				return nil, errBadRecord
			}
			e.off = int64(off)
			b = b[n:]
		}
		var s string
		var ok bool
		if s, b, ok = recString(b); !ok {
			return nil, errBadRecord
		}
		e.hdr.Name = s
		if s, b, ok = recString(b); !ok {
			return nil, errBadRecord
		}
		e.hdr.Linkname = s
		out = append(out, e)
	}
	return out, nil
}

func recString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}
