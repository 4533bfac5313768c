package payfake

import "sync"

// Lookup is read of the record m holds under key, or the zero value when it
// holds none, with mu held: a fake's read-out for a test (a trade's number,
// a refund's status, a notification built from a refund), taken while no
// request changes the fake. mu is the lock that guards m.
func Lookup[K comparable, V, R any](mu *sync.Mutex, m map[K]*V, key K, read func(*V) R) R {
	mu.Lock()
	defer mu.Unlock()
	if v := m[key]; v != nil {
		return read(v)
	}
	var zero R
	return zero
}

// Len is how many records m holds, with mu (the lock that guards m) held.
func Len[K comparable, V any](mu *sync.Mutex, m map[K]V) int {
	mu.Lock()
	defer mu.Unlock()
	return len(m)
}

// Sends counts the requests a fake received, by the key that names what
// was asked (a refund's number or idempotency key): how often orderflow
// sent the same refund. The zero value is ready; safe for concurrent use,
// and it may be counted while the fake's own lock is held.
type Sends struct {
	mu sync.Mutex
	n  map[string]int
}

// Add counts one request under key.
func (s *Sends) Add(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[key]++
}

// Of is how many requests arrived under key.
func (s *Sends) Of(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[key]
}
