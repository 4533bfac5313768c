// Package reconcile catches what timers and Redis missed: it closes expired
// pending orders, re-queues every object whose task is gone, alerts on
// refunds stuck at the provider, and rebuilds the Redis stock counters from
// the ledger. It runs on a schedule and at once when the Redis epoch marker
// is missing (Redis was wiped).
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"orderflow/clock"
	"orderflow/group"
	"orderflow/model"
	"orderflow/order"
	"orderflow/refund"
	"orderflow/stock"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// EpochKey is the Redis epoch marker: set once per Redis lifetime. A process
// that finds it missing knows Redis lost its state.
const EpochKey = "orderflow:epoch"

// Reconciler runs one reconciliation pass.
type Reconciler struct {
	Store   *model.Store
	Orders  *order.Service
	Refunds *refund.Service
	Groups  *group.Service
	Stock   *stock.Counter
	Clock   clock.Clock
	Log     *zap.Logger
	Grace   time.Duration
}

// Report says what a pass did.
type Report struct {
	Closed          int `json:"closed"`
	ClosesRequeued  int `json:"closes_requeued"`
	StuckClaims     int `json:"stuck_claims"`
	PaidRequeued    int `json:"paid_requeued"`
	RefundsRequeued int `json:"refunds_requeued"`
	RefundsAlerted  int `json:"refunds_alerted"`
	CountersRebuilt int `json:"counters_rebuilt"`
	GroupsRequeued  int `json:"groups_requeued"`
	GroupsFlushed   int `json:"groups_flushed"`
}

// Run does one pass. Every step is idempotent and safe beside the workers.
func (r *Reconciler) Run(ctx context.Context) (Report, error) {
	var rep Report
	var errs []error
	expired, err := r.Store.PendingOrders(ctx, r.Clock.Now().Add(-r.Grace), 1000)
	errs = append(errs, err)
	for _, o := range expired {
		closed, err := r.Orders.Close(ctx, o.OrderNo, order.CloseReconcile)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if closed {
			rep.Closed++
		}
	}
	rep.ClosesRequeued, err = r.Orders.RequeueCloses(ctx)
	errs = append(errs, err)
	rec, err := r.Orders.RequeueLost(ctx)
	rep.StuckClaims, rep.PaidRequeued = rec.StuckClaims, rec.LostTasks
	errs = append(errs, err)
	rep.RefundsRequeued, err = r.Refunds.RequeueLost(ctx, r.Clock.Now().Add(time.Millisecond))
	errs = append(errs, err)
	rep.RefundsAlerted, err = r.Refunds.AlertStale(ctx)
	errs = append(errs, err)
	rep.GroupsFlushed, err = r.Groups.FlushExhausted(ctx)
	errs = append(errs, err)
	rep.GroupsRequeued, err = r.Groups.RequeueDue(ctx)
	errs = append(errs, err)
	rep.CountersRebuilt, err = r.rebuildCounters(ctx)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	return rep, nil
}

// rebuildCounters sets every tracked product's counter to the ledger's count.
func (r *Reconciler) rebuildCounters(ctx context.Context) (int, error) {
	ids, err := r.Store.LimitedProductIDs(ctx)
	if err != nil {
		return 0, fmt.Errorf("rebuild counters: %w", err)
	}
	for _, id := range ids {
		p, err := r.Store.ProductByID(ctx, id)
		if err != nil {
			return 0, err
		}
		err = r.Stock.Resync(ctx, id, order.SnapshotFor(ctx, r.Store, p, r.Clock.Now()))
		if errors.Is(err, stock.ErrBusy) {
			r.Log.Warn("stock counter busy; rebuilt next pass", zap.Int64("product_id", id))
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("rebuild counter of product %d: %w", id, err)
		}
	}
	return len(ids), nil
}

// ClaimEpoch sets the epoch marker if it is missing and reports whether this
// call set it — i.e. whether this process must trigger a reconciliation.
func ClaimEpoch(ctx context.Context, rdb redis.UniversalClient, now time.Time) (bool, string, error) {
	v := strconv.FormatInt(now.UnixMilli(), 10)
	ok, err := rdb.SetNX(ctx, EpochKey, v, 0).Result()
	return ok, v, err
}
