package image

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// uncompressed opens a layer's tar stream: its compressed bytes (whose
// digest the pull verifies as they are read) decompressed by klauspost's
// gzip or zstd readers, which decode gzip about twice as fast as
// compress/gzip, the decoder go-containerregistry's Uncompressed uses.
// The format is read from the stream's first bytes, as containerd and
// go-containerregistry decide it, whatever the media type says; a stream
// that is neither is an uncompressed tar.
func uncompressed(l v1.Layer) (io.ReadCloser, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(rc, 1<<20)
	magic, err := br.Peek(4)
	if err != nil && err != io.EOF {
		rc.Close()
		return nil, err
	}
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			rc.Close()
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return &decompressor{Reader: zr, close: func() error { zr.Close(); return rc.Close() }}, nil
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false))
		if err != nil {
			rc.Close()
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return &decompressor{Reader: zr, close: func() error { zr.Close(); return rc.Close() }}, nil
	}
	return &decompressor{Reader: br, close: rc.Close}, nil
}

type decompressor struct {
	io.Reader
	close func() error
}

func (d *decompressor) Close() error { return d.close() }
