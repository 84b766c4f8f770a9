package action

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// limitLoadMemory sets a soft memory limit for the time of a catalog load
// of size bytes and returns the function that lifts it. The load's live
// heap grows with the catalog (its model and index) while most of what it
// allocates is short-lived; without a limit the collector lets the heap
// reach twice the live size before it runs, which is what a pod's memory
// peak would be.
//
// A load asks for loadMemoryBase plus a sixteenth of the catalog's bytes,
// above the live heap of the catalogs measured (at most about 30 MiB on
// the 491 MB benchmark catalog, half of it file buffers): there the peak
// drops from 157 to 90 MB at the same CPU time. A catalog heavier per byte
// (many small bundles) would make the collector run all the time under
// that limit, so a watcher keeps the limit at least half again the live
// heap while loads run. Loads that overlap in one process add up their
// requests; the last one to end restores the limit found by the first. A
// GOMEMLIMIT set by the user is left alone.
func limitLoadMemory(size int64) (restore func()) {
	return loadMemory.limit(size)
}

// loadMemoryBase is the part of a load's limit that does not grow with
// the catalog. It was 40 MiB until the binary grew from 23 to 42 MB: the
// pages of the binary a process touches (26 to 28 MB now, 17 to 18 MB
// before) count in its peak but not in the limit, which covers the Go
// runtime's memory only. At 32 MiB the bench-8 cold start peaks at 91 to
// 92 MiB (98 to 100 MiB at 40) for 2 to 5 % more CPU (docs/performance.md).
const loadMemoryBase = 32 << 20

// loadMemory is the process's memory limit policy while catalogs load.
var loadMemory = memoryPolicy{
	liveHeap: readLiveHeap,
	setLimit: debug.SetMemoryLimit,
	tick:     10 * time.Millisecond,
}

// memoryPolicy is limitLoadMemory's state. Its clock and its view of the
// runtime are fields, so that the tests drive it step by step.
type memoryPolicy struct {
	liveHeap func() (uint64, bool)   // the live heap, if known
	setLimit func(limit int64) int64 // debug.SetMemoryLimit
	tick     time.Duration           // how often the watcher looks; 0: never

	mu    sync.Mutex
	loads int           // loads running
	prev  int64         // the limit before the first of them
	asked int64         // what the running loads asked for, together
	set   int64         // the limit set
	stop  chan struct{} // closed when the last load ends
}

func (p *memoryPolicy) limit(size int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	ask := loadMemoryBase + size/16
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loads == 0 {
		p.prev = p.setLimit(-1)
		p.asked, p.set = 0, 0
		p.stop = make(chan struct{})
		if p.tick > 0 {
			go p.watch(p.stop)
		}
	}
	p.loads++
	p.asked += ask
	p.raise(p.asked)
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.loads--
		p.asked -= ask
		if p.loads > 0 {
			return // the limit stays at least what the others asked for
		}
		// The watcher sees stop closed as soon as it gets the lock, and
		// never raises the limit again.
		close(p.stop)
		p.setLimit(p.prev)
	}
}

// raise sets the limit to want if that is higher. p.mu is held.
func (p *memoryPolicy) raise(want int64) {
	if want > p.set {
		p.set = want
		p.setLimit(want)
	}
}

// watch calls check every tick until stop is closed.
func (p *memoryPolicy) watch(stop chan struct{}) {
	t := time.NewTicker(p.tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if !p.check(stop) {
			return
		}
	}
}

// check keeps the limit at least half again the live heap while loads
// run. It reports false when the watcher should stop.
func (p *memoryPolicy) check(stop chan struct{}) bool {
	live, ok := p.liveHeap()
	if !ok {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-stop:
		return false
	default:
	}
	p.raise(int64(live) * 3 / 2)
	return true
}

func readLiveHeap() (uint64, bool) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return s[0].Value.Uint64(), true
}

// serveMemoryBase is the floor of the soft memory limit while the HTTP
// routes answer questions: what a server over certified-operators holds
// once every route has been asked (about 30 MiB of the Go runtime's
// memory, the install resolver and the decoded packages) and room for the
// questions under way.
const serveMemoryBase = 64 << 20

// limitServeMemory keeps a soft memory limit while the HTTP routes serve:
// a question's garbage (an answer encoded, a package decoded, a solver's
// clauses) would otherwise let the heap reach twice its live size, and the
// collector's scavenger return the pages minutes later. The limit is
// serveMemoryBase, or half again the live heap when that is more (read
// every tick: up when a hard question holds memory, down after), so that
// the collector never runs all the time. A GOMEMLIMIT set by the user is
// left alone. Measured over certified-operators (docs/performance.md):
// under 50 clients the peak RSS went from 3.3 to 1.9 times the idle RSS,
// at the same throughput.
func limitServeMemory(tick time.Duration) (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	p := servePolicy{liveHeap: readLiveHeap, setLimit: debug.SetMemoryLimit}
	prev := p.setLimit(-1)
	p.adjust()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.adjust()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			p.setLimit(prev)
		})
	}
}

// servePolicy is limitServeMemory's state; its view of the runtime is
// fields, for the tests.
type servePolicy struct {
	liveHeap func() (uint64, bool)
	setLimit func(limit int64) int64
	set      int64
}

// adjust sets the limit to the larger of serveMemoryBase and half again
// the live heap.
func (p *servePolicy) adjust() {
	want := int64(serveMemoryBase)
	if live, ok := p.liveHeap(); ok {
		want = max(want, int64(live)*3/2)
	}
	if want != p.set {
		p.set = want
		p.setLimit(want)
	}
}
