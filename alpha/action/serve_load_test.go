package action

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

// Without a writable temporary directory the answers stay in memory, and a
// synthesized CSV still gets its package's icon (not stashed then: the
// stash would only keep it in memory for as long as the cache is served).
func TestLoadServeTempInMemory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.json"), `{"schema":"olm.package","name":"p","defaultChannel":"c","icon":{"base64data":"PHN2Zy8+","mediatype":"image/svg+xml"}}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"p.v1"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"x.io/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"displayName":"P"}}]}
`)
	snap, inMemory, err := LoadServeTemp(t.Context(), os.DirFS(dir), filepath.Join(t.TempDir(), "missing", "dir"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if !inMemory {
		t.Fatal("want an in-memory build when the temporary directory cannot be written")
	}
	p, err := snap.ReadBundle(&snap.Index.Bundles[0], true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(p.CsvJSON, []byte(`"icon":[{"base64data":"PHN2Zy8+","mediatype":"image/svg+xml"}]`)) {
		t.Errorf("csvJson lacks the package icon: %s", p.CsvJSON)
	}
	// The JSON lines are kept in memory too, in the file's order.
	all, err := io.ReadAll(snap.Lines().All())
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(string(all), "\n"); len(lines) != 4 || !strings.Contains(lines[0], `"olm.package"`) ||
		!strings.Contains(lines[1], `"olm.channel"`) || !strings.Contains(lines[2], `"olm.bundle"`) || lines[3] != "" {
		t.Errorf("JSON lines:\n%s", all)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeRuntime is the part of the runtime the memory policy sees, driven by
// the test.
type fakeRuntime struct {
	live  uint64
	limit int64
	sets  []int64
}

func (f *fakeRuntime) policy() *memoryPolicy {
	return &memoryPolicy{
		liveHeap: func() (uint64, bool) { return f.live, true },
		setLimit: func(l int64) int64 {
			prev := f.limit
			if l >= 0 {
				f.limit = l
				f.sets = append(f.sets, l)
			}
			return prev
		},
	}
}

// The load's memory limit starts from the catalog's size, rises with the
// live heap so that the collector never runs all the time, and is lifted
// afterwards.
func TestMemoryPolicy(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	rt := &fakeRuntime{limit: 1 << 62, live: 10 << 20}
	p := rt.policy()
	restore := p.limit(16 << 20)
	if rt.limit != 33<<20 {
		t.Errorf("limit %d MiB, want 33 MiB (32 MiB plus a sixteenth of 16 MiB)", rt.limit>>20)
	}
	p.check(p.stop) // 10 MiB live: 15 MiB is below the limit
	if rt.limit != 33<<20 {
		t.Errorf("limit %d MiB after a check with 10 MiB live, want 33 MiB", rt.limit>>20)
	}
	rt.live = 64 << 20
	p.check(p.stop)
	if rt.limit != 96<<20 {
		t.Errorf("limit %d MiB with 64 MiB live, want 96 MiB", rt.limit>>20)
	}
	rt.live = 20 << 20
	p.check(p.stop) // never lowered while the load runs
	if rt.limit != 96<<20 {
		t.Errorf("limit %d MiB after the live heap shrank, want 96 MiB", rt.limit>>20)
	}
	stop := p.stop
	restore()
	if rt.limit != 1<<62 {
		t.Errorf("limit after the load %d, want the one before", rt.limit)
	}
	rt.live = 500 << 20
	if p.check(stop) || rt.limit != 1<<62 {
		t.Errorf("a check after the load raised the limit to %d", rt.limit)
	}
}

// Loads that overlap add up their requests, and the limit found before the
// first is back after the last, whatever order they end in.
func TestMemoryPolicyOverlapping(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	for _, firstEndsFirst := range []bool{true, false} {
		rt := &fakeRuntime{limit: 1 << 62}
		p := rt.policy()
		a := p.limit(16 << 20)
		b := p.limit(160 << 20)
		if rt.limit != 75<<20 {
			t.Errorf("limit %d MiB with both loads, want 75 MiB (33 + 42)", rt.limit>>20)
		}
		if !firstEndsFirst {
			a, b = b, a
		}
		a()
		if rt.limit == 1<<62 {
			t.Errorf("limit lifted while a load still runs")
		}
		b()
		if rt.limit != 1<<62 {
			t.Errorf("limit after the loads %d, want the one before", rt.limit)
		}
	}
}

// A GOMEMLIMIT set by the user is left alone.
func TestMemoryPolicyUserLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "100MiB")
	rt := &fakeRuntime{limit: 100 << 20}
	rt.policy().limit(1 << 30)()
	if len(rt.sets) != 0 {
		t.Errorf("the limit was set to %v under GOMEMLIMIT", rt.sets)
	}
}

// The process's policy really sets the runtime's limit while a load runs,
// and its watcher, ticking, follows the live heap.
func TestLimitLoadMemory(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	restore := limitLoadMemory(16 << 20)
	if want := int64(loadMemoryBase + 1<<20); debug.SetMemoryLimit(-1) < want {
		t.Errorf("limit %d MiB during a load, want at least %d MiB (the base and a sixteenth of 16 MiB)", debug.SetMemoryLimit(-1)>>20, want>>20)
	}
	time.Sleep(3 * loadMemory.tick) // the watcher only ever raises it
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after the load %d, want %d", got, before)
	}
}

// TestServePolicy: the serving limit is the base, or half again the live
// heap when a question holds more, and comes down after.
func TestServePolicy(t *testing.T) {
	var live uint64
	var limits []int64
	p := servePolicy{
		liveHeap: func() (uint64, bool) { return live, true },
		setLimit: func(l int64) int64 { limits = append(limits, l); return 0 },
	}
	for _, l := range []uint64{10 << 20, 100 << 20, 100 << 20, 20 << 20} {
		live = l
		p.adjust()
	}
	want := []int64{serveMemoryBase, 150 << 20, serveMemoryBase}
	if !slices.Equal(limits, want) {
		t.Errorf("limits %v, want %v", limits, want)
	}
}
