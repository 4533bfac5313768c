package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/apperr"
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
// order instead of racing it for stock or the pending slot.
func (s *Service) Create(ctx context.Context, req CreateRequest) (*Created, error) {
	if req.Quantity < 1 || req.Quantity > 100 {
		return nil, ErrBadQuantity
	}
	if req.IdempotencyKey == "" {
		return s.create(ctx, req)
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

// keyWait bounds how long a retry waits for the create holding its key;
// a reservation older than keyLapse belonged to a process that died.
const (
	keyWait  = 10 * time.Second
	keyLapse = time.Minute
)

var errKeyBusy = apperr.New(apperr.Conflict, "idempotency_key_in_use", "a create with this Idempotency-Key is still in progress; retry shortly")

// reserveKey reserves the buyer's key for this create (nil, nil) or returns
// the order an earlier create with the key made.
func (s *Service) reserveKey(ctx context.Context, req CreateRequest) (*model.Order, error) {
	deadline := time.Now().Add(keyWait)
	for {
		now := s.clock.Now()
		if err := s.store.ExpireIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, now.Add(-s.set.IdempotencyTTL)); err != nil {
			return nil, fmt.Errorf("create order: idempotency: %w", err)
		}
		reserved, err := s.store.InsertIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, 0, now)
		if err != nil {
			return nil, fmt.Errorf("create order: idempotency: %w", err)
		}
		if reserved {
			return nil, nil
		}
		id, err := s.store.IdempotentOrderID(ctx, req.UserID, req.IdempotencyKey, now.Add(-s.set.IdempotencyTTL))
		switch {
		case err == nil && id > 0:
			return s.store.OrderByID(ctx, id)
		case err != nil && !errors.Is(err, model.ErrNotFound):
			return nil, fmt.Errorf("create order: idempotency: %w", err)
		case err == nil:
			// Reserved, in progress. A reservation past keyLapse is orphaned.
			if err := s.store.ExpireIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, now.Add(-keyLapse)); err != nil {
				return nil, err
			}
		}
		if time.Now().After(deadline) {
			return nil, errKeyBusy
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
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
	limited := p.Kind == model.KindCard || p.Stock != nil
	var take stockTake
	if limited {
		if take, err = s.takeStock(ctx, p, req.Quantity); err != nil {
			return nil, err
		}
	}
	var closeTask *model.OutboxRow
	o := &model.Order{
		OrderNo: newNumber("O", now), UserID: req.UserID, ProductID: p.ID, Kind: p.Kind,
		Quantity: req.Quantity, AmountCents: p.PriceCents * int64(req.Quantity),
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
		if err := tx.RecordStockFlow(ctx, p.ID, o.ID, model.FlowLock, o.Quantity, now); err != nil {
			return err
		}
		if req.IdempotencyKey != "" {
			if err := tx.BindIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, o.ID); err != nil {
				return err
			}
		}
		if err := tx.InsertEvent(ctx, model.Event{ObjectType: "order", ObjectNo: o.OrderNo, FromStatus: "-", ToStatus: o.Status.String(), Reason: "created", CreatedAt: now}); err != nil {
			return err
		}
		closeTask = closeRow(o.OrderNo, 1, o.ExpireAt, now)
		return tx.InsertOutbox(ctx, closeTask)
	})
	if errors.Is(err, model.ErrUnmet) {
		err = ErrOutOfStock // the picked keys did not all move (LockCards)
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
	s.relay.SendRows(ctx, closeTask)
	s.log.Info("order created", zap.String("order_no", o.OrderNo), zap.Int64("user_id", o.UserID), zap.Int64("product_id", p.ID), zap.Int("quantity", o.Quantity))
	return &Created{Order: o}, nil
}

// lockStock takes the order's stock in the ledger: card keys UNSOLD/RECYCLED
// → LOCKED, or a limited product's stock column.
func lockStock(ctx context.Context, tx *model.Store, p *model.Product, o *model.Order) error {
	if p.Kind == model.KindCard {
		ok, err := tx.LockCards(ctx, p.ID, o.ID, o.Quantity, o.CreatedAt)
		if err == nil && !ok {
			err = ErrOutOfStock
		}
		return err
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
