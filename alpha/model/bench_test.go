package model

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/internal/shapecat"
)

// BenchmarkBuildLarge measures loading the large catalog into the model
// and checking every rule (no CUE schema step).
func BenchmarkBuildLarge(b *testing.B) {
	dir := os.Getenv("OPM_BENCH_CATALOG")
	if dir == "" {
		dir = "/tmp/bench-large"
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("benchmark catalog %s not found (set OPM_BENCH_CATALOG or run make bench-catalog)", dir)
	}
	for b.Loop() {
		bld := NewBuilder()
		if err := declcfg.Walk(context.Background(), os.DirFS(dir), func(blob *declcfg.Blob) error {
			bld.AddBlob(blob)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if _, problems := bld.Build(); len(problems) > 0 {
			b.Fatalf("bench catalog has problems: %v", problems.Err())
		}
	}
}

// BenchmarkBuildShapes builds the model of each synthetic catalog shape
// (internal/shapecat) at the size of the project's targets: costs that
// grow with the shape rather than the bytes show here.
func BenchmarkBuildShapes(b *testing.B) {
	for _, s := range shapecat.Shapes {
		b.Run(s.Name, func(b *testing.B) {
			var blobs []declcfg.Blob
			if err := declcfg.Walk(context.Background(), s.FS(0), func(blob *declcfg.Blob) error {
				c := *blob
				c.JSON = bytes.Clone(blob.JSON)
				blobs = append(blobs, c)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				bld := NewBuilder()
				for i := range blobs {
					bld.AddBlob(&blobs[i])
				}
				if _, problems := bld.Build(); len(problems) > 0 {
					b.Fatalf("%s: %v", s.Name, problems.Err())
				}
			}
		})
	}
}
