package model

import (
	"context"
	"os"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
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
		bld := NewBuilder(Options{})
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
