package action

import (
	"context"
	"os"
	"testing"

	"github.com/fastopm/fastopm/internal/shapecat"
)

func BenchmarkValidateLarge(b *testing.B) {
	dir := benchCatalog(b, "OPM_BENCH_CATALOG", "/tmp/bench-large")
	for b.Loop() {
		res, err := (Validate{FS: os.DirFS(dir)}).Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if !res.Passed() {
			b.Fatalf("bench catalog invalid: %v", res.Err())
		}
	}
}

func BenchmarkValidateYAMLCatalog(b *testing.B) {
	dir := benchCatalog(b, "OPM_BENCH_YAML_CATALOG", "../../../shared/catalogs/certified-operators-v4.16")
	for b.Loop() {
		if _, err := (Validate{FS: os.DirFS(dir)}).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateShapes validates each synthetic catalog shape
// (internal/shapecat) at the size of the project's targets.
func BenchmarkValidateShapes(b *testing.B) {
	for _, s := range shapecat.Shapes {
		b.Run(s.Name, func(b *testing.B) {
			fsys := s.FS(0)
			for b.Loop() {
				res, err := (Validate{FS: fsys}).Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if !res.Passed() {
					b.Fatalf("%s: %v", s.Name, res.Err())
				}
			}
		})
	}
}
