package cache

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The load's memory limit starts from the catalog's size, rises with the
// live heap so that the collector never runs all the time, and is lifted
// afterwards.
func TestLimitLoadMemory(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	runtime.GC() // the live heap the watcher first sees is this test's
	before := debug.SetMemoryLimit(-1)
	restore := limitLoadMemory([]FileSum{{Size: 16 << 20}})
	if got := debug.SetMemoryLimit(-1); got < 41<<20 || got > 48<<20 {
		t.Errorf("limit %d MiB, want 41 MiB (40 MiB plus a sixteenth of 16 MiB)", got>>20)
	}
	live := make([]byte, 64<<20) // more live heap than the limit allows for
	for i := range live {
		live[i] = byte(i)
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < 96<<20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < 96<<20 {
		t.Errorf("limit %d MiB with 64 MiB live, want at least 96 MiB", got>>20)
	}
	runtime.KeepAlive(live)
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after the load %d, want %d", got, before)
	}
}

// Loads that overlap add up their requests, and the limit found before the
// first is back after the last, whatever order they end in.
func TestLimitLoadMemoryOverlapping(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	a := limitLoadMemory([]FileSum{{Size: 16 << 20}})
	b := limitLoadMemory([]FileSum{{Size: 160 << 20}})
	if got := debug.SetMemoryLimit(-1); got < 91<<20 {
		t.Errorf("limit %d MiB with both loads, want at least 91 MiB (41 + 50)", got>>20)
	}
	a() // the first ends first
	if got := debug.SetMemoryLimit(-1); got == before {
		t.Errorf("limit lifted while a load still runs")
	}
	b()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after the loads %d, want %d", got, before)
	}
}
