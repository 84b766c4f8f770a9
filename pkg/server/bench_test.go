package server

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/fastopm/fastopm/pkg/api"
)

// benchClient serves $OPM_BENCH_CATALOG, /tmp/bench-large or a testdata
// catalog over bufconn.
func benchClient(b *testing.B) (api.RegistryClient, []*api.Bundle) {
	dir := os.Getenv("OPM_BENCH_CATALOG")
	if dir == "" {
		dir = "/tmp/bench-large"
		if _, err := os.Stat(dir); err != nil {
			dir = "../../testdata/catalogs/submariner-v4.14"
		}
	}
	c := api.NewRegistryClient(serveDir(b, dir))
	bundles, err := recv(c.ListBundles(b.Context(), &api.ListBundlesRequest{}))
	if err != nil || len(bundles) == 0 {
		b.Fatalf("ListBundles: %d bundles, %v", len(bundles), err)
	}
	return c, bundles
}

func BenchmarkGetBundle(b *testing.B) {
	c, bundles := benchClient(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			x := bundles[i%len(bundles)]
			i += 7
			if _, err := c.GetBundle(b.Context(), &api.GetBundleRequest{PkgName: x.GetPackageName(), ChannelName: x.GetChannelName(), CsvName: x.GetCsvName()}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkGetPackage(b *testing.B) {
	c, bundles := benchClient(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := c.GetPackage(b.Context(), &api.GetPackageRequest{Name: bundles[i%len(bundles)].GetPackageName()}); err != nil {
				b.Error(err)
				return
			}
			i += 13
		}
	})
}

func BenchmarkListBundles(b *testing.B) {
	c, _ := benchClient(b)
	for b.Loop() {
		s, err := c.ListBundles(b.Context(), &api.ListBundlesRequest{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := s.Recv(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}
