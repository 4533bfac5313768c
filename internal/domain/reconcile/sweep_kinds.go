package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/domain/order"
	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/stock"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"go.uber.org/zap"
)

// Sweep kinds, as named in the pass report.
const (
	KindOrdersPending   = "orders_pending"
	KindOrdersPaid      = "orders_paid"
	KindOrdersClaimed   = "orders_claimed"
	KindRefunds         = "refunds_processing"
	KindOrdersRefunding = "orders_refunding"
	KindGroupsOpen      = "groups_open"
	KindGroupsClosed    = "groups_closed"
	KindNotifications   = "notifications_pending"
	KindWebhooks        = "webhooks_undelivered"
	KindOutbox          = "outbox_old"
	KindStockCounters   = "stock_counters"
	KindUnnotified      = "payments_unnotified"
	KindStatementRuns   = "statement_runs"
)

// sweepKind is one kind of non-terminal object: its name, the task type
// that moves it ("" when none is asked for) and its walk.
type sweepKind struct {
	name     string
	taskType string
	walk     func(ctx context.Context, w walkAt) (metrics.SweepKind, model.Cursor, bool, error)
}

// kinds is every kind of non-terminal object, in walk order.
func (s *Sweeper) kinds() []sweepKind {
	return []sweepKind{
		{KindOrdersPending, tasks.TypeOrderClose, s.objectWalk(tasks.TypeOrderClose, s.pendingOrders)},
		{KindOrdersPaid, tasks.TypeOrderActivate, s.objectWalk(tasks.TypeOrderActivate, s.paidOrders)},
		{KindOrdersClaimed, tasks.TypeOrderActivate, s.objectWalk(tasks.TypeOrderActivate, s.stuckClaims)},
		{KindRefunds, tasks.TypeRefundExecute, s.objectWalk(tasks.TypeRefundExecute, s.processingRefunds)},
		{KindGroupsOpen, tasks.TypeGroupSettle, s.objectWalk(tasks.TypeGroupSettle, s.groups(model.GroupOpen))},
		{KindGroupsClosed, tasks.TypeGroupSettle, s.objectWalk(tasks.TypeGroupSettle, s.groups(model.GroupClosed))},
		{KindNotifications, tasks.TypeNotifyDeliver, s.notifications},
		{KindWebhooks, tasks.TypeWebhookDeliver, s.objectWalk(tasks.TypeWebhookDeliver, s.webhooks)},
		{KindOutbox, "", s.oldOutbox},
		{KindStockCounters, "", s.stockCounters},
		{KindUnnotified, "", s.unnotifiedPayments},
		// Appended: a pass's saved place (a kind's index) stays valid.
		{KindOrdersRefunding, "", s.objectWalk("", s.refundsDone)},
		{KindStatementRuns, tasks.TypeStatementRun, s.objectWalk(tasks.TypeStatementRun, s.statementRuns)},
	}
}

// SweptTypes is the task types whose objects the sweep re-queues when their
// task is not live: the types whose exhaustion ends in the sweep's hands.
func (s *Sweeper) SweptTypes() map[string]bool {
	out := map[string]bool{}
	for _, k := range s.kinds() {
		if k.taskType != "" && k.taskType != tasks.TypeNotifyDeliver {
			out[k.taskType] = true
		}
	}
	return out
}

type pageFunc func(ctx context.Context, w walkAt, limit int) ([]object, error)

func (s *Sweeper) objectWalk(taskType string, page pageFunc) func(context.Context, walkAt) (metrics.SweepKind, model.Cursor, bool, error) {
	return func(ctx context.Context, w walkAt) (metrics.SweepKind, model.Cursor, bool, error) {
		return s.walkObjects(ctx, taskType, w, page)
	}
}

// orderCursor is where an order sits in the orders' keyset.
func orderCursor(o *model.Order) model.Cursor { return model.Cursor{At: o.UpdatedAt, ID: o.ID} }

// pendingOrders: a pending order's close task, due at its expiry.
func (s *Sweeper) pendingOrders(ctx context.Context, w walkAt, limit int) ([]object, error) {
	orders, err := s.Store.OrdersPage(ctx, model.OrderPending, w.start, w.cur, limit)
	return objectsOf(orders, err, func(o *model.Order) object {
		return object{cur: orderCursor(o), taskID: tasks.ID(tasks.TypeOrderClose, o.OrderNo, o.CloseGen),
			requeue: func(ctx context.Context) (bool, error) { return s.Orders.RequeueClose(ctx, o) }}
	})
}

