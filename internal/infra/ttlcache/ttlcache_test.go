package ttlcache

import (
	"testing"
	"time"
)

func TestKeepsForTTLAndStartsOverWhenFull(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	c := New[string, int](time.Minute, 2)
	if _, ok := c.Get("a", now); ok {
		t.Fatal("empty cache answered")
	}
	c.Put("a", 1, now)
	if v, ok := c.Get("a", now.Add(59*time.Second)); !ok || v != 1 {
		t.Errorf("within the TTL: %d %v, want 1 true", v, ok)
	}
	if _, ok := c.Get("a", now.Add(time.Minute)); ok {
		t.Error("answered at the TTL")
	}
	c.Put("b", 2, now)
	c.Put("c", 3, now) // full: starts over, then keeps c
	if _, ok := c.Get("a", now); ok {
		t.Error("kept a past max entries")
	}
	if v, ok := c.Get("c", now); !ok || v != 3 {
		t.Errorf("c = %d %v, want 3 true", v, ok)
	}
}
