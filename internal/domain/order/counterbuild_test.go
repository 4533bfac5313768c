package order

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Creates that meet a product's missing counter while one of them builds
// it wait for that build instead of each counting the ledger: one build for
// the product, its outcome for all; another product's build runs beside
// it; a waiter whose request ends stops waiting; the next miss builds again.
func TestCounterBuiltOnceForConcurrentCreates(t *testing.T) {
	b := newCounterBuilds()
	var builds atomic.Int32
	release := make(chan struct{})
	boom := errors.New("ledger unreachable")
	build := func() error {
		builds.Add(1)
		<-release
		return boom
	}
	const followers = 5
	errs := make(chan error, followers+1)
	go func() { errs <- b.do(context.Background(), 1, build) }()
	waitFor(t, "the first build running", func() bool { return builds.Load() == 1 })
	var wg sync.WaitGroup
	for range followers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- b.do(context.Background(), 1, build)
		}()
	}
	cancelled, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- b.do(cancelled, 1, build) }()
	waitFor(t, "every create waiting for the build", func() bool { return b.waiting(1) == followers+1 })

	// Another product's counter builds at once, beside product 1's.
	if err := b.do(context.Background(), 2, func() error { return nil }); err != nil {
		t.Fatalf("product 2's build: %v", err)
	}
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Errorf("a waiter whose request ended got %v, want context.Canceled", err)
	}
	close(release)
	wg.Wait()
	for range followers + 1 {
		if err := <-errs; !errors.Is(err, boom) {
			t.Errorf("got %v, want the build's own error", err)
		}
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds for product 1, want 1", n)
	}
	// The build is over: the next miss builds again.
	if err := b.do(context.Background(), 1, func() error { builds.Add(1); return nil }); err != nil || builds.Load() != 2 {
		t.Errorf("a later miss: err %v, %d builds in all, want nil and 2", err, builds.Load())
	}
}

// waitFor polls cond with a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
