// Package reconcile catches what timers and Redis missed. The continuous
// sweep (sweep.go) re-queues, every sweep interval, each non-terminal object
// whose task is not live. The daily reconciliation does the deep work:
// it closes pending orders past their life and the grace, alerts on refunds
// stuck at the provider, rebuilds the Redis stock counters from the ledger
// and runs a full sweep. It runs on a schedule and at once when the Redis
// epoch marker is missing (Redis was wiped).
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"orderflow/internal/domain/group"
	"orderflow/internal/domain/order"
	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/stock"
	"orderflow/model"

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
	Sweeper *Sweeper
	Stock   *stock.Counter
	Clock   clock.Clock
	Log     *zap.Logger
	Grace   time.Duration
}

// Report says what a pass did.
type Report struct {
	Closed          int               `json:"closed"`
	RefundsAlerted  int               `json:"refunds_alerted"`
	CountersRebuilt int               `json:"counters_rebuilt"`
	GroupsFlushed   int               `json:"groups_flushed"`
	Sweep           metrics.SweepPass `json:"sweep"`
}

// expiredPage bounds one read of the expired pending orders.
const expiredPage = 500

// Run does one pass: the deep work (closing pending orders past their life
// and the grace, alerts on long-running refunds, the stock counters
// rebuilt from the ledger) and a full sweep with no budget, every walk paged
// to its end. Every step is idempotent and safe beside the workers.
func (r *Reconciler) Run(ctx context.Context) (Report, error) {
	var rep Report
	var errs []error
	var err error
	rep.Closed, err = r.closeExpired(ctx)
	errs = append(errs, err)
	rep.RefundsAlerted, err = r.Refunds.AlertStale(ctx)
	errs = append(errs, err)
	rep.GroupsFlushed, err = r.Groups.FlushExhausted(ctx)
	errs = append(errs, err)
	rep.Sweep, err = r.Sweeper.Full(ctx)
	errs = append(errs, err)
	rep.CountersRebuilt, err = r.rebuildCounters(ctx)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	return rep, nil
}

// closeExpired closes every pending order that expired more than the grace
// ago (its close task failed or never ran), paging to the end.
func (r *Reconciler) closeExpired(ctx context.Context) (int, error) {
	before := r.Clock.Now().Add(-r.Grace)
	var cur model.Cursor
	closed := 0
	var errs []error
	for {
		expired, err := r.Store.PendingExpiredPage(ctx, before, cur, expiredPage)
		if err != nil {
			return closed, errors.Join(append(errs, fmt.Errorf("expired pending orders: %w", err))...)
		}
		for _, o := range expired {
			ok, err := r.Orders.Close(ctx, o.OrderNo, order.CloseReconcile)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				closed++
			}
		}
		if len(expired) < expiredPage {
			return closed, errors.Join(errs...)
		}
		last := expired[len(expired)-1]
		cur = model.Cursor{At: last.ExpireAt, ID: last.ID}
	}
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
