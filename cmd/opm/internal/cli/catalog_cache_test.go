package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func cachedSnapshots(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "install", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// query install keeps a snapshot of each catalog in --catalog-cache-dir,
// answers a changed catalog from its files, and keeps nothing with
// --no-catalog-cache.
func TestQueryInstallCatalogCache(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(goldenRoot, "install", "community", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(t.TempDir(), "community")
	if err := os.Mkdir(cat, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(cat, "catalog.yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	ask := func(extra ...string) (int, string) {
		t.Helper()
		code, out, errOut := run(t, append([]string{"alpha", "query", "install", cat, "-p", "etcd", "--catalog-cache-dir", cache}, extra...)...)
		if errOut != "" {
			t.Errorf("stderr: %s", errOut)
		}
		return code, out
	}
	code, first := ask()
	if code != 0 || !strings.Contains(first, "etcdoperator.v0.9.4") {
		t.Fatalf("exit %d:\n%s", code, first)
	}
	if n := cachedSnapshots(t, cache); n != 1 {
		t.Fatalf("%d snapshots after the first question, want 1", n)
	}
	if code, again := ask(); code != 0 || again != first {
		t.Fatalf("from the snapshot: exit %d:\n%s\nwant:\n%s", code, again, first)
	}
	// etcd's default channel becomes alpha, the file keeping its size.
	changed := strings.Replace(string(data), "defaultChannel: stable", "defaultChannel: alpha ", 1)
	if err := os.WriteFile(p, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := ask(); code != 0 || !strings.Contains(out, "etcdoperator.v0.10.0") {
		t.Fatalf("after the catalog changed (default channel alpha): exit %d:\n%s", code, out)
	}
	if n := cachedSnapshots(t, cache); n != 2 {
		t.Errorf("%d snapshots, want 2", n)
	}

	off := t.TempDir()
	code, _, errOut := run(t, "alpha", "query", "install", cat, "-p", "etcd", "--catalog-cache-dir", off, "--no-catalog-cache")
	if code != 0 || cachedSnapshots(t, off) != 0 {
		t.Errorf("--no-catalog-cache: exit %d, %d snapshots written\n%s", code, cachedSnapshots(t, off), errOut)
	}
	// OLM v1 reads what a snapshot does not hold: a cache asked for is a
	// wrong question there.
	if code, _, errOut := run(t, "alpha", "query", "install", cat, "-p", "etcd", "--olm", "v1", "--catalog-cache-dir", off); code != 2 || !strings.Contains(errOut, "OLM v0") {
		t.Errorf("--olm v1 --catalog-cache-dir: exit %d, want 2\n%s", code, errOut)
	}
	// But no cache asked for (an empty directory, "no cache", or
	// --no-catalog-cache beside it) is no wrong question.
	for _, args := range [][]string{{"--catalog-cache-dir", ""}, {"--catalog-cache-dir", off, "--no-catalog-cache"}} {
		args = append([]string{"alpha", "query", "install", cat, "-p", "etcd", "--olm", "v1"}, args...)
		if code, _, errOut := run(t, args...); code == 2 {
			t.Errorf("%v: exit 2, a cache that is none refused\n%s", args[6:], errOut)
		}
	}
}

// Where the cache is kept: $OPM_CATALOG_CACHE_DIR when set (empty: none),
// else in the user's cache directory.
func TestDefaultCatalogCacheDir(t *testing.T) {
	t.Setenv(catalogCacheEnv, "/some/where")
	if d, dflt := defaultCatalogCacheDir(); d != "/some/where" || dflt {
		t.Errorf("set: %q, %v", d, dflt)
	}
	t.Setenv(catalogCacheEnv, "")
	if d, _ := defaultCatalogCacheDir(); d != "" {
		t.Errorf("set empty: %q, want no cache", d)
	}
	if runtime.GOOS != "linux" {
		return // the user's cache directory is elsewhere there
	}
	os.Unsetenv(catalogCacheEnv)
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	t.Setenv("HOME", "/home/u")
	if d, dflt := defaultCatalogCacheDir(); d != filepath.Join("/xdg", "fastopm", "catalogs") || !dflt {
		t.Errorf("unset: %q, %v; want /xdg/fastopm/catalogs", d, dflt)
	}
}

// A default cache directory that cannot be made (a read-only or odd home)
// leaves the question without a cache; one asked for is an error.
func TestCatalogCacheDirUnusable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the user's cache directory is elsewhere")
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(goldenRoot, "install", "community")
	t.Setenv(catalogCacheEnv, "")
	os.Unsetenv(catalogCacheEnv)
	t.Setenv("XDG_CACHE_HOME", notDir) // fastopm/catalogs under a file
	if code, out, errOut := run(t, "alpha", "query", "install", cat, "-p", "etcd"); code != 0 || !strings.Contains(out, "etcdoperator.v0.9.4") || errOut != "" {
		t.Errorf("default directory unusable: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, "alpha", "query", "install", cat, "-p", "etcd", "--catalog-cache-dir", filepath.Join(notDir, "cache")); code != 2 || !strings.Contains(errOut, "catalog cache") {
		t.Errorf("--catalog-cache-dir unusable: exit %d, want 2\n%s", code, errOut)
	}
}
