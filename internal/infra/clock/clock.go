// Package clock is the injectable time source: production uses the wall clock,
// tests move a fake one instead of sleeping.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time. Every timestamp orderflow writes comes from one.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock, in UTC with millisecond precision (the ledger's DATETIME(3)).
type Real struct{}

// Now returns the current UTC time truncated to milliseconds.
func (Real) Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// Fake is a clock that only moves when told to; safe for concurrent use.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{now: t.UTC().Truncate(time.Millisecond)} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the fake time forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// Set moves the fake time to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.now = t.UTC().Truncate(time.Millisecond)
	f.mu.Unlock()
}
