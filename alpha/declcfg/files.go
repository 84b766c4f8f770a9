package declcfg

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"

	"github.com/fastopm/fastopm/pkg/indexignore"
)

// DefaultMaxFileSize is the default limit on the size of one catalog file:
// 1 GiB, far above real catalogs (the largest file of the public OpenShift
// catalogs is about 60 MB), so that a file that is not a catalog (a disk
// image, a link to /dev/zero) is refused by name instead of exhausting
// memory.
const DefaultMaxFileSize int64 = 1 << 30

// File is a file of a catalog tree.
type File struct {
	// Path is the slash-separated path relative to the catalog root.
	Path string
	// Size is the file's size when it was listed.
	Size int64
}

// Files is what a catalog tree holds for the loader, each list in
// fs.WalkDir order.
type Files struct {
	// Catalog are the files the loader reads.
	Catalog []File
	// IndexIgnore are the .indexignore files, which decide what is read.
	IndexIgnore []File
}

// ErrNotRegular marks a path that is not a regular file (a named pipe, a
// socket, a device), or a link to one: reading it could block forever or
// never end, so the loader refuses it.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge marks a catalog file over the size limit (WithMaxFileSize).
var ErrTooLarge = errors.New("file too large")

type walkOptions struct {
	concurrency int
	maxFileSize int64
	warn        func(*Error)
	parsed      func(f File, index int) (problems, warnings Errors, ok bool)
}

func newWalkOptions(opts []WalkOption) walkOptions {
	o := walkOptions{concurrency: runtime.GOMAXPROCS(0), maxFileSize: DefaultMaxFileSize}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WalkOption configures Walk and ListFiles.
type WalkOption func(*walkOptions)

// WithConcurrency sets how many files are parsed at once (default: the
// number of CPUs).
func WithConcurrency(n int) WalkOption {
	return func(o *walkOptions) {
		if n > 0 {
			o.concurrency = n
		}
	}
}

// WithMaxFileSize sets the largest catalog file the loader reads, in bytes
// (default DefaultMaxFileSize); a larger file is a problem of the catalog
// (ErrTooLarge). n < 0 removes the limit; 0 keeps the default.
func WithMaxFileSize(n int64) WalkOption {
	return func(o *walkOptions) {
		if n != 0 {
			o.maxFileSize = n
		}
	}
}

// WithWarnings has Walk call warn for each file that it reads whole but
// that other tools read differently (a JSON stream after a byte order
// mark, which upstream opm and catalogd cut after its first object). The
// calls come after the walk, in file order, from the goroutine that
// called Walk.
func WithWarnings(warn func(w *Error)) WalkOption {
	return func(o *walkOptions) { o.warn = warn }
}

// WithParsed has Walk ask parsed, for each file it lists (in walk order,
// before it parses any, from the goroutine that called Walk), whether the
// caller already parsed the file's current content with ParseFile, as the
// file of that index: if so (ok), Walk does not read it and reports the
// problems and warnings ParseFile returned for it as its own.
func WithParsed(parsed func(f File, index int) (problems, warnings Errors, ok bool)) WalkOption {
	return func(o *walkOptions) { o.parsed = parsed }
}

// ListFiles lists the catalog tree at root as the loader reads it: every
// file that is not a .indexignore and that no .indexignore excludes, with
// upstream's matching rules (package indexignore). Excluded paths are never
// opened or examined. The cache fingerprint is taken over exactly these
// files, so a cache is stale whenever what the loader would read changes.
//
// Problems are returned as Errors, and the files concerned left out: a
// directory or .indexignore that cannot be read, an .indexignore that does
// not parse, a path that is not a regular file (ErrNotRegular; a link is
// followed to see what it points at), a file over the size limit
// (ErrTooLarge).
func ListFiles(root fs.FS, opts ...WalkOption) (Files, Errors) {
	o := newWalkOptions(opts)
	var (
		files   Files
		errs    Errors
		matcher indexignore.Matcher
	)
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, &Error{Path: p, Err: fmt.Errorf("cannot read: %w", unwrapPathError(err))})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			name := path.Join(p, indexignore.FileName)
			content, err := readIndexIgnore(root, name, o.maxFileSize)
			switch {
			case err == nil:
				files.IndexIgnore = append(files.IndexIgnore, File{Path: name, Size: int64(len(content))})
				if err := matcher.Add(p, content); err != nil {
					errs = append(errs, &Error{Path: name, Err: err})
				}
			case !errors.Is(err, fs.ErrNotExist):
				errs = append(errs, &Error{Path: name, Err: err})
			}
			return nil
		}
		if d.Name() == indexignore.FileName || matcher.Match(p) {
			return nil
		}
		f, problem := examine(root, p, d, o.maxFileSize)
		if problem != nil {
			errs = append(errs, &Error{Path: p, Err: problem})
			return nil
		}
		files.Catalog = append(files.Catalog, f)
		return nil
	})
	if err != nil {
		errs = append(errs, &Error{Path: ".", Err: err})
	}
	return files, errs
}

