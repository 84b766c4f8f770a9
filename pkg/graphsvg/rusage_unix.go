//go:build unix

package graphsvg

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the most resident memory, in bytes, the ended process used,
// as the kernel counted it (getrusage's ru_maxrss: kilobytes on Linux,
// bytes on Darwin); 0 where it is not known.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
