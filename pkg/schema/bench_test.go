package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// benchLargeDir is the large benchmark catalog, built from ../shared by
// make bench-catalog (docs/performance.md): JSON lines in canonical form,
// one blob per line.
const benchLargeDir = "/tmp/bench-large"

type benchBlob struct {
	schema string
	data   []byte
}

func loadJSONLines(b *testing.B, dir string) ([]benchBlob, int64) {
	b.Helper()
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("%s not present (build it with ../shared/tools/scalecat): %v", dir, err)
	}
	var blobs []benchBlob
	var size int64
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			var meta struct {
				Schema string `json:"schema"`
			}
			if err := json.Unmarshal(line, &meta); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			blobs = append(blobs, benchBlob{meta.Schema, line})
			size += int64(len(line))
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return blobs, size
}

// BenchmarkCheckLarge checks every blob of the large catalog with a new
// Checker per iteration (cold memo), on one goroutine: what one
// `opm validate` run pays.
func BenchmarkCheckLarge(b *testing.B) {
	blobs, size := loadJSONLines(b, benchLargeDir)
	b.SetBytes(size)
	b.ReportAllocs()
	var st Stats
	violations := 0
	for b.Loop() {
		c, err := New()
		if err != nil {
			b.Fatal(err)
		}
		violations = 0
		for _, bl := range blobs {
			violations += len(c.Check(bl.schema, bl.data))
		}
		st = c.Stats()
	}
	b.ReportMetric(float64(len(blobs)), "blobs")
	b.ReportMetric(float64(st.Shapes), "shapes")
	b.ReportMetric(float64(st.ShapeEvals), "shape-evals")
	b.ReportMetric(float64(st.RealEvals), "real-evals")
	b.ReportMetric(float64(violations), "violations")
}

// BenchmarkCheckLargeWarm checks every blob of the large catalog with a
// Checker whose memo already holds every shape: the cost of shaping.
func BenchmarkCheckLargeWarm(b *testing.B) {
	blobs, size := loadJSONLines(b, benchLargeDir)
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	for _, bl := range blobs {
		c.Check(bl.schema, bl.data)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, bl := range blobs {
			c.Check(bl.schema, bl.data)
		}
	}
}

// BenchmarkNew measures compiling the embedded schema.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckLargeParallel checks every blob of the large catalog with a
// new Checker per iteration, from GOMAXPROCS goroutines sharing it: the
// wall time of the schema step of a parallel `opm validate`.
func BenchmarkCheckLargeParallel(b *testing.B) {
	blobs, size := loadJSONLines(b, benchLargeDir)
	b.SetBytes(size)
	workers := runtime.GOMAXPROCS(0)
	for b.Loop() {
		c, err := New()
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(blobs); i += workers {
					c.Check(blobs[i].schema, blobs[i].data)
				}
			}()
		}
		wg.Wait()
	}
}
