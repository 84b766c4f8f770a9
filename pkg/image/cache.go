package image

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastopm/fastopm/pkg/diskcache"
	"github.com/fastopm/fastopm/pkg/interrupt"
)

// blobCache is a content-addressed store of blobs (manifests, configs,
// layers) under dir/blobs/sha256/<hex>, the blob layout of an OCI image
// layout. Blobs are written to a temporary file and renamed into place only
// once their digest is verified, so a reader never sees a partial blob, and
// concurrent writers of the same blob are harmless. Every read verifies the
// digest again; a corrupt blob is deleted. The directory is bounded in
// size (pkg/diskcache): the blobs and layer records used least recently go
// first.
type blobCache struct {
	dir *diskcache.Dir
}

// blobsSub is where blobs live in the cache directory.
const blobsSub = "blobs/sha256"

func openBlobCache(d *diskcache.Dir) *blobCache { return &blobCache{dir: d} }

// path returns where the blob h lives, or false for digests the cache
// does not store (anything but a well-formed sha256).
func (c *blobCache) path(h v1.Hash) (string, bool) {
	if c == nil || !validSHA256(h) {
		return "", false
	}
	return c.dir.Path(blobsSub, h.Hex), true
}

// validSHA256 reports whether h is a well-formed sha256 digest, which
// names a file of the cache.
func validSHA256(h v1.Hash) bool {
	if h.Algorithm != "sha256" || len(h.Hex) != 64 {
		return false
	}
	_, err := hex.DecodeString(h.Hex)
	return err == nil
}

// open returns the cached blob h, verified against h and size (size < 0:
// unknown) as it is read. It returns an error matching fs.ErrNotExist
// when the blob is not cached.
func (c *blobCache) open(h v1.Hash, size int64) (io.ReadCloser, error) {
	p, ok := c.path(h)
	if !ok {
		return nil, fs.ErrNotExist
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	c.dir.Touch(p)
	return newVerifier(f, h, size, func(r verdict) error {
		if r == corrupt {
			_ = os.Remove(p) // fetch it again next time
		}
		return nil
	}), nil
}

// readAll returns the cached blob h, verified, or an error matching
// fs.ErrNotExist.
func (c *blobCache) readAll(h v1.Hash, size, limit int64) ([]byte, error) {
	rc, err := c.open(h, size)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return readLimited(rc, limit)
}

// put stores data as blob h if it matches h.
func (c *blobCache) put(h v1.Hash, data []byte) error {
	p, ok := c.path(h)
	if !ok {
		return nil
	}
	if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != h.Hex {
		return fmt.Errorf("blob does not match its digest %s", h)
	}
	if _, err := os.Lstat(p); err == nil {
		c.dir.Touch(p)
		return nil
	}
	tmp, err := c.dir.Create(blobsSub, h.Hex)
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	return c.commit(tmp, h)
}

// tee returns a reader of rc that also writes what it reads to the cache
// and stores the blob once rc has been read to its end and matched h and
// size. A reader closed early stores nothing.
func (c *blobCache) tee(rc io.ReadCloser, h v1.Hash, size int64) io.ReadCloser {
	if _, ok := c.path(h); !ok {
		return rc
	}
	tmp, err := c.dir.Create(blobsSub, h.Hex)
	if err != nil {
		return rc // the cache is an optimisation: stream without it
	}
	t := &teeCloser{rc: rc, w: tmp, forget: interrupt.OnExit(func() { _ = os.Remove(tmp.Name()) })}
	return newVerifier(t, h, size, func(r verdict) error {
		if r != verified || t.werr != nil {
			return nil // teeCloser.Close removes the temporary file
		}
		t.committed = true
		// A blob that cannot be stored is fetched again next time; the
		// read itself succeeded.
		_ = c.commit(tmp, h)
		return nil
	})
}

// commit closes tmp and stores it as the blob h.
func (c *blobCache) commit(tmp *os.File, h v1.Hash) error {
	name := tmp.Name()
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	return c.dir.Commit(name, blobsSub, h.Hex)
}

// teeCloser copies what is read from rc to w; a write error only stops the
// copying (the blob is then not cached), never the read.
type teeCloser struct {
	rc        io.ReadCloser
	w         *os.File
	werr      error
	committed bool
	forget    func() // unregisters the removal of w on a signal
}

func (t *teeCloser) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if n > 0 && t.werr == nil {
		if _, werr := t.w.Write(p[:n]); werr != nil {
			t.werr = werr
		}
	}
	return n, err
}

func (t *teeCloser) Close() error {
	t.forget()
	if !t.committed {
		t.w.Close()
		os.Remove(t.w.Name())
	}
	return t.rc.Close()
}

// verdict is what a verifier found out about a blob.
type verdict int

const (
	verified  verdict = iota // read to the end, digest and size match
	corrupt                  // digest or size do not match
	abandoned                // closed or failed before the end
)

// verifier checks, as its reader reaches the end, that the bytes read
// match a digest and size; done is told the verdict once.
type verifier struct {
	rc   io.ReadCloser
	want v1.Hash
	size int64
	h    hash.Hash
	n    int64
	done func(verdict) error
	end  error // sticky result once the verdict is known
}

func newVerifier(rc io.ReadCloser, want v1.Hash, size int64, done func(verdict) error) io.ReadCloser {
	return &verifier{rc: rc, want: want, size: size, h: sha256.New(), done: done}
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.end != nil {
		return 0, v.end
	}
	n, err := v.rc.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	switch {
	case v.size >= 0 && v.n > v.size:
		return n, v.finish(corrupt, fmt.Errorf("blob %s is larger than its %d bytes", v.want, v.size))
	case errors.Is(err, io.EOF):
		if v.size >= 0 && v.n != v.size {
			return n, v.finish(corrupt, fmt.Errorf("blob %s: read %d bytes, want %d", v.want, v.n, v.size))
		}
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want.Hex {
			return n, v.finish(corrupt, fmt.Errorf("blob %s: content has digest sha256:%s", v.want, got))
		}
		return n, v.finish(verified, io.EOF)
	case err != nil:
		return n, v.finish(abandoned, err)
	}
	return n, nil
}

// finish records the verdict, tells done, and returns the error readers
// get from now on.
func (v *verifier) finish(r verdict, err error) error {
	if derr := v.done(r); derr != nil {
		err = derr
	}
	v.end = err
	return err
}

func (v *verifier) Close() error {
	if v.end == nil {
		v.finish(abandoned, errors.New("blob reader closed"))
	}
	return v.rc.Close()
}

// readLimited reads r to its end, refusing more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: blob is larger than %d bytes", ErrLimitExceeded, limit)
	}
	return data, nil
}
