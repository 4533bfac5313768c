package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/stock"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"go.uber.org/zap"
)

// Close reasons.
const (
	CloseExpired   = "expired"
	CloseCancelled = "buyer cancel"
	CloseReconcile = "reconcile"
)

// ErrNotPending is a cancel of an order that is no longer pending.
var ErrNotPending = apperr.New(apperr.Conflict, "invalid_status", "only a pending order can be cancelled")

// errNotExpired is a close task that fired before the order's expiry.
var errNotExpired = errors.New("order not expired yet")

// closeRow is the outbox row that closes an order at its expiry (rounded
// up to asynq's whole second by the row builder).
func closeRow(orderNo string, gen int, expireAt, now time.Time) *model.OutboxRow {
	return model.TaskRow(tasks.ID(tasks.TypeOrderClose, orderNo, gen), tasks.TypeOrderClose,
		tasks.Encode(tasks.OrderPayload{OrderNo: orderNo, Gen: gen}), expireAt, now)
}

// Close runs the close procedure for one order: the close transaction
// (closeTx, the one a batch of close tasks runs) — pending→closed, the
// order's LOCKED keys →RECYCLED (or a limited product's stock returned) and
// the type-3 stock flow — then the Redis restore, driven by the committed
// flow row and guarded by a per-order marker. A re-run after a crash between
// the commit and Redis repairs the counter and never restores twice. It
// reports whether this call closed the order; a Redis restore that failed
// after the commit is an error too (errCounterNotRestored, with moved still
// true), so the close task runs again and the re-run restores.
func (s *Service) Close(ctx context.Context, orderNo, reason string) (bool, error) {
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return false, err
	}
	now := s.clock.Now()
	if o.Status == model.OrderPending && reason == CloseExpired && now.Before(o.ExpireAt) {
		return false, fmt.Errorf("close %s: %w (expires %s)", orderNo, errNotExpired, o.ExpireAt.Format(time.RFC3339Nano))
	}
	if o.Status == model.OrderPending && reason != CloseCancelled {
		// A started payment whose notification was lost is found and
		// delivered instead of closed.
		if o, err = s.queryBeforeClose(ctx, o, now); err != nil {
			return false, err
		}
	}
	var moved bool
	if o.Status == model.OrderPending {
		closed, _, err := s.closeTx(ctx, []*model.Order{o}, reason, now)
		if err != nil {
			s.metrics.CloseFailed()
			return false, fmt.Errorf("close %s: %w", orderNo, err)
		}
		moved = len(closed) == 1
	}
	return moved, s.afterClose(ctx, o, reason, moved)
}

// afterClose is what follows a close of o (read before it) that moved it
// or not: the Redis restore of a committed close, and the log line.
func (s *Service) afterClose(ctx context.Context, o *model.Order, reason string, moved bool) error {
	log := s.log.With(zap.String("order_no", o.OrderNo), zap.String("reason", reason))
	var rerr error
	switch {
	case moved:
		// This close committed the restore flow: no need to read it back.
		rerr = s.restoreCounter(ctx, o, model.FlowCloseRestore)
	case o.Status == model.OrderPending || o.ClosedAt != nil:
		// Closed by someone else, now or before: repair the counter if
		// that closer died between its commit and Redis.
		rerr = s.restoreRedis(ctx, o, model.FlowCloseRestore)
	default:
		// Never closed (paid, finished…): no flow to apply. This is what
		// a paid order's close task costs — the one indexed read above.
	}
	if moved {
		s.metrics.CloseSucceeded()
		log.Info("order closed; stock released")
	} else {
		log.Info("order not pending; nothing to close", zap.Stringer("status", o.Status))
	}
	if rerr != nil {
		// The close stands; its task fails so that asynq runs it again,
		// and the re-run (the branch for closed orders above) restores.
		log.Warn("stock counter restore failed; the close task runs again", zap.Error(rerr))
		return fmt.Errorf("close %s: %w: %w", o.OrderNo, errCounterNotRestored, rerr)
	}
	return nil
}

// errCounterNotRestored is a close that committed but whose Redis stock
// restore failed: the order is closed, its counter not yet repaired.
var errCounterNotRestored = errors.New("closed, stock counter not restored")

