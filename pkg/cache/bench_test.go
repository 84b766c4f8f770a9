package cache

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastopm/fastopm/internal/shapecat"
)

// benchCatalog is the catalog of the benchmarks: $OPM_BENCH_CATALOG, or
// the large benchmark catalog at /tmp/bench-large, or else a small real
// catalog of the repository's testdata.
func benchCatalog(b *testing.B) string {
	if dir := os.Getenv("OPM_BENCH_CATALOG"); dir != "" {
		return dir
	}
	if _, err := os.Stat("/tmp/bench-large"); err == nil {
		return "/tmp/bench-large"
	}
	return "../../testdata/catalogs/submariner-v4.14"
}

// BenchmarkBuild is the cold start: one pass over the catalog that
// validates it and encodes every answer into a temporary file.
func BenchmarkBuild(b *testing.B) {
	dir := benchCatalog(b)
	fsys := os.DirFS(dir)
	tmp := b.TempDir()
	for b.Loop() {
		snap, _, err := build(b.Context(), fsys, tmp)
		if err != nil {
			b.Fatal(err)
		}
		snap.Close()
	}
}

// BenchmarkOpen is the start with a pre-built cache: read the index and
// check the catalog's fingerprint.
func BenchmarkOpen(b *testing.B) {
	dir := benchCatalog(b)
	fsys := os.DirFS(dir)
	cacheDir := filepath.Join(b.TempDir(), "cache")
	snap, err := buildDir(b.Context(), fsys, cacheDir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	snap.Close()
	for b.Loop() {
		snap, err := OpenDir(cacheDir)
		if err != nil {
			b.Fatal(err)
		}
		if err := snap.Fingerprint.Check(b.Context(), fsys, snap.Path); err != nil {
			b.Fatal(err)
		}
		snap.Close()
	}
}

// BenchmarkOpenIndex reads the index only (the fingerprint check aside).
func BenchmarkOpenIndex(b *testing.B) {
	dir := benchCatalog(b)
	cacheDir := filepath.Join(b.TempDir(), "cache")
	snap, err := buildDir(b.Context(), os.DirFS(dir), cacheDir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	snap.Close()
	for b.Loop() {
		snap, err := OpenDir(cacheDir)
		if err != nil {
			b.Fatal(err)
		}
		snap.Close()
	}
}

// BenchmarkBuildShapes is the cold start on each synthetic catalog shape
// (internal/shapecat) at the size of the project's targets.
func BenchmarkBuildShapes(b *testing.B) {
	tmp := b.TempDir()
	for _, s := range shapecat.Shapes {
		b.Run(s.Name, func(b *testing.B) {
			fsys := s.FS(0)
			for b.Loop() {
				snap, _, err := build(b.Context(), fsys, tmp)
				if err != nil {
					b.Fatal(err)
				}
				snap.Close()
			}
		})
	}
}

// BenchmarkVerify checks every stored answer of a saved cache (the file in
// the page cache), as opm serve does before it serves.
func BenchmarkVerify(b *testing.B) {
	dir := benchCatalog(b)
	cacheDir := filepath.Join(b.TempDir(), "cache")
	snap, err := buildDir(b.Context(), os.DirFS(dir), cacheDir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	snap.Close()
	snap, err = OpenDir(cacheDir)
	if err != nil {
		b.Fatal(err)
	}
	defer snap.Close()
	for b.Loop() {
		if err := snap.Verify(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
