package order

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// batcher gathers the tasks of one kind (activations, or closes) a worker
// runs at the same time into batches. A task that arrives while fewer than
// `leaders` batches are running leads one at once: it takes itself and
// whoever is waiting (up to max) and runs them. A task that arrives while
// they all run waits; when a batch ends and tasks are waiting, its leader
// hands the lead to the oldest waiter. So a lone task runs alone with no
// added latency, and under load the tasks that queued behind a running
// batch go together in the next — a batch never waits for company. A task
// never waits longer than `patience` for a lead either: if the running
// batches are slow (a lock wait, a slow statement), it leads one of its own
// with whoever waits, so a stalled batch holds up only its own orders.
type batcher struct {
	op           string // what its batches do ("activate", "close"): a failed task's error names it
	max, leaders int
	patience     time.Duration
	run          func(ctx context.Context, batch []*batchTask)

	mu      sync.Mutex
	waiting []*batchTask
	running int
}

// batchTask is one task in the batcher (an activation or a close): what it
// asks and, when its batch is done, its outcome.
type batchTask struct {
	orderNo, taskID string
	err             error
	wake            chan bool // true: lead a batch; false: done, err is the outcome
}

func newBatcher(op string, max, leaders int, patience time.Duration, run func(context.Context, []*batchTask)) *batcher {
	return &batcher{op: op, max: max, leaders: leaders, patience: patience, run: run}
}

// do runs a through a batch and returns its outcome.
func (b *batcher) do(ctx context.Context, orderNo, taskID string) error {
	a := &batchTask{orderNo: orderNo, taskID: taskID, wake: make(chan bool, 1)}
	b.mu.Lock()
	if b.running < b.leaders {
		b.running++
		b.mu.Unlock()
		return b.lead(ctx, a)
	}
	b.waiting = append(b.waiting, a)
	b.mu.Unlock()
	timer := time.NewTimer(b.patience)
	defer timer.Stop()
	select {
	case lead := <-a.wake:
		return b.outcome(ctx, a, lead)
	case <-timer.C:
	}
	b.mu.Lock()
	if i := slices.Index(b.waiting, a); i >= 0 {
		// Still waiting: lead a batch of our own, beside the slow ones.
		b.waiting = slices.Delete(b.waiting, i, i+1)
		b.running++
		b.mu.Unlock()
		return b.lead(ctx, a)
	}
	b.mu.Unlock()
	return b.outcome(ctx, a, <-a.wake) // taken into a batch meanwhile
}

// outcome is a woken task's: lead a batch, or the result of the one it was in.
func (b *batcher) outcome(ctx context.Context, a *batchTask, lead bool) error {
	if lead {
		return b.lead(ctx, a)
	}
	return a.err
}

// lead runs a batch of a and the oldest waiters, then hands the lead on.
func (b *batcher) lead(ctx context.Context, a *batchTask) error {
	b.mu.Lock()
	n := min(len(b.waiting), b.max-1)
	batch := append([]*batchTask{a}, b.waiting[:n]...)
	b.waiting = b.waiting[n:]
	b.mu.Unlock()

	b.runSafely(ctx, batch)

	b.mu.Lock()
	if len(b.waiting) > 0 && b.running <= b.leaders {
		next := b.waiting[0]
		b.waiting = b.waiting[1:]
		next.wake <- true // the lead passes on; running stays the same
	} else {
		b.running-- // an extra lead (patience ran out) ends with its batch
	}
	b.mu.Unlock()
	for _, o := range batch[1:] {
		o.wake <- false
	}
	return a.err
}

// runSafely runs a batch; a panic fails its tasks (asynq retries them, and
// a claim left behind is taken over or reset) instead of leaving the
// waiters and the lead stranded.
func (b *batcher) runSafely(ctx context.Context, batch []*batchTask) {
	defer func() {
		if p := recover(); p != nil {
			for _, a := range batch {
				a.err = fmt.Errorf("%s %s: batch panicked: %v", b.op, a.orderNo, p)
			}
		}
	}()
	b.run(ctx, batch)
}
