//go:build unix

package declcfg

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
)

const okBlob = `{"schema":"olm.package","name":"p","defaultChannel":"c"}` + "\n"

// TestListFilesRefusesNonRegular: named pipes, sockets and devices, and
// links to them, are refused by name without being opened (opening a
// named pipe would block until a writer comes); what .indexignore excludes
// is not even looked at.
func TestListFilesRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/catalog.json", okBlob)
	write("ignored/.keep", "")
	write(".indexignore", "ignored/\n")
	for _, p := range []string{"a/pipe", "ignored/pipe"} {
		if err := syscall.Mkfifo(filepath.Join(dir, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A socket path may be at most about 100 bytes long.
	sockDir, err := os.MkdirTemp("", "s")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	l, err := net.Listen("unix", filepath.Join(sockDir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for link, target := range map[string]string{
		"a/socket": filepath.Join(sockDir, "s"),
		"a/zero":   "/dev/null", // a character device
		"a/ok":     filepath.Join(dir, "a/catalog.json"),
		"a/dir":    filepath.Join(dir, "ignored"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}

	files, errs := ListFiles(os.DirFS(dir))
	var got []string
	for _, f := range files.Catalog {
		got = append(got, f.Path)
	}
	if strings.Join(got, " ") != "a/catalog.json a/ok" {
		t.Errorf("catalog files %q, want a/catalog.json and the link a/ok", got)
	}
	if len(files.IndexIgnore) != 1 || files.IndexIgnore[0].Path != ".indexignore" {
		t.Errorf("indexignore files %v", files.IndexIgnore)
	}
	want := map[string]string{
		"a/pipe":   "not a regular file (a named pipe)",
		"a/socket": "not a regular file (a socket)",
		"a/zero":   "not a regular file (a character device)",
		"a/dir":    "is a directory",
	}
	for _, e := range errs {
		w, ok := want[e.Path]
		if !ok || !strings.Contains(e.Error(), w) {
			t.Errorf("unexpected problem %v", e)
			continue
		}
		if w != "is a directory" && !errors.Is(e, ErrNotRegular) {
			t.Errorf("%v does not match ErrNotRegular", e)
		}
		delete(want, e.Path)
	}
	for p, w := range want {
		t.Errorf("no problem for %s (want %q)", p, w)
	}

	// The loader reports the same and reads the rest.
	// fn runs on several goroutines at once.
	var n atomic.Int32
	err = Walk(context.Background(), os.DirFS(dir), func(*Blob) error { n.Add(1); return nil })
	var es Errors
	if !errors.As(err, &es) || len(es) != 4 || n.Load() != 2 {
		t.Errorf("Walk: %d blobs, error %v; want 2 blobs and the 4 problems", n.Load(), err)
	}
}

// TestMaxFileSize: a file over the limit is refused by name, before it is
// read; the limit can be raised or lifted.
func TestMaxFileSize(t *testing.T) {
	fsys := fstest.MapFS{"big.json": {Data: []byte(okBlob + okBlob)}, "small.json": {Data: []byte(okBlob)}}
	limit := int64(len(okBlob) + 1)
	_, errs := ListFiles(fsys, WithMaxFileSize(limit))
	if len(errs) != 1 || errs[0].Path != "big.json" || !errors.Is(errs[0], ErrTooLarge) ||
		!strings.Contains(errs[0].Error(), "it is 114 bytes, over the limit of 58 bytes for one catalog file") {
		t.Errorf("problems %v", errs)
	}
	for _, opt := range []WalkOption{WithMaxFileSize(200), WithMaxFileSize(-1), WithMaxFileSize(0)} {
		if files, errs := ListFiles(fsys, opt); len(errs) > 0 || len(files.Catalog) != 2 {
			t.Errorf("files %v, problems %v", files, errs)
		}
	}
	if DefaultMaxFileSize != 1<<30 {
		t.Errorf("default limit %d", DefaultMaxFileSize)
	}
}

// lyingFS is a file system whose files say they are one byte long, as
// files of /proc do (and as a file that grows after it was listed).
type lyingFS struct{ fstest.MapFS }

func (l lyingFS) Open(name string) (fs.File, error) {
	f, err := l.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	return lyingFile{f}, nil
}

type lyingFile struct{ fs.File }

func (f lyingFile) Stat() (fs.FileInfo, error) {
	st, err := f.File.Stat()
	return lyingInfo{st}, err
}

type lyingInfo struct{ fs.FileInfo }

func (lyingInfo) Size() int64 { return 1 }

func TestMaxFileSizeWhileReading(t *testing.T) {
	p := parser{maxSize: 100}
	fsys := fstest.MapFS{"f.json": {Data: []byte(strings.Repeat(" ", 300) + okBlob)}}
	// Stat says the file is small, the reads say otherwise.
	_, err := p.readFile(lyingFS{fsys}, "f.json")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "it is over the limit of 100 bytes") {
		t.Errorf("reading a file that outgrows the limit: %v", err)
	}
}

// TestWalkStopsBetweenBlobs: a cancelled walk hands no further blob to the
// callback, even within one file.
func TestWalkStopsBetweenBlobs(t *testing.T) {
	fsys := fstest.MapFS{"f.json": {Data: []byte(strings.Repeat(okBlob, 1000))}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := Walk(ctx, fsys, func(*Blob) error {
		n++
		cancel()
		return nil
	})
	if n != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("after a cancel: %d blobs, error %v; want 1 blob and context.Canceled", n, err)
	}
}

// TestIndexIgnoreNotRegular: an .indexignore that is a named pipe or a
// link to a device is refused by name, not read.
func TestIndexIgnoreNotRegular(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "c.json"), []byte(okBlob), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "a", ".indexignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "b", ".indexignore")); err != nil {
		t.Fatal(err)
	}
	files, errs := ListFiles(os.DirFS(dir))
	if len(errs) != 2 || !errors.Is(errs[0], ErrNotRegular) || errs[0].Path != "a/.indexignore" ||
		!errors.Is(errs[1], ErrNotRegular) || errs[1].Path != "b/.indexignore" {
		t.Errorf("problems %v", errs)
	}
	if len(files.Catalog) != 2 || len(files.IndexIgnore) != 0 {
		t.Errorf("files %+v", files)
	}
	// A regular .indexignore over the size limit is refused too (and so
	// are both 57-byte catalog files).
	if err := os.Remove(filepath.Join(dir, "b", ".indexignore")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b", ".indexignore"), []byte("# a long comment\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs = ListFiles(os.DirFS(dir), WithMaxFileSize(10))
	if len(errs) != 4 || errs[2].Path != "b/.indexignore" || !errors.Is(errs[2], ErrTooLarge) {
		t.Errorf("problems with a 10-byte limit: %v", errs)
	}
}
