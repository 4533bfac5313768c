package testenv

import (
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
)

// PausedAt runs op in the background and waits up to within until it
// pauses at the failpoint name (armed with a pause for it), failing the
// test, in what's words, if op ends first or never gets there. The channel
// gives op's result once the caller has released the point.
func PausedAt(t testing.TB, name string, within time.Duration, what string, op func() error) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- op() }()
	select {
	case <-failpoint.Reached(name):
	case err := <-done:
		t.Fatalf("%s ended without pausing at %s: %v", what, name, err)
	case <-time.After(within):
		t.Fatalf("%s never paused at %s", what, name)
	}
	return done
}
