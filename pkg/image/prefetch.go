package image

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// prefetchJobs is how many layers are downloaded at once while Unpack
// applies earlier ones.
const prefetchJobs = 3

// prefetcher downloads the layers of a pulled image in the background, in
// order and a few at a time, while Unpack applies earlier layers: layers
// must be applied one after the other, but need not be downloaded so.
// Downloads go to the image cache when there is one, else to a temporary
// directory removed by close.
type prefetcher struct {
	dir    string
	slots  []chan prefetched
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type prefetched struct {
	layer v1.Layer
	err   error
}

// prefetch starts downloading layers.
func (p *puller) prefetch(ctx context.Context, layers []v1.Layer) (*prefetcher, error) {
	pf := &prefetcher{slots: make([]chan prefetched, len(layers))}
	if p.cache == nil {
		dir, err := os.MkdirTemp("", "opm-layers-")
		if err != nil {
			return nil, fmt.Errorf("create temporary directory for layers: %w", err)
		}
		pf.dir = dir
	}
	ctx, pf.cancel = context.WithCancel(ctx)
	next := make(chan int, len(layers))
	for i := range layers {
		pf.slots[i] = make(chan prefetched, 1)
		next <- i
	}
	close(next)
	for range min(prefetchJobs, len(layers)) {
		pf.wg.Add(1)
		go func() {
			defer pf.wg.Done()
			for i := range next {
				if err := ctx.Err(); err != nil {
					pf.slots[i] <- prefetched{err: err}
					continue
				}
				l, err := p.download(ctx, pf.dir, i, layers[i])
				pf.slots[i] <- prefetched{layer: l, err: err}
			}
		}()
	}
	return pf, nil
}

// layer waits for layer i and returns it, ready to be read from disk.
func (pf *prefetcher) layer(i int) (v1.Layer, error) {
	r := <-pf.slots[i]
	return r.layer, r.err
}

// close stops the downloads and removes what they wrote.
func (pf *prefetcher) close() {
	pf.cancel()
	pf.wg.Wait()
	if pf.dir != "" {
		os.RemoveAll(pf.dir)
	}
}

// download fetches layer l, verified, into the cache (the returned layer
// then reads from there) or into dir.
func (p *puller) download(ctx context.Context, dir string, i int, l v1.Layer) (v1.Layer, error) {
	desc, err := partial.Descriptor(l)
	if err != nil {
		return nil, err
	}
	if p.cache != nil {
		if path, ok := p.cache.path(desc.Digest); ok {
			if _, err := os.Stat(path); err == nil {
				return l, nil
			}
		}
	}
	// Bound to ctx, the request stops when Unpack returns.
	rc, err := p.blobContext(ctx, *desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if p.cache != nil {
		// Reading to the end verifies the blob and stores it in the cache.
		if _, err := io.Copy(io.Discard, &ctxReader{ctx: ctx, r: rc}); err != nil {
			return nil, fmt.Errorf("fetch blob %s: %w", desc.Digest, err)
		}
		return l, nil
	}
	path := filepath.Join(dir, strconv.Itoa(i))
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(f, &ctxReader{ctx: ctx, r: rc})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("fetch blob %s: %w", desc.Digest, err)
	}
	return partial.CompressedToLayer(&fileLayer{path: path, desc: *desc})
}

// fileLayer is a downloaded (and verified) compressed layer on disk.
type fileLayer struct {
	path string
	desc v1.Descriptor
}

func (l *fileLayer) Digest() (v1.Hash, error)            { return l.desc.Digest, nil }
func (l *fileLayer) Size() (int64, error)                { return l.desc.Size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.path) }
