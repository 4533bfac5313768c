package order

import (
	"context"
	"fmt"
	"orderflow/internal/domain/bounds"
	"sync"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/model"

	"go.uber.org/zap"
)

// batchClaim is one order of a batch once claimed: its claim, the task
// waiting for it, and the line its delivery applies.
type batchClaim struct {
	*claim
	task *batchTask
	log  *zap.Logger
	line bounds.Line
}

// activateBatch runs the activate tasks the batcher gathered: one read of
// their orders, one claim transaction, one delivery transaction, with the
// same guarantees as one order at a time (Activate's comment). Whatever the
// batch cannot take as it is goes the one-order way: an order not paid or at
// its attempt cap, a claim to take over after a lease expired, a second task
// for the same order. An order whose failpoint, product or bounds fail is
// handled as the one-order path handles it, alone; a delivery transaction
// that fails — one poison order is enough — is rolled back and its orders
// delivered one by one, so the others are neither failed nor held up.
func (s *Service) activateBatch(ctx context.Context, batch []*batchTask) {
	s.metrics.ActivationBatch(len(batch))
	if len(batch) == 1 {
		batch[0].err = s.activateOne(ctx, batch[0].orderNo, batch[0].taskID)
		return
	}
	claims, alone := s.claimBatch(ctx, batch)
	for _, a := range alone {
		a.err = s.activateOne(ctx, a.orderNo, a.taskID)
	}
	s.deliverBatch(ctx, claims)
}

// claimBatch claims, in one transaction, every order of batch that is paid
// and under its attempt cap. It returns the claims and the tasks that must
// go the one-order way; a task whose order someone else moved first is
// done (nothing to do), as in claim.
func (s *Service) claimBatch(ctx context.Context, batch []*batchTask) (claimed []*batchClaim, alone []*batchTask) {
	nos := make([]string, len(batch))
	for i, a := range batch {
		nos[i] = a.orderNo
	}
	rows, err := s.store.OrdersByNo(ctx, nos)
	if err != nil {
		s.log.Warn("activation batch: load failed; one order at a time", zap.Strings("order_nos", nos), zap.Error(err))
		return nil, batch
	}
	byNo := make(map[string]*model.Order, len(rows))
	for i := range rows {
		byNo[rows[i].OrderNo] = &rows[i]
	}
	var want []model.OrderClaim
	var candidates []*batchClaim
	for _, a := range batch {
		o := byNo[a.orderNo]
		if o == nil || o.Status != model.OrderPaid || o.Attempts >= s.set.MaxAttempts {
			alone = append(alone, a)
			continue
		}
		delete(byNo, a.orderNo) // a second task for the same order goes alone
		token := newToken()
		want = append(want, model.OrderClaim{ID: o.ID, No: o.OrderNo, Token: token, TaskID: a.taskID})
		candidates = append(candidates, &batchClaim{
			claim: &claim{order: o, token: token}, task: a,
			log: s.log.With(zap.String("order_no", o.OrderNo), zap.String("task_id", a.taskID)),
		})
	}
	if len(want) == 0 {
		return nil, alone
	}
	now := s.clock.Now()
	var moved []int64
	err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
		moved, err = tx.ClaimPaidOrders(ctx, want, s.set.WorkerID, now)
		return err
	})
	if err != nil {
		s.log.Warn("activation batch: claim failed; one order at a time", zap.Int("orders", len(want)), zap.Error(err))
		for _, c := range candidates {
			alone = append(alone, c.task)
		}
		return nil, alone
	}
	got := make(map[int64]bool, len(moved))
	for _, id := range moved {
		got[id] = true
	}
	for _, c := range candidates {
		if !got[c.order.ID] {
			c.log.Info("order moved by someone else before the claim; skipping")
			continue
		}
		token := c.token
		c.order.Status, c.order.ClaimToken, c.order.Attempts = model.OrderClaimed, &token, c.order.Attempts+1
		claimed = append(claimed, c)
	}
	return claimed, alone
}

