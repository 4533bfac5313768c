// Package backlog answers what the system cannot finish without an
// operator, and how it has been doing: the reads behind the operator
// console's "needs a hand" and "at a glance" pages. Each read is a LIMITed
// walk of an index, so it costs the same with a hundred orders in the
// ledger or a million.
package backlog

import (
	"context"
	"fmt"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/metrics"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
)

// Service reads the backlog from the ledger and the sweep's last pass.
type Service struct {
	Store *model.Store
	Redis redis.UniversalClient
	Clock clock.Clock
}

// Needs is everything waiting for an operator, newest first, at most limit
// of each kind; Reasons are the last events' reasons by object number.
type Needs struct {
	FailedOrders   []model.Order
	OrderReasons   map[string]string
	ManualRefunds  []model.Refund
	RefundReasons  map[string]string // by base number: refund events are kept under it
	FailedGroups   []model.Group
	FailingNotices []model.Notification
	Held           []model.HeldPayment
	// OpenDisputes wait for evidence or the bank's decision (by
	// evidence_due_by at the provider); newest first.
	OpenDisputes  []model.Dispute
	OutboxBacklog int64
	OutboxAge     time.Duration
	Sweep         *metrics.SweepPass // nil before the first pass is recorded
}

// Needs reads what needs a hand.
func (s *Service) Needs(ctx context.Context, limit int) (*Needs, error) {
	var n Needs
	var err error
	if n.FailedOrders, err = s.Store.OrdersInStatusLatest(ctx, model.OrderFailed, limit); err != nil {
		return nil, fmt.Errorf("backlog: failed orders: %w", err)
	}
	if n.OrderReasons, err = reasons(ctx, s.Store, "order", n.FailedOrders, func(o model.Order) string { return o.OrderNo }); err != nil {
		return nil, err
	}
	if n.ManualRefunds, err = s.Store.RefundsInStatusLatest(ctx, model.RefundManual, limit); err != nil {
		return nil, fmt.Errorf("backlog: manual refunds: %w", err)
	}
	if n.RefundReasons, err = reasons(ctx, s.Store, "refund", n.ManualRefunds, func(r model.Refund) string { return r.BaseNo }); err != nil {
		return nil, err
	}
	if n.FailedGroups, err = s.Store.GroupsInStatus(ctx, model.GroupFailed, limit); err != nil {
		return nil, fmt.Errorf("backlog: failed groups: %w", err)
	}
	if n.FailingNotices, err = s.Store.FailingNotifications(ctx, limit); err != nil {
		return nil, fmt.Errorf("backlog: failing notifications: %w", err)
	}
	if n.Held, err = s.Store.LatestHeldPayments(ctx, limit); err != nil {
		return nil, fmt.Errorf("backlog: held payments: %w", err)
	}
	if n.OpenDisputes, err = s.Store.OpenDisputesLatest(ctx, limit); err != nil {
		return nil, fmt.Errorf("backlog: open disputes: %w", err)
	}
	if n.OutboxBacklog, n.OutboxAge, err = s.Store.OutboxBacklog(ctx, s.Clock.Now()); err != nil {
		return nil, fmt.Errorf("backlog: outbox: %w", err)
	}
	// The sweep's record lives in Redis, which may be gone: the page then
	// shows no pass rather than failing.
	n.Sweep, _ = metrics.LastSweep(ctx, s.Redis)
	return &n, nil
}

// reasons maps each object's number to the reason of its newest event.
func reasons[T any](ctx context.Context, st *model.Store, objectType string, objs []T, no func(T) string) (map[string]string, error) {
	nos := make([]string, len(objs))
	for i, o := range objs {
		nos[i] = no(o)
	}
	last, err := st.LastEvents(ctx, objectType, nos)
	if err != nil {
		return nil, fmt.Errorf("backlog: %s events: %w", objectType, err)
	}
	out := make(map[string]string, len(last))
	for k, e := range last {
		out[k] = e.Reason
	}
	return out, nil
}

// Activations lists the paid and finished times of the orders finished
// since a time, at most limit of them: the last hour's throughput and
// activation latency, from the ledger's own figures.
func (s *Service) Activations(ctx context.Context, since time.Time, limit int) ([]model.Activation, error) {
	out, err := s.Store.ActivationsSince(ctx, since, limit)
	if err != nil {
		return nil, fmt.Errorf("backlog: activations: %w", err)
	}
	return out, nil
}
