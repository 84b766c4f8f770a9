package action

import (
	"context"
	"io"
	"os"
	"testing"
)

// benchCatalog returns the large benchmark catalog built by `make bench`
// (see docs/performance.md), or skips.
func benchCatalog(b *testing.B, env, def string) string {
	dir := os.Getenv(env)
	if dir == "" {
		dir = def
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("benchmark catalog %s not found (set %s or run `make bench-catalog`)", dir, env)
	}
	return dir
}

func BenchmarkRenderLarge(b *testing.B) {
	dir := benchCatalog(b, "OPM_BENCH_CATALOG", "/tmp/bench-large")
	for b.Loop() {
		if err := (Render{Refs: []string{dir}}).Run(context.Background(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderYAMLCatalog(b *testing.B) {
	dir := benchCatalog(b, "OPM_BENCH_YAML_CATALOG", "../../../shared/catalogs/certified-operators-v4.16")
	for b.Loop() {
		if err := (Render{Refs: []string{dir}}).Run(context.Background(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
