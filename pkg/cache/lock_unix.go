//go:build unix && !aix && !solaris

package cache

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) lock on f, which lasts until f is
// closed. Without wait, it fails at once when another process holds one.
func lockFile(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
