package diskcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// put writes a file of n bytes as sub/name through Create and Commit.
func put(t *testing.T, d *Dir, sub, name string, n int) error {
	t.Helper()
	f, err := d.Create(sub, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(strings.Repeat("x", n))); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return d.Commit(f.Name(), sub, name)
}

// names lists the files under the Dir, as sub/name, sorted.
func names(t *testing.T, d *Dir) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(d.Root(), func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() || e.Name() == lockName {
			return err
		}
		rel, _ := filepath.Rel(d.Root(), p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// age sets the time a file was last used.
func age(t *testing.T, p string, ago time.Duration) {
	t.Helper()
	when := time.Now().Add(-ago)
	if err := os.Chtimes(p, when, when); err != nil {
		t.Fatal(err)
	}
}

// Past the bound, the files used least recently are removed, down to nine
// tenths of it, whatever their sub-directory; a file touched is kept.
func TestTrimLeastRecentlyUsed(t *testing.T) {
	d, err := Open(t.TempDir(), 1000, "one", "two")
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a", "b", "c", "d"} {
		if err := put(t, d, []string{"one", "two"}[i%2], name, 200); err != nil {
			t.Fatal(err)
		}
		age(t, d.Path([]string{"one", "two"}[i%2], name), time.Duration(10-i)*time.Minute)
	}
	d.Touch(d.Path("one", "a")) // the oldest, used now
	// 800 bytes + 300: past 1000, trimmed to at most 900.
	if err := put(t, d, "one", "e", 300); err != nil {
		t.Fatal(err)
	}
	if got, want := names(t, d), []string{"one/a", "one/c", "one/e", "two/d"}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v (b, used least recently, removed)", got, want)
	}
}

// A file larger than the bound is not kept; nothing else is removed for
// it.
func TestCommitTooLarge(t *testing.T) {
	d, err := Open(t.TempDir(), 100, "s")
	if err != nil {
		t.Fatal(err)
	}
	if err := put(t, d, "s", "small", 50); err != nil {
		t.Fatal(err)
	}
	if err := put(t, d, "s", "big", 101); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Commit of 101 bytes: %v, want ErrTooLarge", err)
	}
	if got := names(t, d); !slices.Equal(got, []string{"s/small"}) {
		t.Errorf("files %v, want s/small alone (no temporary file left)", got)
	}
}

// Temporary files of dead processes are removed once old; a recent one,
// which a live process may be writing, is kept.
func TestTrimStaleTemporaryFiles(t *testing.T) {
	// Bounded, and unbounded ($OPM_CATALOG_CACHE_MAX_SIZE=0): a dead
	// process's file is removed all the same.
	for _, max := range []int64{1 << 20, 0} {
		d, err := Open(t.TempDir(), max, "s")
		if err != nil {
			t.Fatal(err)
		}
		old, err := d.Create("s", "old")
		if err != nil {
			t.Fatal(err)
		}
		old.Close()
		age(t, old.Name(), 2*time.Hour)
		fresh, err := d.Create("s", "fresh")
		if err != nil {
			t.Fatal(err)
		}
		fresh.Close()
		// Trimming happens when something is over the bound... or always for
		// stale temporary files.
		if err := d.Trim(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(old.Name()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("bound %d: stale temporary file kept: %v", max, err)
		}
		if _, err := os.Stat(fresh.Name()); err != nil {
			t.Errorf("bound %d: recent temporary file removed: %v", max, err)
		}
	}
}

// While another process trims (holds the lock), Trim leaves it to it.
func TestTrimLocked(t *testing.T) {
	d, err := Open(t.TempDir(), 100, "s")
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(d.Root(), lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockFile(lock); err != nil {
		t.Skipf("no file locks here: %v", err)
	}
	for _, n := range []string{"a", "b"} {
		if err := put(t, d, "s", n, 60); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(t, d); len(got) != 2 {
		t.Errorf("trimmed while another holds the lock: %v", got)
	}
	lock.Close()
	if err := d.Trim(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, d); len(got) != 1 {
		t.Errorf("after the lock is released: %v, want one file", got)
	}
}

// Writers of the same file at once all succeed; the file is one of them,
// whole, and no temporary file is left.
func TestCommitConcurrent(t *testing.T) {
	d, err := Open(t.TempDir(), 1<<20, "s")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := d.Create("s", "same")
			if err != nil {
				errs[i] = err
				return
			}
			fmt.Fprintf(f, "%s", strings.Repeat("y", 4096))
			f.Close()
			errs[i] = d.Commit(f.Name(), "s", "same")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(d.Path("s", "same"))
	if err != nil || string(b) != strings.Repeat("y", 4096) {
		t.Errorf("file: %d bytes, %v", len(b), err)
	}
	if got := names(t, d); !slices.Equal(got, []string{"s/same"}) {
		t.Errorf("files %v", got)
	}
}

// A cache directory may be one the user keeps other files in
// (--catalog-cache-dir ~/work): trimming removes only the files of the
// cache's own sub-directories, never the user's, however old or large, nor
// a stale-looking temporary name of theirs; a sub-directory not named to
// Open is refused.
func TestTrimKeepsOtherFiles(t *testing.T) {
	root := t.TempDir()
	mine := map[string]int{
		"photo.jpg":           500,
		"install.txt":         10,
		"notes/.tmp-draft":    10,
		"other/deep/file.bin": 500,
		"install/sub/x":       500, // below the cache's sub-directory
	}
	for rel, n := range mine {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("u", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		age(t, p, 48*time.Hour)
	}
	d, err := Open(root, 300, "install")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		if err := put(t, d, "install", n, 100); err != nil {
			t.Fatal(err)
		}
	}
	for rel := range mine {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			t.Errorf("the user's %s: %v", rel, err)
		}
	}
	var kept int
	for _, n := range []string{"a", "b", "c", "d"} {
		if _, err := os.Stat(d.Path("install", n)); err == nil {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("kept %d of the cache's 4 files of 100 bytes under a bound of 300, want 2 (trimmed to 270)", kept)
	}
	if _, err := d.Create("elsewhere", "x"); err == nil {
		t.Error("Create in a sub-directory not named to Open: no error")
	}
	if _, err := Open(root, 300); err == nil {
		t.Error("Open without a sub-directory: no error")
	}
}
