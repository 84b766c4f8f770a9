// Package scratch keeps bytes a process needs again later but should not
// hold in memory while it works: in an unlinked temporary file, which
// disappears with the process whatever happens (even SIGKILL), or, when no
// temporary file can be created (a read-only /tmp), in memory.
//
// render keeps the rewritten blobs of a catalog there between reading and
// writing; the serve cache keeps the answers of a cold start, and the
// records of a cache build before they are put in order.
package scratch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// File is scratch storage; the zero File keeps its bytes in memory.
// ReadAt, WriteAt and Append are safe for concurrent use; the bytes at an
// offset must be written before they are read.
type File struct {
	f *os.File // nil: in memory

	mu   sync.RWMutex
	mem  []byte // the bytes, when in memory
	size int64  // the end of what Append reserved or WriteAt wrote
}

// Create creates scratch storage in an unlinked temporary file in dir
// (os.TempDir() when empty), named after pattern as os.CreateTemp does
// while it briefly has a name.
func Create(dir, pattern string) (*File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	// Unlinked at once: the file lives as long as the process holds it.
	_ = os.Remove(f.Name())
	return &File{f: f}, nil
}

// CreateOrMemory is Create, or storage in memory when no file can be
// created.
func CreateOrMemory(dir, pattern string) *File {
	if s, err := Create(dir, pattern); err == nil {
		return s
	}
	return &File{}
}

// Wrap makes the open file f scratch storage holding its current bytes:
// Append adds after them. The File owns f from then on (Close closes it).
// pkg/image keeps a layer's content in a file of its cache this way, the
// file renamed into the cache while the process goes on reading it.
func Wrap(f *os.File) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return &File{f: f, size: st.Size()}, nil
}

// InMemory reports whether the bytes are kept in memory.
func (s *File) InMemory() bool { return s.f == nil }

// Size is the end of the bytes stored so far.
func (s *File) Size() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.size
}

// Append stores b after everything stored so far and returns its offset.
func (s *File) Append(b []byte) (int64, error) {
	s.mu.Lock()
	off := s.size
	s.size += int64(len(b))
	s.mu.Unlock()
	if _, err := s.WriteAt(b, off); err != nil {
		return 0, err
	}
	return off, nil
}

// WriteAt stores p at off.
func (s *File) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("scratch: negative offset")
	}
	if s.f != nil {
		n, err := s.f.WriteAt(p, off)
		if err == nil {
			s.grow(off + int64(n))
		}
		return n, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(s.mem)) {
		if end > int64(cap(s.mem)) {
			nb := make([]byte, end, max(2*int64(cap(s.mem)), end))
			copy(nb, s.mem)
			s.mem = nb
		}
		s.mem = s.mem[:end]
	}
	copy(s.mem[off:], p)
	s.size = max(s.size, off+int64(len(p)))
	return len(p), nil
}

func (s *File) grow(end int64) {
	s.mu.Lock()
	s.size = max(s.size, end)
	s.mu.Unlock()
}

// ReadAt reads len(p) bytes at off; fewer is an error (io.EOF at the end).
func (s *File) ReadAt(p []byte, off int64) (int, error) {
	if s.f != nil {
		return s.f.ReadAt(p, off)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if off < 0 || off >= int64(len(s.mem)) {
		return 0, io.EOF
	}
	n := copy(p, s.mem[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// CopyTo appends the n bytes at off to dst, at dst's current offset: from
// a file, within the kernel where the system allows it
// (copy_file_range), without passing through memory. It moves the file's
// own offset: calls of CopyTo must not overlap.
func (s *File) CopyTo(dst *os.File, off, n int64) error {
	var r io.Reader
	if s.f != nil {
		if _, err := s.f.Seek(off, io.SeekStart); err != nil {
			return err
		}
		// (*os.File).ReadFrom copies in the kernel from a *os.File or an
		// *io.LimitedReader around one.
		r = &io.LimitedReader{R: s.f, N: n}
	} else {
		r = io.NewSectionReader(s, off, n)
	}
	m, err := dst.ReadFrom(r)
	if err == nil && m != n {
		err = fmt.Errorf("scratch: copied %d of %d bytes: %w", m, n, io.ErrUnexpectedEOF)
	}
	return err
}

// Reopen opens the storage's file again, with an offset of its own (for
// sendfile): through /proc/self/fd on Linux, the file being unlinked. It
// fails for storage in memory and where /proc is not there.
func (s *File) Reopen() (*os.File, error) {
	if s.f == nil {
		return nil, errors.New("scratch: the bytes are in memory")
	}
	return os.Open(fmt.Sprintf("/proc/self/fd/%d", s.f.Fd()))
}

// Close releases the storage.
func (s *File) Close() error {
	if s.f != nil {
		return s.f.Close()
	}
	s.mu.Lock()
	s.mem = nil
	s.mu.Unlock()
	return nil
}
