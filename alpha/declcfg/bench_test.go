package declcfg

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
)

// benchDir is the large benchmark catalog (make bench-catalog), or a skip.
func benchDir(b *testing.B) string {
	dir := os.Getenv("OPM_BENCH_CATALOG")
	if dir == "" {
		dir = "/tmp/bench-large"
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("benchmark catalog %s not found (set OPM_BENCH_CATALOG or run make bench-catalog)", dir)
	}
	return dir
}

// BenchmarkWalkLarge measures the loader alone: read, canonicalize and
// identify every blob of the large catalog.
func BenchmarkWalkLarge(b *testing.B) {
	dir := benchDir(b)
	var bytes atomic.Int64
	for b.Loop() {
		bytes.Store(0)
		err := Walk(context.Background(), os.DirFS(dir), func(blob *Blob) error {
			bytes.Add(int64(len(blob.JSON)))
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(bytes.Load())
}

// BenchmarkDecodeBundles measures typed decoding of every bundle.
func BenchmarkDecodeBundles(b *testing.B) {
	dir := benchDir(b)
	var blobs [][]byte
	if err := Walk(context.Background(), os.DirFS(dir), func(blob *Blob) error {
		if blob.Schema == SchemaBundle {
			blobs = append(blobs, append([]byte(nil), blob.JSON...))
		}
		return nil
	}, WithConcurrency(1)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, data := range blobs {
			if _, err := DecodeBundle(data); err != nil {
				b.Fatal(err)
			}
		}
	}
}
