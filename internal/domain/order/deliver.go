package order

import (
	"context"
	"errors"
	"fmt"
	"orderflow/internal/domain/bounds"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/model"

	"go.uber.org/zap"
)

// deliver applies the order's effect for its kind and finalizes the claim
// (claimed→finished, naming the token) in ONE transaction: the effect, the
// row that records it and the move commit together or not at all, so a
// re-run after any crash applies the effect once, and a worker whose claim
// was lost commits nothing. A failed attempt releases the claim (or fails
// the order at the attempt cap).
func (s *Service) deliver(ctx context.Context, c *claim, log *zap.Logger) error {
	o := c.order
	if err := failpoint.Inject(failpoint.ActivateDeliver, o.OrderNo); err != nil {
		return s.giveUpOrRelease(ctx, c, err, log)
	}
	p, err := s.product(ctx, o.ProductID)
	if err != nil {
		return s.giveUpOrRelease(ctx, c, fmt.Errorf("deliver: load product %d: %w", o.ProductID, err), log)
	}
	// The same bounds as at creation: a row written before they existed (or
	// by hand) is refused here rather than wrapped.
	line, err := deliverable(o, p)
	if err != nil {
		return s.refuse(ctx, c, err, log)
	}
	return s.commitDelivery(ctx, c, line, log)
}

// commitDelivery is deliver's transaction — the effect, its record and the
// finalize — and what follows from its outcome, for an order whose checks
// have passed.
func (s *Service) commitDelivery(ctx context.Context, c *claim, line bounds.Line, log *zap.Logger) error {
	o, now := c.order, s.clock.Now()
	err := s.store.InTx(ctx, func(tx *model.Store) error {
		if err := applyEffectOnce(ctx, tx, o, line, now); err != nil {
			return fmt.Errorf("deliver %s: %w", o.Kind, err)
		}
		// Inside the transaction: a crash here rolls the effect back with it.
		if err := failpoint.Inject(failpoint.ActivateAfterEffect, o.OrderNo); err != nil {
			return err
		}
		if err := failpoint.Inject(failpoint.ActivateBeforeFinalize, o.OrderNo); err != nil {
			return err
		}
		// Lost claim (0 rows): ErrUnmet, and nothing of the effect commits.
		// On MariaDB the move travels with the COMMIT.
		return tx.MoveOrderOrAbortLater(ctx, o.ID, o.OrderNo, model.OrderMove{
			From: model.OrderClaimed, To: model.OrderFinished, Reason: "delivered", At: now, Token: c.token,
			Set: map[string]any{"finished_at": now},
		})
	})
	if errors.Is(err, model.ErrUnmet) {
		log.Info("claim lost before finalize; its new holder finishes the order", zap.Error(err))
		return nil
	}
	var bound *bounds.BoundError
	if errors.As(err, &bound) {
		// The wallet or the subscription cannot take it; nothing committed.
		return s.refuse(ctx, c, err, log)
	}
	if err != nil {
		return s.giveUpOrRelease(ctx, c, err, log)
	}
	if o.PaidAt != nil {
		s.metrics.Activated(*o.PaidAt, now)
	}
	log.Info("order finished", zap.Int("attempts", o.Attempts))
	return nil
}

// applyEffectOnce records the order's effect (its primary key makes it
// once-only) and, if the record is fresh, applies it.
func applyEffectOnce(ctx context.Context, tx *model.Store, o *model.Order, line bounds.Line, now time.Time) error {
	if o.Kind == model.KindCard {
		fresh, sold, err := tx.ClaimCardSale(ctx, o.ID, now)
		if !fresh || err != nil {
			return err
		}
		return recordSale(ctx, tx, o, sold, now)
	}
	fresh, err := tx.ClaimEffect(ctx, o.ID, string(o.Kind), "", now)
	if !fresh || err != nil {
		return err
	}
	return applyEffect(ctx, tx, o, line, now)
}

// recordSale checks a card order got every key it paid for and records the sale.
func recordSale(ctx context.Context, tx *model.Store, o *model.Order, n int64, now time.Time) error {
	if n != int64(o.Quantity) {
		// The keys locked at creation are gone: never deliver fewer than paid for.
		return fmt.Errorf("order %s has %d locked keys, want %d", o.OrderNo, n, o.Quantity)
	}
	// The effect row claimed in this transaction was fresh, so the sale
	// cannot have been recorded before.
	return tx.InsertStockFlowLater(ctx, o.ProductID, o.ID, model.FlowSell, o.Quantity, now)
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
