package order

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/infra/failpoint"
	"orderflow/model"

	"go.uber.org/zap"
)

// CreateRequest is a buyer's order.
type CreateRequest struct {
	UserID         int64
	ProductID      int64
	Quantity       int
	IdempotencyKey string
}

// Created is the new (or, for a repeated Idempotency-Key, the first) order.
type Created struct {
	Order  *model.Order
	Replay bool // true when an earlier create with the same key is returned
}

// Create locks stock and writes a pending order. Redis answers "sold out"
// fast; the database decides. With an Idempotency-Key the key is reserved
// first, so concurrent retries wait for the first create and return its
// order instead of racing it for stock or the pending slot; the key reused
// for another order is refused (idempotency.go).
func (s *Service) Create(ctx context.Context, req CreateRequest) (*Created, error) {
	if err := bounds.CheckQuantity(int64(req.Quantity)); err != nil {
		return nil, err
	}
	if req.IdempotencyKey == "" {
		return s.create(ctx, req)
	}
	if !ValidIdempotencyKey(req.IdempotencyKey) {
		return nil, ErrBadIdempotencyKey
	}
	first, err := s.reserveKey(ctx, req)
	if err != nil || first != nil {
		return &Created{Order: first, Replay: true}, err
	}
	c, err := s.create(ctx, req)
	if err != nil {
		if rerr := s.store.ReleaseIdempotencyKey(context.WithoutCancel(ctx), req.UserID, req.IdempotencyKey); rerr != nil {
			s.log.Warn("idempotency reservation not released; it lapses", zap.Int64("user_id", req.UserID), zap.Error(rerr))
		}
	}
	return c, err
}

func (s *Service) create(ctx context.Context, req CreateRequest) (*Created, error) {
	now := s.clock.Now()
	p, err := s.product(ctx, req.ProductID)
	if errors.Is(err, model.ErrNotFound) {
		return nil, ErrProductUnknown
	}
	if err != nil {
		return nil, fmt.Errorf("create order: load product %d: %w", req.ProductID, err)
	}
	// Every bound before anything is taken or written.
	line, err := bounds.PriceLine(p, req.Quantity)
	if err != nil {
		return nil, err
	}
	limited := p.Kind == model.KindCard || p.Stock != nil
	var take stockTake
	if limited {
		if take, err = s.takeStock(ctx, p, req.Quantity); err != nil {
			return nil, err
		}
		if err := failpoint.Inject(failpoint.CreateAfterStockTake, strconv.FormatInt(p.ID, 10)); err != nil {
			s.undoStockTake(ctx, p, take, false)
			return nil, fmt.Errorf("create order for user %d: %w", req.UserID, err)
		}
	}
	o := &model.Order{
		OrderNo: newNumber("O", now), UserID: req.UserID, ProductID: p.ID, Kind: p.Kind,
		Quantity: req.Quantity, AmountCents: line.AmountCents,
		Status: model.OrderPending, CreatedAt: now, UpdatedAt: now, ExpireAt: now.Add(s.set.OrderTTL),
	}
	err = s.store.InTx(ctx, func(tx *model.Store) error {
		ok, err := tx.InsertOrderInSlot(ctx, o, s.set.MaxPending)
		if err != nil {
			return err
		}
		if !ok {
			return ErrTooManyPending
		}
		if err := lockStock(ctx, tx, p, o); err != nil {
			return err
		}
		if err := tx.InsertStockFlowLater(ctx, p.ID, o.ID, model.FlowLock, o.Quantity, now); err != nil {
			return err
		}
		if req.IdempotencyKey != "" {
			if err := tx.BindIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, o.ID); err != nil {
				return err
			}
		}
		if err := tx.InsertEventLater(ctx, model.Event{ObjectType: "order", ObjectNo: o.OrderNo, FromStatus: "-", ToStatus: o.Status.String(), Reason: "created", CreatedAt: now}); err != nil {
			return err
		}
		if o.AmountCents == 0 {
			return s.payFree(ctx, tx, o)
		}
		return tx.InsertOutboxLater(ctx, closeRow(o.OrderNo, 1, o.ExpireAt, now))
	})
	if errors.Is(err, model.ErrUnmet) {
		err = ErrOutOfStock // too few free keys (LockCardsLater)
	}
	if err != nil {
		if limited {
			s.undoStockTake(ctx, p, take, errors.Is(err, ErrOutOfStock))
		}
		if errors.Is(err, ErrTooManyPending) || errors.Is(err, ErrOutOfStock) {
			return nil, err
		}
		return nil, fmt.Errorf("create order for user %d: %w", req.UserID, err)
	}
	if o.AmountCents == 0 {
		paidAt := o.CreatedAt
		o.Status, o.ActivateGen, o.PaidAt = model.OrderPaid, 1, &paidAt
	} else {
		s.rememberCreated(o, now)
	}
	s.log.Info("order created", zap.String("order_no", o.OrderNo), zap.Int64("user_id", o.UserID), zap.Int64("product_id", p.ID), zap.Int("quantity", o.Quantity))
	return &Created{Order: o}, nil
}

// payFree moves a free order (amount 0) pending→paid inside its create
// transaction, as a payment would (no trade): its pending slot is released
// and its activation queued through the outbox. No close is queued — it
// never waits for a payment.
func (s *Service) payFree(ctx context.Context, tx *model.Store, o *model.Order) error {
	if err := tx.MoveOrderOrAbortLater(ctx, o.ID, o.OrderNo, model.OrderMove{
		From: model.OrderPending, To: model.OrderPaid, Reason: "free", At: o.CreatedAt, NextGen: 1,
		Set: map[string]any{"paid_at": o.CreatedAt},
	}); err != nil {
		return err
	}
	return s.queueActivation(ctx, tx, o, 1, o.CreatedAt)
}

// lockStock takes the order's stock in the ledger: card keys UNSOLD/RECYCLED
// → LOCKED, or a limited product's stock column.
func lockStock(ctx context.Context, tx *model.Store, p *model.Product, o *model.Order) error {
	if p.Kind == model.KindCard {
		return tx.LockCardsLater(ctx, p.ID, o.ID, o.Quantity, o.CreatedAt) // too few: ErrUnmet
	}
	if p.Stock == nil {
		return nil // unlimited
	}
	ok, err := tx.TakeProductStock(ctx, p.ID, o.Quantity)
	if err == nil && !ok {
		return ErrOutOfStock
	}
	return err
}
