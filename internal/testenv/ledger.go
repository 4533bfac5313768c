package testenv

import (
	"context"
	"testing"
	"time"

	"orderflow/model"
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

// WaitQueuesIdle polls asynq until no task is pending, active, scheduled or
// waiting for a retry in any queue and the outbox is empty: nothing more will
// run unless something new is enqueued.
func (s *Stack) WaitQueuesIdle(t testing.TB, within time.Duration) {
	t.Helper()
	Eventually(t, within, "queues idle", func() (bool, error) {
		var outbox int64
		if err := s.SC.DB.Raw(`SELECT COUNT(*) FROM outbox`).Scan(&outbox).Error; err != nil || outbox > 0 {
			return false, err
		}
		queues, err := s.SC.Inspector.Queues()
		if err != nil {
			return false, err
		}
		for _, q := range queues {
			info, err := s.SC.Inspector.GetQueueInfo(q)
			if err != nil {
				return false, err
			}
			// The periodic sweep comes back every interval; only activation matters here.
			if q == "low" {
				continue
			}
			if info.Pending+info.Active+info.Scheduled+info.Retry > 0 {
				return false, nil
			}
		}
		return true, nil
	})
}
