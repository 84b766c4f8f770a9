package schema

import (
	"hash/maphash"
	"sync"
)

// memoShards spreads the verdict memo over independently locked maps so
// that concurrent checkers rarely wait for each other.
const memoShards = 32

// memo maps a kind-prefixed shape to its verdict (true: valid). It is safe
// for concurrent use; the zero value is ready to use.
type memo struct {
	seed   maphash.Seed
	once   sync.Once
	shards [memoShards]struct {
		mu sync.RWMutex
		m  map[string]bool
		_  [40]byte // keep shards on separate cache lines
	}
}

func (m *memo) shard(key []byte) int {
	m.once.Do(func() { m.seed = maphash.MakeSeed() })
	return int(maphash.Bytes(m.seed, key) % memoShards)
}

// get returns the verdict stored for key, if any. It does not allocate.
func (m *memo) get(key []byte) (valid, ok bool) {
	s := &m.shards[m.shard(key)]
	s.mu.RLock()
	valid, ok = s.m[string(key)]
	s.mu.RUnlock()
	return valid, ok
}

// put stores the verdict for key.
func (m *memo) put(key []byte, valid bool) {
	s := &m.shards[m.shard(key)]
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[string]bool)
	}
	s.m[string(key)] = valid
	s.mu.Unlock()
}

// len returns the number of memoized shapes.
func (m *memo) len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}