// paidOrders: a paid order's activation task. An order paid (or released
// back to paid) longer ago than a claim may last, plus two sweep intervals,
// whose task asynq still holds, had it taken by a worker that died — running,
// or waiting for a batch: asynq takes it back only after its lease (30 s)
// and a check once a minute. It is re-queued at once instead (taskID ""):
// the new generation activates it, and should the old task run too, the
// claim (a conditional move) lets one of them deliver.
func (s *Sweeper) paidOrders(ctx context.Context, w walkAt, limit int) ([]object, error) {
	orders, err := s.Store.OrdersPage(ctx, model.OrderPaid, w.start, w.cur, limit)
	stale := s.Orders.ClaimCutoff().Add(-4 * s.Budget)
	return objectsOf(orders, err, func(o *model.Order) object {
		id := tasks.ID(tasks.TypeOrderActivate, o.OrderNo, o.ActivateGen)
		if o.UpdatedAt.Before(stale) {
			id = ""
		}
		return object{cur: orderCursor(o), taskID: id,
			requeue: func(ctx context.Context) (bool, error) { return s.Orders.RequeueActivation(ctx, o) }}
	})
}

// stuckClaims: a claim older than the claim timeout is reset whatever its
// task's state (no activation runs that long), as the recovery always did.
func (s *Sweeper) stuckClaims(ctx context.Context, w walkAt, limit int) ([]object, error) {
	orders, err := s.Store.OrdersPage(ctx, model.OrderClaimed, s.Orders.ClaimCutoff(), w.cur, limit)
	return objectsOf(orders, err, func(o *model.Order) object {
		return object{cur: orderCursor(o),
			requeue: func(ctx context.Context) (bool, error) { return s.Orders.ResetStuckClaim(ctx, o) }}
	})
}

// groups: an OPEN or CLOSED group's settle task, due at its deadline.
func (s *Sweeper) groups(status model.GroupStatus) pageFunc {
	return func(ctx context.Context, w walkAt, limit int) ([]object, error) {
		groups, err := s.Store.GroupsPage(ctx, status, w.cur, limit)
		return objectsOf(groups, err, func(g *model.Group) object {
			return object{cur: model.Cursor{At: g.Deadline, ID: g.ID}, taskID: tasks.ID(tasks.TypeGroupSettle, g.GroupNo, g.SettleGen),
				requeue: func(ctx context.Context) (bool, error) { return s.Groups.RequeueSettle(ctx, g) }}
		})
	}
}

// notifications: pending notifications have one task, the delivery round of
// the notification job's current slot; the sweep queues that slot's ID (a
// duplicate is refused, so this only adds a round the schedule missed).
func (s *Sweeper) notifications(ctx context.Context, w walkAt) (metrics.SweepKind, model.Cursor, bool, error) {
	var count metrics.SweepKind
	n, err := s.Store.CountUndelivered(ctx)
	if err != nil || n == 0 {
		return count, model.Cursor{}, err == nil, err
	}
	count.Checked = int(n)
	slot := w.start.Truncate(s.NotifyInterval)
	err = s.Queue.Enqueue(ctx, tasks.TypeNotifyDeliver, tasks.PeriodicID(tasks.TypeNotifyDeliver, slot), nil, time.Time{})
	switch {
	case err == nil:
		count.Requeued = 1
		idlepoll.Announce(ctx, s.Redis)
	case errors.Is(err, tasks.ErrDuplicate):
		err = nil
	}
	return count, model.Cursor{}, err == nil, err
}

// oldOutbox: rows older than two relay periods are rows the relay's poller
// should have moved and did not; the sweep pushes them itself, paged by id.
func (s *Sweeper) oldOutbox(ctx context.Context, w walkAt) (metrics.SweepKind, model.Cursor, bool, error) {
	var count metrics.SweepKind
	cur := w.cur
	before := w.start.Add(-2 * s.RelayInterval)
	for {
		rows, err := s.Store.OutboxOlderPage(ctx, before, cur.ID, s.Page)
		if err != nil {
			return count, cur, false, err
		}
		count.Checked += len(rows)
		n, err := s.Relay.Resend(ctx, rows)
		count.Requeued += n
		if err != nil {
			return count, cur, false, err
		}
		if len(rows) < s.Page {
			return count, model.Cursor{}, true, nil
		}
		cur = model.Cursor{ID: rows[len(rows)-1].ID}
		if w.spent() {
			return count, cur, false, nil
		}
	}
}

