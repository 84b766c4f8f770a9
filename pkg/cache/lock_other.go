//go:build !unix || aix || solaris

package cache

import (
	"errors"
	"os"
)

// lockFile cannot lock files on this system (no flock(2)): builds take
// no locks, and no temporary file is ever taken for a dead build's.
func lockFile(_ *os.File, wait bool) error {
	if wait {
		return nil
	}
	return errors.New("file locks are not supported on this system")
}
