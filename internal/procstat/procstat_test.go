package procstat

import (
	"os"
	"runtime"
	"testing"
)

// TestStatus reads this process's own figures: a running process has a
// resident set, and its peak is at least its current size.
func TestStatus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/status is Linux's")
	}
	st, err := Status(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st["VmRSS"] <= 0 || st["VmHWM"] < st["VmRSS"] {
		t.Fatalf("VmRSS %d KiB, VmHWM %d KiB", st["VmRSS"], st["VmHWM"])
	}
	if _, err := Status(-1); err == nil {
		t.Fatal("no error for pid -1")
	}
}
