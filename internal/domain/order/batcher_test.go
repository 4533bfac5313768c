package order

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// recorder is a batch runner that records the batches it was given and
// holds each until released.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	started chan int // the size of each batch as it starts
	release chan struct{}
}

func newRecorder() *recorder {
	return &recorder{started: make(chan int, 100), release: make(chan struct{}, 100)}
}

func (r *recorder) run(_ context.Context, batch []*batchTask) {
	nos := make([]string, len(batch))
	for i, a := range batch {
		nos[i] = a.orderNo
		a.err = errors.New("done " + a.orderNo)
	}
	r.mu.Lock()
	r.batches = append(r.batches, nos)
	r.mu.Unlock()
	r.started <- len(batch)
	<-r.release
}

func waitStarted(t *testing.T, r *recorder) int {
	t.Helper()
	select {
	case n := <-r.started:
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no batch started within 5 s")
	}
	return 0
}

// A lone task runs at once, alone; tasks that arrive while the leaders are
// busy go together in the next batch; every task gets its own outcome.
func TestBatcherGathersWhatWaits(t *testing.T) {
	r := newRecorder()
	b := newBatcher("activate", 16, 1, time.Hour, r.run)
	errs := make(chan error, 10)
	go func() { errs <- b.do(context.Background(), "first", "t") }()
	if n := waitStarted(t, r); n != 1 {
		t.Fatalf("the lone task ran in a batch of %d, want 1", n)
	}
	for i := range 5 {
		go func() { errs <- b.do(context.Background(), fmt.Sprint("o", i), "t") }()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		n := len(b.waiting)
		b.mu.Unlock()
		if n == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks waiting, want 5", n)
		}
		time.Sleep(time.Millisecond)
	}
	r.release <- struct{}{}
	if n := waitStarted(t, r); n != 5 {
		t.Fatalf("the waiting tasks ran in a batch of %d, want 5", n)
	}
	r.release <- struct{}{}
	seen := map[string]bool{}
	for range 6 {
		err := <-errs
		if seen[err.Error()] {
			t.Errorf("outcome %q twice", err)
		}
		seen[err.Error()] = true
	}
	if b.running != 0 || len(b.waiting) != 0 {
		t.Errorf("after the batches: %d running, %d waiting; want 0, 0", b.running, len(b.waiting))
	}
}

// A task whose leaders are stalled leads a batch of its own after its
// patience, and a batch that panics fails its tasks instead of stranding them.
func TestBatcherPatienceAndPanic(t *testing.T) {
	r := newRecorder()
	b := newBatcher("activate", 16, 1, 20*time.Millisecond, r.run)
	errs := make(chan error, 2)
	go func() { errs <- b.do(context.Background(), "stalled", "t") }()
	waitStarted(t, r)
	go func() { errs <- b.do(context.Background(), "impatient", "t") }()
	if n := waitStarted(t, r); n != 1 {
		t.Fatalf("the impatient task ran in a batch of %d, want 1 (its own)", n)
	}
	r.release <- struct{}{}
	r.release <- struct{}{}
	for range 2 {
		if err := <-errs; err == nil {
			t.Error("a task came back without its batch's outcome")
		}
	}

	for _, op := range []string{"activate", "close"} { // the error names the batch's own operation
		p := newBatcher(op, 16, 1, time.Hour, func(context.Context, []*batchTask) { panic("boom") })
		if err := p.do(context.Background(), "x", "t"); err == nil || err.Error() != op+" x: batch panicked: boom" {
			t.Errorf("a panicking %s batch = %v, want its task failed with %q", op, err, op+" x: batch panicked: boom")
		}
		if p.running != 0 {
			t.Errorf("after a panic %d batches count as running, want 0", p.running)
		}
	}
}
