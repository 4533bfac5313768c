// Package ttlcache keeps lookups of things that do not change — a product's
// kind and price, the user a token belongs to — in the process for a while,
// so hot paths do not ask the database each time. The TTL bounds memory, not
// staleness; only answers that exist are kept, so something new is found at
// once.
package ttlcache

import (
	"sync"
	"time"
)

// Cache maps keys to values, each kept for the cache's TTL.
type Cache[K comparable, V any] struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[K]entry[V]
}

type entry[V any] struct {
	v     V
	until time.Time
}

// New returns a cache keeping each value for ttl and at most max values
// (past that it starts over: simpler than eviction, and as cheap to refill).
func New[K comparable, V any](ttl time.Duration, max int) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, max: max, entries: map[K]entry[V]{}}
}

// Get returns key's value if it was put less than the TTL before now.
func (c *Cache[K, V]) Get(key K, now time.Time) (V, bool) {
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || !now.Before(e.until) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put keeps v for key from now.
func (c *Cache[K, V]) Put(key K, v V, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		c.entries = map[K]entry[V]{}
	}
	c.entries[key] = entry[V]{v: v, until: now.Add(c.ttl)}
}
