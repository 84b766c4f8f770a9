package action

import (
	"context"
	"os"
	"testing"
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
