//go:build !unix

package graphsvg

import "os"

// peakRSS is 0 where the system does not report a process's peak
// memory; the sampling of watchMemory is the only bound there.
func peakRSS(*os.ProcessState) int64 { return 0 }
