package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A cache build writes its file under a temporary name in the cache
// directory (tempPrefix) and renames it into place when it is complete. A
// build killed before the rename (kill -9, a node shutting down) leaves
// that file behind. So that the next build can tell such files from the
// ones of a build still running, a build holds an exclusive lock
// (flock(2)) on its file from its creation until it is closed: a file with
// the prefix that nobody holds locked belongs to a dead build and is
// removed.

// createBuildFile creates a locked temporary file in dir for a build.
func createBuildFile(dir string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.CreateTemp(dir, tempPrefix+"*")
		if err != nil {
			return nil, err
		}
		if err := lockFile(f, true); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		// Another build's clean-up may have removed the file between its
		// creation and the lock: then start again.
		st, err1 := f.Stat()
		named, err2 := os.Stat(f.Name())
		if err1 == nil && err2 == nil && os.SameFile(st, named) {
			return f, nil
		}
		f.Close()
		if attempt == 3 {
			return nil, fmt.Errorf("create %s: removed by another build as it was created", f.Name())
		}
	}
}

// removeDeadBuilds removes the temporary files of builds that are no
// longer running from dir, and returns the names it removed.
func removeDeadBuilds(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, ent := range entries {
		if !strings.HasPrefix(ent.Name(), tempPrefix) || !ent.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, ent.Name())
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // its build finished or removed it meanwhile
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := lockFile(f, false); err != nil {
			f.Close() // a running build holds it
			continue
		}
		err = os.Remove(path)
		f.Close()
		switch {
		case err == nil:
			removed = append(removed, ent.Name())
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}
