package worker_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/queue/worker"

	"github.com/hibiken/asynq"
)

// failing refuses its first n enqueues (Redis unreachable), then passes.
type failing struct {
	next worker.Enqueuer
	n    atomic.Int32
}

func (f *failing) EnqueueContext(ctx context.Context, t *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error) {
	if f.n.Add(-1) >= 0 {
		return nil, errors.New("dial tcp: connection refused")
	}
	return f.next.EnqueueContext(ctx, t, opts...)
}

// reconcileTasks lists the reconciliation task IDs asynq holds.
func reconcileTasks(t *testing.T, s *testenv.Stack) []string {
	t.Helper()
	var ids []string
	for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){
		s.SC.Inspector.ListPendingTasks, s.SC.Inspector.ListScheduledTasks,
	} {
		infos, err := list(tasks.QueueLow)
		if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
			t.Fatal(err)
		}
		for _, ti := range infos {
			if ti.Type == tasks.TypeReconcile {
				ids = append(ids, ti.ID)
			}
		}
	}
	return ids
}

// Every worker was down across 03:00 (the last stopped at 02:59:59, the
// first starts at 03:00:05): the first worker to start runs the 03:00 slot,
// once for the fleet — a second worker starting after it adds nothing, and
// a restart after the slot was run does not run it again.
func TestMissedReconcileSlotRunsOnceAtFirstStart(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	ctx := context.Background()
	slot := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	clk := clock.NewFake(slot.Add(5 * time.Second))
	for range 2 { // two workers start one after the other
		p, err := worker.NewPeriodic("0 3 * * *", s.SC.Asynq, s.SC.Store, s.SC.Tasks, clk, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Tick(ctx)
		p.Tick(ctx)
	}
	want := tasks.PeriodicID(tasks.TypeReconcile, slot)
	if got := reconcileTasks(t, s); len(got) != 1 || got[0] != want {
		t.Fatalf("reconciliation tasks after the start = %v, want exactly [%s]", got, want)
	}
	// The slot ran (its run claimed it in the ledger) and its task is gone
	// (retention ended); a restart the same day does not run it again.
	if won, err := s.SC.Store.ClaimPeriodicSlot(ctx, tasks.TypeReconcile, slot, want, clk.Now()); err != nil || !won {
		t.Fatalf("claim the slot as its run would: %v, %v", won, err)
	}
	if err := s.SC.Inspector.DeleteTask(tasks.QueueLow, want); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	p, err := worker.NewPeriodic("0 3 * * *", s.SC.Asynq, s.SC.Store, s.SC.Tasks, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Tick(ctx)
	if got := reconcileTasks(t, s); len(got) != 0 {
		t.Errorf("a restart after the slot ran queued %v again", got)
	}
}

// The epoch marker was missing (Redis lost its state) and this worker set
// it, but enqueueing the reconciliation failed: the next tick retries it.
func TestFailedEpochReconcileEnqueueRetriedNextTick(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC))
	claimed := false
	epoch := func(context.Context) (bool, string) { // the marker is missing once
		if claimed {
			return false, ""
		}
		claimed = true
		return true, "1773489600000"
	}
	client := &failing{next: s.SC.Asynq}
	client.n.Store(1)
	p, err := worker.NewPeriodic("0 3 * * *", client, s.SC.Store, s.SC.Tasks, clk, epoch)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing for the catch-up to do: the last slot was run.
	if _, err := s.SC.Store.ClaimPeriodicSlot(ctx, tasks.TypeReconcile, time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC), "earlier", clk.Now()); err != nil {
		t.Fatal(err)
	}
	p.Tick(ctx) // the marker claimed, the enqueue refused
	if got := reconcileTasks(t, s); len(got) != 0 {
		t.Fatalf("reconciliation queued despite the refused enqueue: %v", got)
	}
	clk.Advance(time.Second)
	p.Tick(ctx)
	want := tasks.TypeReconcile + ":epoch:1773489600000"
	if got := reconcileTasks(t, s); len(got) != 1 || got[0] != want {
		t.Fatalf("after the next tick reconciliation tasks = %v, want [%s]", got, want)
	}
}