// Cancel is the buyer's cancel: the close procedure, now. A cancel that
// finds its order already closed by a cancel answers as that cancel did:
// the same request sent again (a client that lost the first answer, a
// double click), read pending and then finding the row moved by the first,
// or its own close re-run after a commit whose answer was lost, all asked
// for what the ledger holds. An order that left pending any other way
// (paid, closed at its expiry) is ErrNotPending.
func (s *Service) Cancel(ctx context.Context, orderNo string, who Viewer) error {
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return err
	}
	if !who.Admin && o.UserID != who.UserID {
		return ErrNotFound
	}
	if o.Status == model.OrderPending {
		closed, err := s.Close(ctx, orderNo, CloseCancelled)
		if closed && errors.Is(err, errCounterNotRestored) {
			// Cancelled. The order's close task, due at its expiry, restores
			// the counter; until then a short answer asks the ledger.
			err = nil
		}
		if err != nil || closed {
			return err
		}
		// Moved between our read and the close: by whom decides the answer.
	}
	return s.cancelledBefore(ctx, orderNo)
}

// cancelledBefore answers a cancel of an order that is not pending: nil if
// the order is closed and a cancel closed it, else ErrNotPending.
func (s *Service) cancelledBefore(ctx context.Context, orderNo string) error {
	if _, err := s.loadIn(ctx, orderNo, model.OrderClosed, ErrNotPending); err != nil {
		return err
	}
	events, err := s.store.EventsFor(ctx, "order", orderNo)
	if err != nil {
		return fmt.Errorf("cancel %s: %w", orderNo, err)
	}
	for _, e := range events {
		if e.FromStatus == model.OrderPending.String() && e.ToStatus == model.OrderClosed.String() && e.Reason == CloseCancelled {
			return nil
		}
	}
	return ErrNotPending
}

// restoreRedis applies a committed restore flow to the stock counter once.
func (s *Service) restoreRedis(ctx context.Context, o *model.Order, flowType model.FlowKind) error {
	has, err := s.store.HasStockFlow(context.WithoutCancel(ctx), o.ID, flowType)
	if err != nil || !has {
		return err
	}
	return s.restoreCounter(ctx, o, flowType)
}

// restoreCounter applies a restore flow known to be committed to the stock
// counter; the per-order marker makes a second call a no-op. A missing
// counter is built from the ledger now, which counts this committed flow;
// if another process built it first (perhaps from a count read before this
// commit), the marker-guarded restore runs again on its counter.
func (s *Service) restoreCounter(ctx context.Context, o *model.Order, flowType model.FlowKind) error {
	ctx = context.WithoutCancel(ctx)
	if err := failpoint.Inject(failpoint.StockRestore, o.OrderNo); err != nil {
		return err
	}
	for range 3 {
		res, err := s.stock.Restore(ctx, o.ProductID, o.OrderNo, flowType, o.Quantity, stock.MarkerTTL)
		if err != nil || res != stock.RestoreMissing {
			return err
		}
		p, err := s.product(ctx, o.ProductID)
		if err != nil {
			return err
		}
		built, err := s.stock.Build(ctx, p.ID, SnapshotFor(ctx, s.store, p, s.clock.Now()))
		if err != nil || built {
			return err
		}
	}
	return stock.ErrBusy
}

// RequeueClose gives a pending order whose close task is not live (Redis
// lost it, or asynq archived it after its retries) a new close generation,
// due at the order's expiry, or at once if that has passed; false means
// the order had moved on. The row is sent after the commit.
func (s *Service) RequeueClose(ctx context.Context, o *model.Order) (bool, error) {
	gen := o.CloseGen + 1
	ok, err := s.store.MoveAndQueue(ctx, closeRow(o.OrderNo, gen, o.ExpireAt, s.clock.Now()), func(tx *model.Store) (bool, error) {
		return tx.BumpCloseGen(ctx, o.ID, gen)
	})
	if err != nil {
		return false, fmt.Errorf("requeue close of %s: %w", o.OrderNo, err)
	}
	return ok, nil
}
