// Package procstat reads a process's memory figures from Linux's
// /proc/PID/status, for the benchmark tools of hack/.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Status returns the numeric fields of /proc/PID/status by name (VmRSS,
// VmHWM, RssAnon, RssFile, ...), in the file's unit: KiB for memory.
func Status(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}
