//go:build unix

package action

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestServeRefusesNamedPipe: a named pipe in the catalog is refused by
// name, cold or with a cache directory, instead of blocking the load
// forever; one that .indexignore excludes is never opened.
func TestServeRefusesNamedPipe(t *testing.T) {
	t.Parallel()
	cat := catalogDir(t, serveCatalog)
	if err := syscall.Mkfifo(filepath.Join(cat, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Serve{{}, {CacheDir: filepath.Join(t.TempDir(), "cache"), CacheOnly: true}} {
		s.CatalogDir, s.TempDir = cat, t.TempDir()
		_, err := runServe(t, s)
		if err == nil || !strings.Contains(err.Error(), "pipe: not a regular file (a named pipe)") {
			t.Errorf("cache dir %q: error %v, want the named pipe refused", s.CacheDir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(cat, ".indexignore"), []byte("pipe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Serve{CatalogDir: cat, CacheDir: filepath.Join(t.TempDir(), "cache"), TempDir: t.TempDir()}
	if logs, err := runServe(t, s); err != nil {
		t.Errorf("with the pipe ignored: %v\n%s", err, logs)
	}
}
