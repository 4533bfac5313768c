package order

import (
	"context"
	"fmt"
	"time"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/infra/failpoint"
	"orderflow/model"

	"go.uber.org/zap"
)

// deliver applies the claimed orders' effects for their kinds and finalizes
// their claims (claimed→finished, naming each one's token) in ONE
// transaction: the effects, the rows that record them, the card sales and
// the moves commit together or not at all, so a re-run after any crash
// applies each effect once, and a worker whose claim was lost commits
// nothing. Each order's checks run first, beside the others'; an order that
// fails them is released or failed on its own and left out.
func (s *Service) deliver(ctx context.Context, claims []*batchClaim) {
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
	if len(ready) > 0 {
		s.commitDeliveries(ctx, ready)
	}
}

// checkDeliverable runs, for one claimed order, what comes before its
// delivery transaction: the failpoints, the product, the bounds. An order
// that fails them is released (or failed at its attempt cap), or refused
// out of bounds, and its outcome returned.
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
	// The same bounds as at creation: a row written before they existed (or
	// by hand) is refused here rather than wrapped.
	if c.line, err = deliverable(o, p); err != nil {
		return s.refuse(ctx, c.claim, err, c.log)
	}
	return nil
}

// commitDeliveries runs the delivery transaction of the ready orders and
// sets their outcomes. A transaction that fails — one poison order is
// enough — is rolled back, and a batch's orders are delivered again each as
// a batch of one, so the others are neither failed nor held up; the order
// whose failpoint fired is released as it is. A batch of one that fails
// has lost its claim (nothing to do: claimLost), broken a bound (refused)
// or failed an attempt (released, or failed at the attempt cap).
func (s *Service) commitDeliveries(ctx context.Context, ready []*batchClaim) {
	now := s.clock.Now()
	var culprit *batchClaim
	err := s.store.InTx(ctx, func(tx *model.Store) error {
		culprit = nil
		return s.deliverAll(ctx, tx, ready, now, &culprit)
	})
	switch {
	case err == nil:
		for _, c := range ready {
			if c.order.PaidAt != nil {
				s.metrics.Activated(*c.order.PaidAt, now)
			}
			c.log.Info("order finished", zap.Int("attempts", c.order.Attempts), zap.Int("batch", len(ready)))
		}
	case len(ready) == 1:
		c := ready[0]
		if s.claimLost(ctx, c) {
			c.log.Info("claim lost before finalize; its new holder finishes the order", zap.Error(err))
			return
		}
		// A broken bound (the wallet or the subscription cannot take it) is
		// refused; anything else releases the claim for a retry.
		c.task.err = s.refuse(ctx, c.claim, err, c.log)
	default:
		s.log.Warn("activation batch: delivery failed; one order at a time", zap.Int("orders", len(ready)), zap.Error(err))
		for _, c := range ready {
			if c == culprit {
				c.task.err = s.giveUpOrRelease(ctx, c.claim, err, c.log)
				continue
			}
			s.commitDeliveries(ctx, []*batchClaim{c})
		}
	}
}

// claimLost reports whether c's order no longer holds c's claim, after its
// delivery transaction failed: the finalize found the claim gone (ErrUnmet),
// or its new holder finished the order first (a card effect recorded
// twice). A card sale short of keys fails with ErrUnmet too, but with the
// claim still held: that is a failed attempt.
func (s *Service) claimLost(ctx context.Context, c *batchClaim) bool {
	o, err := s.store.OrderByNo(ctx, c.order.OrderNo)
	return err == nil && (o.Status != model.OrderClaimed || deref(o.ClaimToken) != c.token)
}

// deliverAll is the delivery transaction: each wallet or subscription
// effect once (they answer their bounds one by one), the card orders'
// effects and sales in one go — each order exactly the keys it paid for —
// then the finalizing moves. A failpoint that fires names its order in
// culprit.
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
	// Lost claim (0 rows): ErrUnmet, and nothing of the effects commits.
	// On MariaDB the moves travel with the COMMIT.
	return tx.FinishClaimedOrdersLater(ctx, finals, now)
}

// applyEffectOnce records a wallet or subscription order's effect (its
// primary key makes it once-only) and, if the record is fresh, applies it.
func applyEffectOnce(ctx context.Context, tx *model.Store, o *model.Order, line bounds.Line, now time.Time) error {
	fresh, err := tx.ClaimEffect(ctx, o.ID, string(o.Kind), "", now)
	if !fresh || err != nil {
		return err
	}
	return applyEffect(ctx, tx, o, line, now)
}

// deliverable checks an order against the bounds before its delivery: the
// product and quantity make a line within every bound (PriceLine, as at
// creation), the order's kind is its product's, and its amount is one an
// order can have.
func deliverable(o *model.Order, p *model.Product) (bounds.Line, error) {
	if o.Kind != p.Kind {
		return bounds.Line{}, &bounds.BoundError{Code: "invalid_kind", Message: fmt.Sprintf("order kind %q, product kind %q", o.Kind, p.Kind)}
	}
	line, err := bounds.PriceLine(p, o.Quantity)
	if err != nil {
		return line, err
	}
	return line, bounds.CheckAmount(o.AmountCents, 0)
}

// applyEffect credits a recharge or extends a subscription by the checked line.
func applyEffect(ctx context.Context, tx *model.Store, o *model.Order, line bounds.Line, now time.Time) error {
	switch o.Kind {
	case model.KindRecharge:
		_, err := tx.CreditWallet(ctx, o.UserID, "credit", "order:"+o.OrderNo, line.CreditCents, now)
		return bounds.FromLedger(err)
	case model.KindSubscription:
		return bounds.FromLedger(tx.ExtendSubscription(ctx, o.UserID, line.Extension, now))
	}
	return fmt.Errorf("order %s: unknown kind %q", o.OrderNo, o.Kind)
}
