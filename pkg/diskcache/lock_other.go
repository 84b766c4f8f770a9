//go:build !unix || aix || solaris

package diskcache

import "os"

// lockFile cannot lock files on this system (no flock(2)): two processes
// may trim at once, which removes nothing that one of them alone would
// not.
func lockFile(*os.File) error { return nil }
