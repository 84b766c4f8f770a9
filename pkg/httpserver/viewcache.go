package httpserver

import (
	"sync"
	"time"
)

// viewCache keeps decoded packages (views) and what was computed from
// them (their CRDs, the comparisons of their updates) within a budget of
// bytes, weighing each by what it cost to compute against what it holds:
// GreedyDual-Size (Cao and Irani, 1997). An entry's value is the cache's
// clock when it was last used plus its cost per byte; the entry of least
// value goes first, and the clock moves up to that value, so that entries
// not used for long go in time, however costly. A package whose CRD
// comparisons took seconds stays while cheap ones come and go; a count of
// entries (what this cache was) let a client walking every package evict
// it every time.
type viewCache struct {
	budget int64
	now    func() time.Time // time.Now; tests set their own clock

	mu      sync.Mutex
	clock   float64
	used    int64
	entries map[string]*viewEntry
}

type viewEntry struct {
	name string
	once sync.Once
	v    *view
	err  error

	// Guarded by the cache's mu.
	size  int64         // bytes held, about
	cost  time.Duration // time spent computing it
	value float64
	ready bool // decoded: size and cost are known
}

// minEntrySize keeps an empty package from weighing nothing.
const minEntrySize = 4 << 10

// defaultCacheBytes is the views' budget when Options.CacheBytes is zero.
const defaultCacheBytes = 64 << 20

func newViewCache(budget int64) *viewCache {
	return &viewCache{budget: budget, now: time.Now, entries: map[string]*viewEntry{}}
}

// get returns the view of name, decoding it once however many requests
// ask at the same time (decode returns the view and its size). A failed
// decode is not kept.
func (c *viewCache) get(name string, decode func() (*view, int64, error)) (*view, error) {
	c.mu.Lock()
	e, ok := c.entries[name]
	if !ok {
		e = &viewEntry{name: name}
		c.entries[name] = e
	} else if e.ready {
		e.value = c.clock + e.perByte()
	}
	c.mu.Unlock()
	e.once.Do(func() {
		start := c.now()
		var size int64
		e.v, size, e.err = decode()
		c.mu.Lock()
		defer c.mu.Unlock()
		if e.err != nil {
			if c.entries[name] == e {
				delete(c.entries, name)
			}
			return
		}
		e.ready = true
		e.size = max(size, minEntrySize)
		e.cost = c.now().Sub(start)
		e.value = c.clock + e.perByte()
		if c.entries[name] == e {
			c.used += e.size
			c.evict(e)
		}
	})
	return e.v, e.err
}

// add charges v's entry with what was computed from v later: size bytes
// more, which took cost.
func (c *viewCache) add(v *view, size int64, cost time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[v.name]
	if !ok || !e.ready || e.v != v {
		return // evicted meanwhile: what was computed goes with the view
	}
	e.size += size
	e.cost += cost
	c.used += size
	e.value = c.clock + e.perByte()
	c.evict(e)
}

// evict removes the entries of least value until the cache is within its
// budget, never keep (the entry just used). c.mu is held.
func (c *viewCache) evict(keep *viewEntry) {
	for c.used > c.budget {
		var victim *viewEntry
		for _, e := range c.entries {
			if e == keep || !e.ready {
				continue
			}
			if victim == nil || e.value < victim.value {
				victim = e
			}
		}
		if victim == nil {
			return
		}
		c.clock = victim.value
		c.used -= victim.size
		delete(c.entries, victim.name)
	}
}

// perByte is an entry's cost per byte held, in nanoseconds.
func (e *viewEntry) perByte() float64 {
	return float64(max(e.cost, time.Microsecond)) / float64(e.size)
}

// stats returns how many decoded entries the cache holds and their bytes.
func (c *viewCache) stats() (n int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.ready {
			n++
		}
	}
	return n, c.used
}
