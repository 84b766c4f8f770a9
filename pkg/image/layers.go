package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"runtime"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastopm/fastopm/pkg/scratch"
)

// Layers are read in parallel and applied in order.
//
// Every layer must be read to its end, even when nothing in it is wanted:
// its digest is checked, and a later layer may delete (whiteouts) or
// replace what an earlier one wrote, which is only known once its entries
// have been read; with gzip that means decompressing it all, the bulk of
// the work of unpacking an image. So each layer has a goroutine that
// downloads and decompresses it at once, several at a time, while the
// layers are applied strictly one after the other: a goroutine whose turn
// has not come yet (an earlier layer is still being applied) keeps the
// entries that applying will need (what entry would not skip: the wanted
// sub-trees and the whiteouts that affect them) and the content of wanted
// files in a scratch file; when its turn comes it applies what it kept and
// then applies the rest of its layer as it reads it. For a catalog image
// (base layers, the catalog, the serve cache) the layers that hold nothing
// wanted are decompressed beside the one that does instead of after it.

// layerJobs is how many layers are read at once.
func layerJobs() int { return max(runtime.GOMAXPROCS(0), 2) + 1 }

// keptEntry is an entry read before its layer's turn.
type keptEntry struct {
	hdr    *tar.Header
	off, n int64 // its content in the layer's scratch file
	stored bool  // whether the content was kept
}

