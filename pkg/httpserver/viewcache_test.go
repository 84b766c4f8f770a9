package httpserver

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// fakeClock advances only when told: a decode "takes" what it adds.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestCache(budget int64) (*viewCache, *fakeClock) {
	c := newViewCache(budget)
	clk := &fakeClock{t: time.Unix(0, 0)}
	c.now = clk.now
	return c, clk
}

// decoder returns a decode of a view of name holding size bytes, which
// takes cost on the fake clock, and counts its calls.
func decoder(clk *fakeClock, calls map[string]int, name string, size int64, cost time.Duration) func() (*view, int64, error) {
	return func() (*view, int64, error) {
		calls[name]++
		clk.t = clk.t.Add(cost)
		return &view{name: name}, size, nil
	}
}

// TestViewCacheKeepsCostly: a client walking 300 cheap packages over and
// over does not push out the one package that took seconds to compute,
// and the cache stays within its budget. A cache of the last N packages
// recomputed the costly one on every walk.
func TestViewCacheKeepsCostly(t *testing.T) {
	const budget = 4 << 20
	c, clk := newTestCache(budget)
	calls := map[string]int{}
	costly := decoder(clk, calls, "appian", 1<<20, 4*time.Second)
	if _, err := c.get("appian", costly); err != nil {
		t.Fatal(err)
	}
	for walk := range 5 {
		for i := range 300 {
			name := fmt.Sprintf("cheap-%d", i)
			if _, err := c.get(name, decoder(clk, calls, name, 64<<10, 2*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if _, used := c.stats(); used > budget {
				t.Fatalf("walk %d: %d bytes held, budget %d", walk, used, budget)
			}
		}
		if _, err := c.get("appian", costly); err != nil {
			t.Fatal(err)
		}
	}
	if calls["appian"] != 1 {
		t.Errorf("the costly package was computed %d times, want once", calls["appian"])
	}
	if calls["cheap-0"] < 2 {
		t.Errorf("the cheap packages were all kept (%d calls): the walk does not fit the budget, the test tests nothing", calls["cheap-0"])
	}
}

// TestViewCacheAgesCostly: a costly package nobody asks for again goes
// in time: the clock rises with each eviction.
func TestViewCacheAgesCostly(t *testing.T) {
	c, clk := newTestCache(1 << 20)
	calls := map[string]int{}
	if _, err := c.get("old", decoder(clk, calls, "old", 256<<10, 100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		name := fmt.Sprintf("p-%d", i)
		if _, err := c.get(name, decoder(clk, calls, name, 128<<10, 10*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	_, kept := c.entries["old"]
	c.mu.Unlock()
	if kept {
		t.Error("a costly package never asked for again is kept for ever")
	}
}

// TestViewCacheAdd: what is computed from a view later counts against the
// budget and raises its value; a failed decode is not kept.
func TestViewCacheAdd(t *testing.T) {
	c, clk := newTestCache(1 << 20)
	calls := map[string]int{}
	v, err := c.get("a", decoder(clk, calls, "a", 100<<10, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	c.add(v, 300<<10, 3*time.Second)
	if n, used := c.stats(); n != 1 || used != 400<<10 {
		t.Errorf("%d entries, %d bytes; want 1 and %d", n, used, 400<<10)
	}
	c.add(&view{name: "a"}, 1<<30, 0) // another view of the same name: not charged
	if _, used := c.stats(); used != 400<<10 {
		t.Errorf("%d bytes after charging a stale view", used)
	}
	boom := errors.New("boom")
	if _, err := c.get("bad", func() (*view, int64, error) { return nil, 0, boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, err := c.get("bad", decoder(clk, calls, "bad", 1, 0)); err != nil || calls["bad"] != 1 {
		t.Errorf("a failed decode was kept: %v, %d calls", err, calls["bad"])
	}
}
