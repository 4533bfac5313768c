package order

import (
	"context"
	"sync"
)

// counterBuilds lets one create at a time rebuild a product's missing stock
// counter in this process; the creates that meet the same missing counter
// meanwhile wait for that build and then take again. Without it every
// create that found the counter gone ran its own ledger count (16 at once
// at a bench's start, 40–60 ms each over 22,000 keys) — after a Redis loss,
// a stampede on the database. Builds in other processes still race, and
// stock.Build's compare-and-set settles that as before.
type counterBuilds struct {
	mu      sync.Mutex
	running map[int64]*counterBuild
}

// counterBuild is one running build and, when done is closed, its outcome.
type counterBuild struct {
	done    chan struct{}
	err     error
	waiters int // creates that joined it to wait (tests)
}

func newCounterBuilds() *counterBuilds {
	return &counterBuilds{running: map[int64]*counterBuild{}}
}

// do runs build for productID unless one is running, in which case it waits
// for that one (or ctx) and returns its outcome.
func (b *counterBuilds) do(ctx context.Context, productID int64, build func() error) error {
	b.mu.Lock()
	if c := b.running[productID]; c != nil {
		c.waiters++
		b.mu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c := &counterBuild{done: make(chan struct{})}
	b.running[productID] = c
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.running, productID)
		b.mu.Unlock()
		close(c.done)
	}()
	c.err = build()
	return c.err
}

// waiting is how many creates joined productID's running build to wait.
func (b *counterBuilds) waiting(productID int64) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.running[productID]; c != nil {
		return c.waiters
	}
	return 0
}
