package order

import (
	"context"
	"fmt"
	"time"

	"orderflow/failpoint"
	"orderflow/model"
)

// deliver applies the order's effect for its kind. The effect and the row
// that records it commit together, so a re-run after any crash applies it
// once: the second insert of (order, effect) finds the first.
func (s *Service) deliver(ctx context.Context, o *model.Order) error {
	if err := failpoint.Inject(failpoint.ActivateDeliver, o.OrderNo); err != nil {
		return err
	}
	p, err := s.product(ctx, o.ProductID)
	if err != nil {
		return fmt.Errorf("deliver: load product %d: %w", o.ProductID, err)
	}
	now := s.clock.Now()
	err = s.store.InTx(ctx, func(tx *model.Store) error {
		fresh, err := tx.ClaimEffect(ctx, o.ID, string(o.Kind), "", now)
		if err != nil || !fresh {
			return err
		}
		return applyEffect(ctx, tx, o, p, now)
	})
	if err != nil {
		return fmt.Errorf("deliver %s: %w", o.Kind, err)
	}
	return failpoint.Inject(failpoint.ActivateAfterEffect, o.OrderNo)
}

func applyEffect(ctx context.Context, tx *model.Store, o *model.Order, p *model.Product, now time.Time) error {
	switch o.Kind {
	case model.KindCard:
		n, err := tx.SellCards(ctx, o.ID, now)
		if err != nil {
			return err
		}
		if n != int64(o.Quantity) {
			// The keys locked at creation are gone: never deliver fewer than paid for.
			return fmt.Errorf("order %s has %d locked keys, want %d", o.OrderNo, n, o.Quantity)
		}
		_, err = tx.InsertStockFlow(ctx, o.ProductID, o.ID, model.FlowSell, o.Quantity, now)
		return err
	case model.KindRecharge:
		_, err := tx.CreditWallet(ctx, o.UserID, "credit", "order:"+o.OrderNo, p.CreditCents*int64(o.Quantity), now)
		return err
	case model.KindSubscription:
		return tx.ExtendSubscription(ctx, o.UserID, time.Duration(p.Days*o.Quantity)*24*time.Hour, now)
	}
	return fmt.Errorf("order %s: unknown kind %q", o.OrderNo, o.Kind)
}
