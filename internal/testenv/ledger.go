package testenv

import (
	"context"
	"errors"
	"testing"
	"time"

	"orderflow/internal/domain/reconcile"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"github.com/hibiken/asynq"
)

// Count runs a SELECT COUNT(*)-style query on the stack's ledger.
func (s *Stack) Count(t testing.TB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := s.SC.DB.Raw(query, args...).Scan(&n).Error; err != nil {
		t.Fatalf("ledger query %q: %v", query, err)
	}
	return n
}

// OrderRow reads an order straight from the ledger.
func (s *Stack) OrderRow(t testing.TB, orderNo string) *model.Order {
	t.Helper()
	o, err := s.SC.Store.OrderByNo(context.Background(), orderNo)
	if err != nil {
		t.Fatalf("ledger: order %s: %v", orderNo, err)
	}
	return o
}

// Rows runs a read-only query on the stack's ledger and scans every row
// into a T (a model row, a struct of the selected columns, or a scalar).
func Rows[T any](t testing.TB, s *Stack, query string, args ...any) []T {
	t.Helper()
	var out []T
	if err := s.SC.DB.Raw(query, args...).Scan(&out).Error; err != nil {
		t.Fatalf("ledger query %q: %v", query, err)
	}
	return out
}

// Moves returns an order's event history as "from→to" strings, oldest first.
func (s *Stack) Moves(t testing.TB, orderNo string) []string {
	t.Helper()
	events, err := s.SC.Store.EventsFor(context.Background(), "order", orderNo)
	if err != nil {
		t.Fatalf("ledger: events of %s: %v", orderNo, err)
	}
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.FromStatus + "→" + e.ToStatus
	}
	return out
}

// MoveCount counts an order's moves equal to move ("claimed→finished").
func (s *Stack) MoveCount(t testing.TB, orderNo, move string) int {
	t.Helper()
	n := 0
	for _, m := range s.Moves(t, orderNo) {
		if m == move {
			n++
		}
	}
	return n
}

// CheckFinishedOnce asserts an order was delivered exactly once as the
// ledger tells it: one order_effects row and one claimed→finished move. It
// returns the order's row for the kind-specific checks.
func (s *Stack) CheckFinishedOnce(t testing.TB, orderNo string) *model.Order {
	t.Helper()
	o := s.OrderRow(t, orderNo)
	if n := s.Count(t, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, o.ID); n != 1 {
		t.Errorf("order %s: %d order_effects rows, want 1", orderNo, n)
	}
	if n := s.MoveCount(t, orderNo, "claimed→finished"); n != 1 {
		t.Errorf("order %s: %d claimed→finished moves, want 1 (history %v)", orderNo, n, s.Moves(t, orderNo))
	}
	return o
}

// WaitStatus polls the ledger until the order is in status.
func (s *Stack) WaitStatus(t testing.TB, orderNo string, status model.OrderStatus, within time.Duration) *model.Order {
	t.Helper()
	var last *model.Order
	Eventually(t, within, "order "+orderNo+" "+status.String(), func() (bool, error) {
		o, err := s.SC.Store.OrderByNo(context.Background(), orderNo)
		if err != nil {
			return false, err
		}
		last = o
		return o.Status == status, nil
	})
	return last
}

// WaitQueuesIdle polls until no activation is left to run: no order:activate
// row waits in the outbox and asynq's activation queue holds no pending,
// active, scheduled or retrying task. Other queues (closes scheduled at each
// order's expiry, the periodic sweeps) are not waited for.
func (s *Stack) WaitQueuesIdle(t testing.TB, within time.Duration) {
	t.Helper()
	queue := s.SC.Tasks[tasks.TypeOrderActivate].Queue
	Eventually(t, within, "activation queue idle", func() (bool, error) {
		var outbox int64
		err := s.SC.DB.Raw(`SELECT COUNT(*) FROM outbox WHERE task_type = ?`, tasks.TypeOrderActivate).Scan(&outbox).Error
		if err != nil || outbox > 0 {
			return false, err
		}
		info, err := s.SC.Inspector.GetQueueInfo(queue)
		if errors.Is(err, asynq.ErrQueueNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return info.Pending+info.Active+info.Scheduled+info.Retry == 0, nil
	})
}

// WaitReconciled waits for the reconciliation a fresh worker runs at start
// (its Redis DB has no epoch marker) to complete. That pass rebuilds every
// stock counter; tests that assert exact counters wait for it first so
// their own orders do not race the rebuild.
func (s *Stack) WaitReconciled(t testing.TB, within time.Duration) {
	t.Helper()
	ctx := context.Background()
	queue := s.SC.Tasks[tasks.TypeReconcile].Queue
	Eventually(t, within, "start-up reconciliation completed", func() (bool, error) {
		mark, err := s.SC.Redis.Get(ctx, reconcile.EpochKey).Result()
		if err != nil {
			return false, err
		}
		info, err := s.SC.Inspector.GetTaskInfo(queue, tasks.TypeReconcile+":epoch:"+mark)
		if err != nil {
			return false, err
		}
		return info.State == asynq.TaskStateCompleted, nil
	})
}
