package order

import (
	"context"
	"fmt"
	"sync"

	"orderflow/internal/domain/bounds"
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

// Activate runs one order:activate task. Its order is claimed (its own
// commit, so the attempt counts whatever happens next), then delivered and
// finalized in one transaction. It returns nil when the order needs nothing
// from this task (skip), an error apperr.IsFinal when retrying cannot help,
// and any other error to have asynq retry after the claim was released. The
// tasks a worker runs at the same time go in batches (batcher.go) when
// Settings.ActivateBatch allows more than one; a task on its own is a batch
// of one, through the same code.
func (s *Service) Activate(ctx context.Context, orderNo, taskID string) error {
	if s.batcher != nil {
		return s.batcher.do(ctx, orderNo, taskID)
	}
	a := &batchTask{orderNo: orderNo, taskID: taskID}
	s.activate(ctx, []*batchTask{a})
	return a.err
}

// activateBatch runs the activate tasks the batcher gathered.
func (s *Service) activateBatch(ctx context.Context, batch []*batchTask) {
	s.metrics.ActivationBatch(len(batch))
	s.activate(ctx, batch)
}

// activate runs activate tasks — one, or a batch — and sets each one's
// outcome: one read of their orders, one claim transaction, one delivery
// transaction (deliver), with the guarantees of Activate's comment for each
// order. A second task for an order already in the batch runs once the
// batch is done, in a batch of its own.
func (s *Service) activate(ctx context.Context, batch []*batchTask) {
	var first, again []*batchTask
	seen := make(map[string]bool, len(batch))
	for _, a := range batch {
		if seen[a.orderNo] {
			again = append(again, a)
			continue
		}
		seen[a.orderNo] = true
		first = append(first, a)
	}
	s.deliver(ctx, s.claim(ctx, first))
	if len(again) > 0 {
		s.activate(ctx, again)
	}
}

// claim reads the orders of batch (one per task) and claims those this
// task may deliver: a paid order under its attempt cap moves paid→claimed
// under a new token (claimPaid); a claim the same task made before its
// lease expired is taken over. An order at its attempt cap is failed; any
// other is skipped (the task is done). It returns the claims.
func (s *Service) claim(ctx context.Context, batch []*batchTask) []*batchClaim {
	nos := make([]string, len(batch))
	for i, a := range batch {
		nos[i] = a.orderNo
	}
	rows, err := s.store.OrdersByNo(ctx, nos)
	if err != nil {
		for _, a := range batch {
			a.err = fmt.Errorf("activate %s: load: %w", a.orderNo, err)
		}
		return nil
	}
	byNo := make(map[string]*model.Order, len(rows))
	for i := range rows {
		byNo[rows[i].OrderNo] = &rows[i]
	}
	var claimed, paid []*batchClaim
	for _, a := range batch {
		o := byNo[a.orderNo]
		if o == nil {
			a.err = fmt.Errorf("activate %s: %w", a.orderNo, ErrNotFound)
			continue
		}
		log := s.log.With(zap.String("order_no", o.OrderNo), zap.String("task_id", a.taskID))
		switch {
		case o.Status == model.OrderPaid && o.Attempts >= s.set.MaxAttempts:
			a.err = s.fail(ctx, o, model.OrderPaid, "", exhausted(o), log)
		case o.Status == model.OrderPaid:
			paid = append(paid, &batchClaim{claim: &claim{order: o, token: newToken()}, task: a, log: log})
		case o.Status == model.OrderClaimed && o.ClaimTaskID != nil && *o.ClaimTaskID == a.taskID:
			// asynq redelivered this task after its lease expired: the claim is ours.
			if c := s.takeOver(ctx, o, a, log); c != nil {
				claimed = append(claimed, c)
			}
		default:
			log.Info("order not activatable by this task; skipping", zap.Stringer("status", o.Status))
		}
	}
	return append(claimed, s.claimPaid(ctx, paid)...)
}

// claimPaid moves the paid orders paid→claimed in one transaction and
// returns those it moved; an order someone else moved first is skipped. If
// the transaction fails for a batch, each order is claimed again alone.
func (s *Service) claimPaid(ctx context.Context, paid []*batchClaim) []*batchClaim {
	if len(paid) == 0 {
		return nil
	}
	want := make([]model.OrderClaim, len(paid))
	for i, c := range paid {
		want[i] = model.OrderClaim{ID: c.order.ID, No: c.order.OrderNo, Token: c.token, TaskID: c.task.taskID}
	}
	now := s.clock.Now()
	var moved []int64
	// One round trip on MariaDB: the moves, their events and the COMMIT.
	err := s.store.InTx(ctx, func(tx *model.Store) (err error) {
		moved, err = tx.ClaimPaidOrders(ctx, want, s.set.WorkerID, now)
		return err
	})
	if err != nil && len(paid) > 1 {
		s.log.Warn("activation batch: claim failed; one order at a time", zap.Int("orders", len(paid)), zap.Error(err))
		var claimed []*batchClaim
		for _, c := range paid {
			claimed = append(claimed, s.claimPaid(ctx, []*batchClaim{c})...)
		}
		return claimed
	}
	if err != nil {
		paid[0].task.err = fmt.Errorf("activate %s: claim: %w", paid[0].order.OrderNo, err)
		return nil
	}
	got := make(map[int64]bool, len(moved))
	for _, id := range moved {
		got[id] = true
	}
	var claimed []*batchClaim
	for _, c := range paid {
		if !got[c.order.ID] {
			c.log.Info("order moved by someone else before the claim; skipping")
			continue
		}
		c.order.Status, c.order.ClaimToken, c.order.Attempts = model.OrderClaimed, &c.token, c.order.Attempts+1
		claimed = append(claimed, c)
	}
	return claimed
}

// takeOver gives task a's own claim on o (left when its lease expired) a
// new token, counting an attempt. It returns nil when there is nothing to
// deliver: the claim changed hands first (skip), or the takeover failed
// (a's error).
func (s *Service) takeOver(ctx context.Context, o *model.Order, a *batchTask, log *zap.Logger) *batchClaim {
	token := newToken()
	ok, err := s.store.TakeOverClaim(ctx, o.ID, a.taskID, deref(o.ClaimToken), token, s.set.WorkerID, s.clock.Now())
	if err != nil {
		a.err = fmt.Errorf("activate %s: take over claim: %w", o.OrderNo, err)
		return nil
	}
	if !ok {
		log.Info("claim changed hands before takeover; skipping")
		return nil
	}
	log.Info("took over own claim after lease expiry")
	o.ClaimToken, o.Attempts = &token, o.Attempts+1
	return &batchClaim{claim: &claim{order: o, token: token}, task: a, log: log}
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