// stockCounters: a limited product's Redis counter that is off the ledger
// by a fault — above it, or below it by the same amount at two passes with
// the counter unmoved between (the rule is stock.Gap.Fault) — is reset from
// it (the compare-and-set resync). Such a gap is no work in flight but a
// replica that lost takes, a process killed between its take and its
// commit, a restore Redis refused; the create's own short check only sees
// a counter that runs out, not one that is merely low or high. A missing
// counter is left alone: the next take builds it.
func (s *Sweeper) stockCounters(ctx context.Context, w walkAt) (metrics.SweepKind, model.Cursor, bool, error) {
	var count metrics.SweepKind
	cur := w.cur
	for {
		ps, err := s.Store.LimitedProductsAfter(ctx, cur.ID, s.Page)
		if err != nil {
			return count, cur, false, err
		}
		for i := range ps {
			p := &ps[i]
			count.Checked++
			repaired, err := s.checkCounter(ctx, p, w.start)
			if err != nil {
				return count, cur, false, fmt.Errorf("product %d: %w", p.ID, err)
			}
			if repaired {
				count.Requeued++
			}
			cur = model.Cursor{ID: p.ID}
		}
		if len(ps) < s.Page {
			return count, model.Cursor{}, true, nil
		}
		if w.spent() {
			return count, cur, false, nil
		}
	}
}

// gapMemory is how long a pass's gap is remembered for the next pass.
func (s *Sweeper) gapMemory() time.Duration { return max(6*s.Budget, time.Minute) }

func (s *Sweeper) checkCounter(ctx context.Context, p *model.Product, now time.Time) (bool, error) {
	v, ok, err := s.Stock.Sample(ctx, p.ID)
	if err != nil || !ok {
		return false, err
	}
	// Causal: on Galera a node behind a restore's commit, whose give-back
	// Redis already has, would read the counter as above the ledger.
	n, err := s.Store.Causal().SellableStock(ctx, p)
	if err != nil {
		return false, err
	}
	fault, err := s.Stock.GapFault(ctx, p.ID, v, n, s.gapMemory())
	if err != nil || !fault {
		return false, err
	}
	if err := s.Stock.Resync(ctx, p.ID, order.SnapshotFor(ctx, s.Store, p, now)); err != nil {
		if errors.Is(err, stock.ErrBusy) {
			return false, nil // moving: the next pass looks again
		}
		return false, err
	}
	s.Log.Warn("stock counter was off the ledger; reset from it",
		zap.Int64("product_id", p.ID), zap.Int64("ledger_stock", n), zap.Int64("counter", v.Count))
	return true, nil
}

// unnotifiedPayments: a pending order whose payment was started more than
// PayQueryAfter ago and never notified gets a payment:query task, one per
// order and sweep slot (a duplicate is refused): a notification the
// provider lost is found by asking, not by waiting for a human.
func (s *Sweeper) unnotifiedPayments(ctx context.Context, w walkAt) (metrics.SweepKind, model.Cursor, bool, error) {
	var count metrics.SweepKind
	cur := w.cur
	slot := w.start.Truncate(max(s.Interval, time.Second))
	for {
		as, err := s.Store.UnnotifiedAttemptsPage(ctx, w.start.Add(-s.PayQueryAfter), w.start, cur, s.Page)
		if err != nil {
			return count, cur, false, err
		}
		for _, a := range as {
			count.Checked++
			id, payload := order.PaymentQueryTask(a.OrderNo, slot)
			switch err := s.Queue.Enqueue(ctx, tasks.TypePaymentQuery, id, payload, time.Time{}); {
			case err == nil:
				count.Requeued++
				idlepoll.Announce(ctx, s.Redis)
			case !errors.Is(err, tasks.ErrDuplicate):
				return count, cur, false, fmt.Errorf("queue payment query of %s: %w", a.OrderNo, err)
			}
		}
		if len(as) < s.Page {
			return count, model.Cursor{}, true, nil
		}
		cur = model.Cursor{At: as[len(as)-1].ExpiresAt, ID: as[len(as)-1].ID}
		if w.spent() {
			return count, cur, false, nil
		}
	}
}