// applyParallel applies the layers in order, reading them in parallel.
func (u *unpacker) applyParallel(ctx context.Context, layers []v1.Layer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	turns := make([]chan struct{}, len(layers)+1)
	for i := range turns {
		turns[i] = make(chan struct{})
	}
	close(turns[0])
	errs := make([]error, len(layers))
	var wg sync.WaitGroup
	slots := make(chan struct{}, layerJobs())
	// Layers take slots in order, so the earliest layer not applied yet
	// always holds one: a layer waiting for its turn never blocks the
	// layers before it.
dispatch:
	for i, l := range layers {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break dispatch
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			err := u.layerInTurn(ctx, l, turns[i], turns[i+1])
			if err != nil {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	// The error of the earliest layer that failed, unless it only stopped
	// because a later one failed.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

// layerInTurn reads layer l, applying its entries once turn is closed (all
// earlier layers applied), and closes next when it is applied.
func (u *unpacker) layerInTurn(ctx context.Context, l v1.Layer, turn <-chan struct{}, next chan<- struct{}) error {
	d, err := l.Digest()
	if err != nil {
		return fmt.Errorf("layer digest: %w", err)
	}
	if u.records != nil {
		return u.layerRecorded(ctx, l, d, turn, next)
	}
	layerErr := func(err error) error {
		var ee *EntryError
		if errors.As(err, &ee) || errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("layer %s: %w", d, err)
	}
	rc, err := uncompressed(l)
	if err != nil {
		return layerErr(fmt.Errorf("open: %w", err))
	}
	defer rc.Close()
	r := &ctxReader{ctx: ctx, r: rc}
	tr := tar.NewReader(r)

	var (
		active bool
		kept   []keptEntry
		ls     = &layerStore{}
		stored int64
	)
	defer func() { u.dest.release(ls) }()
	// start applies the layer's kept entries once its turn has come.
	start := func() error {
		active = true
		err := u.applyKept(d, ls, kept)
		kept = nil
		return err
	}
	myTurn := func() bool {
		select {
		case <-turn:
			return true
		default:
			return false
		}
	}
	for {
		hdr, err := nextHeader(ctx, tr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			return layerErr(err)
		}
		if !active && myTurn() {
			if err := start(); err != nil {
				return err
			}
		}
		if active {
			if err := u.entry(tr, hdr); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return &EntryError{Layer: d, Entry: hdr.Name, Err: err}
			}
			continue
		}
		keep, content := u.keeps(hdr)
		if !keep {
			continue
		}
		if len(kept) >= u.limits.MaxEntries {
			return &EntryError{Layer: d, Entry: hdr.Name, Err: fmt.Errorf("%w: more than %d entries", ErrLimitExceeded, u.limits.MaxEntries)}
		}
		h := *hdr
		k := keptEntry{hdr: &h}
		// Content beyond the limits is not kept: applying the entry
		// reports the limit before reading it.
		if content && hdr.Size >= 0 && hdr.Size <= u.limits.MaxFileSize && stored+hdr.Size <= u.limits.MaxTotalSize {
			spool := ls.get()
			k.off, k.n, k.stored = spool.Size(), hdr.Size, true
			n, err := io.CopyN(appender{spool}, tr, hdr.Size)
			stored += n
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return layerErr(fmt.Errorf("read tar: %w", err))
			}
			if name, err := cleanPath(hdr.Name); err == nil {
				u.dest.stored(name, spool, k.off, k.n)
			}
		}
		kept = append(kept, k)
	}
	// Read to the end so that the digest of the layer is verified.
	if _, err := io.Copy(io.Discard, r); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return layerErr(fmt.Errorf("read: %w", err))
	}
	if !active {
		select {
		case <-turn:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := start(); err != nil {
			return err
		}
	}
	close(next)
	return nil
}

// applyKept starts applying the layer d, whose storage is ls: the entries
// kept before its turn first.
func (u *unpacker) applyKept(d v1.Hash, ls *layerStore, kept []keptEntry) error {
	u.touched = map[string]struct{}{}
	u.parentOK = ""
	u.layer = d
	u.store = ls
	for _, k := range kept {
		var content io.Reader = strings.NewReader("")
		if k.stored {
			content = &spooled{SectionReader: io.NewSectionReader(ls.f, k.off, k.n), f: ls.f, off: k.off}
		}
		if err := u.entry(content, k.hdr); err != nil {
			return &EntryError{Layer: d, Entry: k.hdr.Name, Err: err}
		}
	}
	return nil
}

// layerRecorded is layerInTurn with a cache of layer records
// (records.go): the layer's record, or the layer read whole into a new
// record, is applied once turn is closed.
func (u *unpacker) layerRecorded(ctx context.Context, l v1.Layer, d v1.Hash, turn <-chan struct{}, next chan<- struct{}) error {
	ls := &layerStore{}
	defer func() { u.dest.release(ls) }()
	kept, ok, err := u.records.replay(u, d, ls)
	if err != nil {
		return err
	}
	if !ok {
		if kept, err = u.records.record(ctx, u, l, d, ls); err != nil {
			var ee *EntryError
			if errors.As(err, &ee) || errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return err
			}
			return fmt.Errorf("layer %s: %w", d, err)
		}
	}
	select {
	case <-turn:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := u.applyKept(d, ls, kept); err != nil {
		return err
	}
	close(next)
	return nil
}

// keeps reports whether applying hdr may change the destination, so that
// an entry read before its layer's turn must be kept, and whether its
// content is needed: the tests of entry, without its effects.
func (u *unpacker) keeps(hdr *tar.Header) (keep, content bool) {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return false, false
	}
	name, err := cleanPath(hdr.Name)
	if err != nil {
		return true, false // entry reports it
	}
	if name == "." {
		return false, false
	}
	dir, base := path.Dir(name), path.Base(name)
	switch {
	case base == whiteoutOpaque:
		return u.affects(dir), false
	case strings.HasPrefix(base, whiteoutMeta):
		return false, false
	case strings.HasPrefix(base, whiteoutPrefix):
		hidden := base[len(whiteoutPrefix):]
		if hidden == "." || hidden == ".." {
			return true, false
		}
		return u.affects(path.Join(dir, hidden)), false
	}
	if !u.selected(name) {
		return false, false
	}
	//lint:ignore SA1019 TypeRegA ('\x00') still appears in layers written by old tools.
	return true, hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeRegA || hdr.Typeflag == tar.TypeGNUSparse
}

// appender writes to the end of a scratch file.
type appender struct{ f *scratch.File }

func (a appender) Write(p []byte) (int, error) {
	if _, err := a.f.Append(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// nextHeader is tr.Next for unpacking: io.EOF at the end; an insecure
// name is no error (GODEBUG=tarinsecurepath=0; entry() judges names
// itself); when reading fails, ctx's error if it is done first.
func nextHeader(ctx context.Context, tr *tar.Reader) (*tar.Header, error) {
	hdr, err := tr.Next()
	switch {
	case errors.Is(err, io.EOF):
		return nil, io.EOF
	case errors.Is(err, tar.ErrInsecurePath) && hdr != nil:
		return hdr, nil
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, fmt.Errorf("read tar: %w", err)
	}
	return hdr, nil
}
