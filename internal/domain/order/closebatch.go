package order

import (
	"context"
	"fmt"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/model"

	"go.uber.org/zap"
)

// Expire runs one order:close task (the order's expiry). The close tasks a
// worker runs at the same time go in batches when Settings.ActivateBatch
// allows more than one, as activations do; otherwise each is a batch of one.
// Either way the batch runs closeBatch.
func (s *Service) Expire(ctx context.Context, orderNo string) error {
	if s.closer != nil {
		return s.closer.do(ctx, orderNo, "")
	}
	a := &batchTask{orderNo: orderNo}
	s.closeBatch(ctx, []*batchTask{a})
	return a.err
}

// closeBatch closes the expired orders of a batch of close tasks in one
// transaction (closeTx), with the same guarantees as Close, which it follows
// step by step: one read of the orders; an order that is not pending needs
// nothing (unless it was closed, when Close repairs its counter); an order
// whose payment was started somewhere is asked about first, so it goes the
// one-order way (Close), as does anything the batch cannot take as it is.
// The orders still pending are locked, closed together and committed; then
// each one's Redis counter is restored, as Close does.
func (s *Service) closeBatch(ctx context.Context, batch []*batchTask) {
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
			a.err = s.afterClose(ctx, o, CloseExpired, false) // never closed: nothing to do
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

// closeAlone closes the tasks' orders the one-order way, one by one.
func (s *Service) closeAlone(ctx context.Context, tasks []*batchTask) {
	for _, a := range tasks {
		_, a.err = s.Close(ctx, a.orderNo, CloseExpired)
	}
}

// closeTogether closes the pending, expired orders of cands in one
// transaction and restores their counters; it returns the tasks left for
// the one-order way (a payment started, the order moved since the read, a
// transaction of many that failed). A transaction that fails for one order
// (its failpoint fired, or it was alone) fails that order's task only.
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
	var orders []*model.Order
	for _, a := range cands {
		if o := byNo[a.orderNo]; started[o.ID] {
			alone = append(alone, a)
		} else {
			ready = append(ready, a)
			orders = append(orders, o)
		}
	}
	if len(ready) == 0 {
		return alone
	}
	closed, culprit, err := s.closeTx(ctx, orders, CloseExpired, s.clock.Now())
	if err != nil {
		if culprit == nil && len(ready) > 1 {
			s.log.Warn("batch close failed; its orders close one by one", zap.Int("orders", len(ready)), zap.Error(err))
			return append(alone, ready...)
		}
		for i, a := range ready {
			if culprit != nil && orders[i] != culprit {
				alone = append(alone, a) // nothing committed: one by one
				continue
			}
			s.metrics.CloseFailed()
			a.err = fmt.Errorf("close %s: %w", a.orderNo, err)
		}
		return alone
	}
	taskOf := make(map[*model.Order]*batchTask, len(ready))
	for i, o := range orders {
		taskOf[o] = ready[i]
	}
	eachConcurrently(len(closed), func(i int) {
		taskOf[closed[i]].err = s.afterClose(ctx, closed[i], CloseExpired, true)
	})
	for _, o := range closed {
		delete(taskOf, o)
	}
	for i, o := range orders {
		if _, left := taskOf[o]; left { // moved since the read (paid, or closed by a cancel): Close sees how it stands
			alone = append(alone, ready[i])
		}
	}
	return alone
}

// closeTx is the close transaction, for one order or a batch: it locks the
// orders still pending (one a payment or another close moved first is left
// out), closes them with reason (model.CloseOrdersLater: each one's move,
// pending slot, stock and close-restore flow) and fires each one's
// CloseAfterMove failpoint before the COMMIT. It returns the orders it
// closed; if a failpoint fired, nothing is committed and culprit names its
// order.
func (s *Service) closeTx(ctx context.Context, orders []*model.Order, reason string, now time.Time) (closed []*model.Order, culprit *model.Order, err error) {
	ids := make([]int64, len(orders))
	for i, o := range orders {
		ids[i] = o.ID
	}
	err = s.store.InTx(ctx, func(tx *model.Store) error {
		closed, culprit = closed[:0], nil
		locked, err := tx.LockPendingOrders(ctx, ids)
		if err != nil || len(locked) == 0 {
			return err
		}
		isLocked := make(map[int64]bool, len(locked))
		for _, id := range locked {
			isLocked[id] = true
		}
		batch := make([]model.OrderClose, 0, len(locked))
		for _, o := range orders {
			if isLocked[o.ID] {
				closed = append(closed, o)
				batch = append(batch, model.CloseOf(o))
			}
		}
		if err := tx.CloseOrdersLater(ctx, batch, reason, now); err != nil {
			return err
		}
		// Inside the transaction, the rows locked: a death here commits none.
		fired := make([]error, len(closed))
		eachConcurrently(len(closed), func(i int) {
			fired[i] = failpoint.Inject(failpoint.CloseAfterMove, closed[i].OrderNo)
		})
		for i, err := range fired {
			if err != nil {
				culprit = closed[i]
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, culprit, err
	}
	return closed, nil, nil
}