// deliverBatch delivers and finalizes the claimed orders in one transaction
// (deliver's, for many): the effects, their records, the sales and the
// finalizing moves commit together or not at all.
func (s *Service) deliverBatch(ctx context.Context, claims []*batchClaim) {
	// Each order's checks run beside the others', as its task would alone.
	failed := make([]bool, len(claims))
	eachConcurrently(len(claims), func(i int) {
		if err := s.checkDeliverable(ctx, claims[i]); err != nil {
			claims[i].task.err, failed[i] = err, true
		}
	})
	var ready []*batchClaim
	for i, c := range claims {
		if !failed[i] {
			ready = append(ready, c)
		}
	}
	if len(ready) <= 1 {
		for _, c := range ready {
			c.task.err = s.commitDelivery(ctx, c.claim, c.line, c.log)
		}
		return
	}
	now := s.clock.Now()
	var culprit *batchClaim
	err := s.store.InTx(ctx, func(tx *model.Store) error {
		culprit = nil
		return s.deliverAll(ctx, tx, ready, now, &culprit)
	})
	if err == nil {
		for _, c := range ready {
			if c.order.PaidAt != nil {
				s.metrics.Activated(*c.order.PaidAt, now)
			}
			c.log.Info("order finished", zap.Int("attempts", c.order.Attempts), zap.Int("batch", len(ready)))
		}
		return
	}
	// Nothing committed. The order whose failpoint fired is handled as alone;
	// the rest go one by one, so one poison order fails only itself.
	s.log.Warn("activation batch: delivery failed; one order at a time", zap.Int("orders", len(ready)), zap.Error(err))
	for _, c := range ready {
		if c == culprit {
			c.task.err = s.giveUpOrRelease(ctx, c.claim, err, c.log)
			continue
		}
		c.task.err = s.commitDelivery(ctx, c.claim, c.line, c.log)
	}
}

// checkDeliverable runs, for one claimed order of a batch, what deliver
// runs before its transaction: the failpoints, the product, the bounds. An
// order that fails them is handled as deliver handles it and left out.
func (s *Service) checkDeliverable(ctx context.Context, c *batchClaim) error {
	o := c.order
	for _, fp := range []string{failpoint.ActivateAfterClaim, failpoint.ActivateDeliver} {
		if err := failpoint.Inject(fp, o.OrderNo); err != nil {
			return s.giveUpOrRelease(ctx, c.claim, err, c.log)
		}
	}
	p, err := s.product(ctx, o.ProductID)
	if err != nil {
		return s.giveUpOrRelease(ctx, c.claim, fmt.Errorf("deliver: load product %d: %w", o.ProductID, err), c.log)
	}
	if c.line, err = deliverable(o, p); err != nil {
		return s.refuse(ctx, c.claim, err, c.log)
	}
	return nil
}

// deliverAll is the batch's delivery transaction: each wallet or
// subscription effect once (they answer their bounds one by one), the card
// orders' effects and sales in one go, then the finalizing moves. A
// failpoint that fires names its order in culprit.
func (s *Service) deliverAll(ctx context.Context, tx *model.Store, ready []*batchClaim, now time.Time, culprit **batchClaim) error {
	var sales []model.CardSale
	finals := make([]model.OrderClaim, 0, len(ready))
	for _, c := range ready {
		o := c.order
		finals = append(finals, model.OrderClaim{ID: o.ID, No: o.OrderNo, Token: c.token})
		if o.Kind == model.KindCard {
			sales = append(sales, model.CardSale{OrderID: o.ID, ProductID: o.ProductID, Quantity: o.Quantity})
			continue
		}
		if err := applyEffectOnce(ctx, tx, o, c.line, now); err != nil {
			return fmt.Errorf("deliver %s %s: %w", o.OrderNo, o.Kind, err)
		}
	}
	if len(sales) > 0 {
		if err := tx.SellCardOrdersLater(ctx, sales, now); err != nil {
			return fmt.Errorf("deliver %d card orders: %w", len(sales), err)
		}
	}
	// Inside the transaction: a crash here rolls every effect back with it.
	fired := make([]error, len(ready))
	eachConcurrently(len(ready), func(i int) {
		for _, fp := range []string{failpoint.ActivateAfterEffect, failpoint.ActivateBeforeFinalize} {
			if fired[i] = failpoint.Inject(fp, ready[i].order.OrderNo); fired[i] != nil {
				return
			}
		}
	})
	for i, err := range fired {
		if err != nil {
			*culprit = ready[i]
			return err
		}
	}
	return tx.FinishClaimedOrdersLater(ctx, finals, now)
}

// eachConcurrently runs fn(0) … fn(n-1) at the same time and waits for all.
func eachConcurrently(n int, fn func(i int)) {
	if n == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { fn(i) })
	}
	wg.Wait()
}
