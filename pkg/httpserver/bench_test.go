package httpserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// benchSnapshot is the saved cache of $OPM_BENCH_CATALOG or
// /tmp/bench-large (make bench-catalog).
func benchSnapshot(b *testing.B) *cache.Snapshot {
	dir := os.Getenv("OPM_BENCH_CATALOG")
	if dir == "" {
		dir = "/tmp/bench-large"
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("benchmark catalog %s not found (set OPM_BENCH_CATALOG or run make bench-catalog)", dir)
	}
	cacheDir := b.TempDir()
	snap, err := action.LoadServeDir(context.Background(), os.DirFS(dir), cacheDir, "bench", true)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { snap.Close() })
	return snap
}

func download(b *testing.B, c *http.Client, u string, header ...string) int64 {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode >= 400 {
		b.Fatalf("%s: %d %v", u, resp.StatusCode, err)
	}
	return n
}

// BenchmarkAll downloads /api/v1/all over loopback; BenchmarkAllBaseline
// downloads the same bytes from a file served by http.ServeContent alone,
// the limit to compare with (MB/s is the throughput).
func BenchmarkAll(b *testing.B) {
	snap := benchSnapshot(b)
	hs, err := httpserver.New(snap, httpserver.Options{CatalogName: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	b.SetBytes(snap.Lines().Size())
	b.ResetTimer()
	for b.Loop() {
		download(b, ts.Client(), ts.URL+"/api/v1/all")
	}
}

func BenchmarkAllBaseline(b *testing.B) {
	snap := benchSnapshot(b)
	file := filepath.Join(b.TempDir(), "catalog.jsonl")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(f, snap.Lines().All()); err != nil {
		b.Fatal(err)
	}
	f.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(file)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer f.Close()
		w.Header().Add("Content-Type", "application/jsonl")
		http.ServeContent(w, r, "", time.Time{}, f)
	}))
	defer ts.Close()
	b.SetBytes(snap.Lines().Size())
	b.ResetTimer()
	for b.Loop() {
		download(b, ts.Client(), ts.URL+"/")
	}
}

// BenchmarkNotModified is a 304 for If-Modified-Since.
func BenchmarkNotModified(b *testing.B) {
	snap := benchSnapshot(b)
	hs, err := httpserver.New(snap, httpserver.Options{CatalogName: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	lm := snap.Modified.UTC().Format(http.TimeFormat)
	for b.Loop() {
		download(b, ts.Client(), ts.URL+"/api/v1/all", "If-Modified-Since", lm)
	}
}

// BenchmarkMetasPackage answers the lines of one package.
func BenchmarkMetasPackage(b *testing.B) {
	snap := benchSnapshot(b)
	hs, err := httpserver.New(snap, httpserver.Options{CatalogName: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	pkgs := snap.Index.Packages
	i := 0
	for b.Loop() {
		download(b, ts.Client(), ts.URL+"/api/v1/metas?schema=olm.bundle&package="+pkgs[i%len(pkgs)].Name)
		i++
	}
}

// BenchmarkPackageView decodes a package for the JSON answers, as the
// first request for it does.
func BenchmarkPackageView(b *testing.B) {
	snap := benchSnapshot(b)
	pkgs := snap.Index.Packages
	i := 0
	for b.Loop() {
		// A new server each time: its cache of decoded packages is empty.
		hs, err := httpserver.New(snap, httpserver.Options{CatalogName: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		rec := httptest.NewRecorder()
		hs.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/packages/"+pkgs[i%len(pkgs)].Name, nil))
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
		i++
	}
}
