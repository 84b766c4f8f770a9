package schema

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedCatalogs is the workspace's collection of real catalogs.
const sharedCatalogs = "../../../shared/catalogs"

// BenchmarkRealCatalogs checks every blob of every catalog of the shared
// collection (one catalog per directory), compares each verdict with the
// whole-blob reference and logs the violations found, by catalog. Run with
// -benchtime=1x -v to read them.
func BenchmarkRealCatalogs(b *testing.B) {
	dirs, err := filepath.Glob(filepath.Join(sharedCatalogs, "*"))
	if err != nil || len(dirs) == 0 {
		b.Skipf("%s not present", sharedCatalogs)
	}
	type catalog struct {
		name  string
		blobs []testBlob
	}
	var cats []catalog
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		bs, err := catalogBlobs(d)
		if err != nil {
			b.Fatal(err)
		}
		cats = append(cats, catalog{filepath.Base(d), bs})
	}
	for b.Loop() {
		c, err := New()
		if err != nil {
			b.Fatal(err)
		}
		for _, cat := range cats {
			found := map[string]int{}
			blobsWith := 0
			for _, bl := range cat.blobs {
				vs := checkAgainstReference(b, c, cat.name+"/"+bl.name, bl.schema, bl.data)
				if len(vs) > 0 {
					blobsWith++
				}
				for _, v := range vs {
					found[bl.schema+" "+pathPattern(v.Path)+": "+v.Message]++
				}
			}
			b.Logf("%s: %d blobs, %d with violations", cat.name, len(cat.blobs), blobsWith)
			for _, line := range summarize(found) {
				b.Logf("  %s", line)
			}
		}
	}
}
