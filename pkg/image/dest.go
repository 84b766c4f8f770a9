package image

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/fastopm/fastopm/pkg/scratch"
)

// destination is where an unpack writes: a directory on disk, through an
// os.Root (diskDest), or a tree in memory (memTree). Names are clean,
// slash-separated and relative; the methods named after os.Root's behave
// as os.Root's do.
type destination interface {
	MkdirAll(name string, perm fs.FileMode) error
	Mkdir(name string, perm fs.FileMode) error
	Chmod(name string, mode fs.FileMode) error
	Lstat(name string) (fs.FileInfo, error)
	Remove(name string) error
	RemoveAll(name string) error
	Symlink(oldname, newname string) error
	Readlink(name string) (string, error)
	Link(oldname, newname string) error

	// writeFile creates the regular file name, which must not exist
	// (never writing through a link), with the n bytes r holds; ls is the
	// scratch storage of the layer being applied. It returns the bytes
	// written.
	writeFile(name string, r io.Reader, n int64, ls *layerStore) (int64, error)
	// readDir lists the directory name; an error wrapping errNotDir when
	// it is something else.
	readDir(name string) ([]fs.DirEntry, error)
	// release is told that a layer is done with its scratch storage.
	release(ls *layerStore)
	// stored is told that the content of the regular file name (in the
	// selection) is the n bytes at off in f, before the file is written
	// (a layer read before its turn keeps it there).
	stored(name string, f *scratch.File, off, n int64)
}

// errNotDir is readDir's error for a path that is not a directory.
var errNotDir = errors.New("not a directory")

// diskDest is a directory on disk.
type diskDest struct{ *os.Root }

func (d diskDest) writeFile(name string, r io.Reader, n int64, _ *layerStore) (int64, error) {
	// O_EXCL: never write through a symlink, even one raced in.
	f, err := d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	lr := &layerReader{r: r}
	w, err := io.CopyN(f, lr, n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return w, copyError(w, n, err, lr.err)
	}
	return w, nil
}

// layerReader keeps the error of reading a layer, to tell it from an
// error of writing what was read.
type layerReader struct {
	r   io.Reader
	err error
}

func (l *layerReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if err != nil {
		l.err = err
	}
	return n, err
}

// copyError says why a file of a layer was not copied in full: the layer
// ended inside it (a cut layer), could not be read (a corrupt one), or
// writing it failed. readErr is the error of reading the layer, if any.
func copyError(copied, size int64, err, readErr error) error {
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the layer ends %d bytes into the file of %d bytes: %w", copied, size, io.ErrUnexpectedEOF)
	case readErr != nil:
		return fmt.Errorf("read the layer, %d bytes into the file of %d bytes: %w", copied, size, err)
	}
	return fmt.Errorf("write: %w", err)
}

func (d diskDest) readDir(name string) ([]fs.DirEntry, error) {
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotDir, err)
	}
	return ents, nil
}

func (diskDest) release(ls *layerStore) { ls.close() }

func (diskDest) stored(string, *scratch.File, int64, int64) {}

// layerStore is the scratch storage of one layer: the content of entries
// read before the layer's turn and, for a memTree, of the files it
// writes. It is created when first needed.
type layerStore struct {
	f *scratch.File
}

func (s *layerStore) get() *scratch.File {
	if s.f == nil {
		s.f = scratch.CreateOrMemory("", "opm-layer-*")
	}
	return s.f
}

func (s *layerStore) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// spooled is content a layer kept in its scratch storage before its turn,
// as applying it reads it: a memTree takes it where it is.
type spooled struct {
	*io.SectionReader
	f   *scratch.File
	off int64
}
