//go:build unix && !aix && !solaris

package diskcache

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) lock on f without waiting; it
// lasts until f is closed.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}
