package order

import (
	"context"
	"fmt"

	"orderflow/model"

	"go.uber.org/zap"
)

// Expire runs one order:close task (the order's expiry): the close
// procedure (Close). The close tasks a worker runs at the same time go in
// batches (closeBatch) when Settings.ActivateBatch allows more than one, as
// activations do.
func (s *Service) Expire(ctx context.Context, orderNo string) error {
	if s.closer != nil {
		return s.closer.do(ctx, orderNo, "")
	}
	_, err := s.Close(ctx, orderNo, CloseExpired)
	return err
}

// closeBatch closes the expired orders of a batch of close tasks in one
// transaction, with the same guarantees as Close, which it follows step by
// step: one read of the orders; an order that is not pending needs nothing
// (unless it was closed, when Close repairs its counter); an order whose
// payment was started somewhere is asked about first, so it goes the
// one-order way, as does anything the batch cannot take as it is. The
// orders still pending are locked, closed together and committed; then
// each one's Redis counter is restored, as Close does. A transaction that
// fails is rolled back and its orders closed one by one.
func (s *Service) closeBatch(ctx context.Context, batch []*batchTask) {
	if len(batch) == 1 {
		batch[0].err = s.expireOne(ctx, batch[0].orderNo)
		return
	}
	nos := make([]string, len(batch))
	for i, a := range batch {
		nos[i] = a.orderNo
	}
	orders, err := s.store.OrdersByNo(ctx, nos)
	if err != nil {
		s.closeAlone(ctx, batch)
		return
	}
	byNo := make(map[string]*model.Order, len(orders))
	for i := range orders {
		byNo[orders[i].OrderNo] = &orders[i]
	}
	now := s.clock.Now()
	var cands []*batchTask
	var alone []*batchTask
	seen := map[string]bool{}
	for _, a := range batch {
		o := byNo[a.orderNo]
		switch {
		case o == nil || seen[a.orderNo]:
			alone = append(alone, a)
		case o.Status == model.OrderPending && !now.Before(o.ExpireAt):
			cands = append(cands, a)
		case o.Status != model.OrderPending && o.ClosedAt == nil:
			s.log.Info("order not pending; nothing to close", zap.String("order_no", a.orderNo),
				zap.String("reason", CloseExpired), zap.Stringer("status", o.Status))
		default:
			alone = append(alone, a)
		}
		seen[a.orderNo] = true
	}
	if len(cands) > 0 {
		alone = append(alone, s.closeTogether(ctx, cands, byNo)...)
	}
	s.closeAlone(ctx, alone)
}

// expireOne is Expire for one order on its own.
func (s *Service) expireOne(ctx context.Context, orderNo string) error {
	_, err := s.Close(ctx, orderNo, CloseExpired)
	return err
}

func (s *Service) closeAlone(ctx context.Context, tasks []*batchTask) {
	for _, a := range tasks {
		a.err = s.expireOne(ctx, a.orderNo)
	}
}

// closeTogether closes the pending, expired orders of cands in one
// transaction and restores their counters; it returns the tasks left for
// the one-order way (a payment started, the order moved since the read, the
// transaction failed).
func (s *Service) closeTogether(ctx context.Context, cands []*batchTask, byNo map[string]*model.Order) (alone []*batchTask) {
	ids := make([]int64, len(cands))
	for i, a := range cands {
		ids[i] = byNo[a.orderNo].ID
	}
	started, err := s.store.OrdersWithAttempts(ctx, ids)
	if err != nil {
		return cands
	}
	var ready []*batchTask
	for _, a := range cands {
		if started[byNo[a.orderNo].ID] {
			alone = append(alone, a)
		} else {
			ready = append(ready, a)
		}
	}
	if len(ready) == 0 {
		return alone
	}
	now := s.clock.Now()
	var closed []*batchTask
	err = s.store.InTx(ctx, func(tx *model.Store) error {
		closed = closed[:0]
		ids := make([]int64, len(ready))
		for i, a := range ready {
			ids[i] = byNo[a.orderNo].ID
		}
		locked, err := tx.LockPendingOrders(ctx, ids)
		if err != nil || len(locked) == 0 {
			return err
		}
		isLocked := make(map[int64]bool, len(locked))
		for _, id := range locked {
			isLocked[id] = true
		}
		batch := make([]model.OrderClose, 0, len(locked))
		for _, a := range ready {
			if o := byNo[a.orderNo]; isLocked[o.ID] {
				closed = append(closed, a)
				batch = append(batch, model.OrderClose{ID: o.ID, UserID: o.UserID, ProductID: o.ProductID, No: o.OrderNo,
					Card: o.Kind == model.KindCard, Quantity: o.Quantity})
			}
		}
		return tx.CloseOrdersLater(ctx, batch, CloseExpired, now)
	})
	if err != nil {
		s.log.Warn("batch close failed; its orders close one by one", zap.Int("orders", len(ready)), zap.Error(err))
		return append(alone, ready...)
	}
	done := make(map[*batchTask]bool, len(closed))
	eachConcurrently(len(closed), func(i int) {
		a := closed[i]
		o := byNo[a.orderNo]
		log := s.log.With(zap.String("order_no", a.orderNo), zap.String("reason", CloseExpired))
		s.metrics.CloseSucceeded()
		log.Info("order closed; stock released")
		if rerr := s.restoreCounter(ctx, o, model.FlowCloseRestore); rerr != nil {
			log.Warn("stock counter restore failed; the close task runs again", zap.Error(rerr))
			a.err = fmt.Errorf("close %s: %w: %w", a.orderNo, errCounterNotRestored, rerr)
		}
	})
	for _, a := range closed {
		done[a] = true
	}
	for _, a := range ready {
		if !done[a] { // moved since the read (paid, or closed by a cancel): Close sees how it stands
			alone = append(alone, a)
		}
	}
	return alone
}
