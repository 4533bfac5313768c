package testenv

import (
	"testing"
	"time"
)

// Receive waits up to within for a value on ch and returns it; none by then
// fails the test, saying what it waited for ("DeleteOutbox to return").
func Receive[T any](t testing.TB, ch <-chan T, within time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		t.Fatalf("waited %v for %s", within, what)
	}
	var zero T
	return zero
}