// readIndexIgnore reads the .indexignore file name, which must be a
// regular file (or a link to one) within the size limit, like a catalog
// file: a named pipe there would block the walk, a link to a device would
// never end. The error wraps fs.ErrNotExist when there is none.
func readIndexIgnore(root fs.FS, name string, maxSize int64) ([]byte, error) {
	info, err := fs.Stat(root, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("cannot read: %w", unwrapPathError(err))
	}
	if err := fileProblem(info, maxSize, ": an .indexignore must be a regular file"); err != nil {
		if errors.Is(err, errIsDir) {
			return nil, fmt.Errorf("cannot read: %w", err)
		}
		return nil, err
	}
	content, err := fs.ReadFile(root, name)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", unwrapPathError(err))
	}
	if maxSize >= 0 && int64(len(content)) > maxSize {
		return nil, tooLarge(-1, maxSize)
	}
	return content, nil
}

// examine returns the file at p (a non-directory entry of the walk) or why
// the loader will not read it.
func examine(root fs.FS, p string, d fs.DirEntry, maxSize int64) (File, error) {
	var (
		info fs.FileInfo
		err  error
	)
	if d.Type()&fs.ModeSymlink != 0 {
		info, err = fs.Stat(root, p) // what the link points at
	} else {
		info, err = d.Info()
	}
	if err != nil {
		return File{}, fmt.Errorf("cannot read: %w", unwrapPathError(err))
	}
	if err := fileProblem(info, maxSize, ": catalogs are made of regular files; if it is not part of the catalog, list it in an .indexignore file"); err != nil {
		if errors.Is(err, errIsDir) {
			// A link to a directory: the walk does not follow it, and
			// upstream fails to read it as a file.
			return File{}, fmt.Errorf("cannot read: %w (a link to a directory: links to directories are not followed)", err)
		}
		return File{}, err
	}
	return File{Path: p, Size: info.Size()}, nil
}

// errIsDir is fileProblem's answer for a directory.
var errIsDir = errors.New("is a directory")

// fileProblem says why the loader does not read a file of info's kind and
// size, or returns nil: the one rule for catalog and .indexignore files,
// checked when they are listed and again when they are opened. hint ends
// the message about a file that is not regular.
func fileProblem(info fs.FileInfo, maxSize int64, hint string) error {
	switch mode := info.Mode(); {
	case mode.IsDir():
		return errIsDir
	case !mode.IsRegular():
		return fmt.Errorf("%w (%s)%s", ErrNotRegular, describeMode(mode), hint)
	case maxSize >= 0 && info.Size() > maxSize:
		return tooLarge(info.Size(), maxSize)
	}
	return nil
}

// tooLarge is the problem of a file of size bytes (-1: not known, the
// limit was reached while reading it) over limit.
func tooLarge(size, limit int64) error {
	if size < 0 {
		return fmt.Errorf("%w: it is over the limit of %d bytes for one catalog file (raise it with --max-catalog-file-size)", ErrTooLarge, limit)
	}
	return fmt.Errorf("%w: it is %d bytes, over the limit of %d bytes for one catalog file (raise it with --max-catalog-file-size)", ErrTooLarge, size, limit)
}

// describeMode names the kind of a file that is not regular.
func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a link"
	}
	return "an irregular file"
}
