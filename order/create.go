package order

import (
	"context"
	"errors"
	"fmt"

	"orderflow/model"
	"orderflow/stock"
	"orderflow/tasks"

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
// fast; the database decides.
func (s *Service) Create(ctx context.Context, req CreateRequest) (*Created, error) {
	if req.Quantity < 1 || req.Quantity > 100 {
		return nil, ErrBadQuantity
	}
	now := s.clock.Now()
	if req.IdempotencyKey != "" {
		if o, err := s.replay(ctx, req); err != nil || o != nil {
			return &Created{Order: o, Replay: true}, err
		}
	}
	p, err := s.store.ProductByID(ctx, req.ProductID)
	if errors.Is(err, model.ErrNotFound) {
		return nil, ErrProductUnknown
	}
	if err != nil {
		return nil, fmt.Errorf("create order: load product %d: %w", req.ProductID, err)
	}
	limited := p.Kind == model.KindCard || p.Stock != nil
	if limited {
		if err := s.takeStock(ctx, p, req.Quantity); err != nil {
			return nil, err
		}
	}
	o := &model.Order{
		OrderNo: newNumber("O", now), UserID: req.UserID, ProductID: p.ID, Kind: p.Kind,
		Quantity: req.Quantity, AmountCents: p.PriceCents * int64(req.Quantity),
		Status: model.OrderPending, CreatedAt: now, UpdatedAt: now, ExpireAt: now.Add(s.set.OrderTTL),
	}
	var replayed *model.Order
	err = s.store.InTx(ctx, func(tx *model.Store) error {
		ok, err := tx.TakePendingSlot(ctx, req.UserID, s.set.MaxPending)
		if err != nil {
			return err
		}
		if !ok {
			return ErrTooManyPending
		}
		if err := tx.InsertOrder(ctx, o); err != nil {
			return err
		}
		if err := lockStock(ctx, tx, p, o); err != nil {
			return err
		}
		if _, err := tx.InsertStockFlow(ctx, p.ID, o.ID, model.FlowLock, o.Quantity, now); err != nil {
			return err
		}
		if req.IdempotencyKey != "" {
			bound, err := tx.InsertIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, o.ID, now)
			if err != nil {
				return err
			}
			if !bound {
				// A concurrent create with the same key won: undo ours, return theirs.
				replayed = &model.Order{}
				return errReplayed
			}
		}
		if err := tx.InsertOutbox(ctx, closeRow(o.OrderNo, 1, o.ExpireAt, now)); err != nil {
			return err
		}
		return tx.InsertEvent(ctx, model.Event{ObjectType: "order", ObjectNo: o.OrderNo, FromStatus: "-", ToStatus: o.Status.String(), Reason: "created", CreatedAt: now})
	})
	if err != nil {
		if limited {
			s.undoStockTake(ctx, p, req.Quantity, errors.Is(err, ErrOutOfStock))
		}
		if replayed != nil {
			o, rerr := s.replay(ctx, req)
			return &Created{Order: o, Replay: true}, rerr
		}
		if errors.Is(err, ErrTooManyPending) || errors.Is(err, ErrOutOfStock) {
			return nil, err
		}
		return nil, fmt.Errorf("create order for user %d: %w", req.UserID, err)
	}
	s.relay.Send(ctx, tasks.ID(tasks.TypeOrderClose, o.OrderNo, 1))
	s.log.Info("order created", zap.String("order_no", o.OrderNo), zap.Int64("user_id", o.UserID), zap.Int64("product_id", p.ID), zap.Int("quantity", o.Quantity))
	return &Created{Order: o}, nil
}

var errReplayed = errors.New("idempotency key already bound")

func (s *Service) replay(ctx context.Context, req CreateRequest) (*model.Order, error) {
	since := s.clock.Now().Add(-s.set.IdempotencyTTL)
	id, err := s.store.IdempotentOrderID(ctx, req.UserID, req.IdempotencyKey, since)
	if errors.Is(err, model.ErrNotFound) {
		// An expired binding would block the key forever; drop it.
		return nil, s.store.ExpireIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, since)
	}
	if err != nil {
		return nil, fmt.Errorf("create order: idempotency lookup: %w", err)
	}
	return s.store.OrderByID(ctx, id)
}

// lockStock takes the order's stock in the ledger: card keys UNSOLD/RECYCLED
// → LOCKED, or a limited product's stock column.
func lockStock(ctx context.Context, tx *model.Store, p *model.Product, o *model.Order) error {
	if p.Kind == model.KindCard {
		n, err := tx.LockCards(ctx, p.ID, o.ID, o.Quantity, o.CreatedAt)
		if err != nil {
			return err
		}
		if n != int64(o.Quantity) {
			return ErrOutOfStock
		}
		return nil
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

// takeStock asks the Redis counter, rebuilding it from the database when it
// is missing. Redis being unreachable is not "sold out": the database decides.
func (s *Service) takeStock(ctx context.Context, p *model.Product, qty int) error {
	for range 2 {
		out, err := s.stock.Take(ctx, p.ID, qty)
		if err != nil {
			s.log.Warn("stock counter unavailable; the database decides", zap.Int64("product_id", p.ID), zap.Error(err))
			return nil
		}
		switch out {
		case stock.Taken:
			return nil
		case stock.Short:
			return ErrOutOfStock
		}
		n, err := s.store.SellableStock(ctx, p)
		if err != nil {
			return fmt.Errorf("rebuild stock counter for product %d: %w", p.ID, err)
		}
		if err := s.stock.Init(ctx, p.ID, n); err != nil {
			s.log.Warn("stock counter rebuild failed", zap.Int64("product_id", p.ID), zap.Error(err))
			return nil
		}
	}
	return nil
}

// undoStockTake gives back what Redis handed out for a create that did not
// commit. When the database said "out of stock" the counter was wrong, so it
// is reset from the database instead.
func (s *Service) undoStockTake(ctx context.Context, p *model.Product, qty int, counterWrong bool) {
	ctx = context.WithoutCancel(ctx)
	var err error
	if counterWrong {
		var n int64
		if n, err = s.store.SellableStock(ctx, p); err == nil {
			err = s.stock.Reset(ctx, p.ID, n)
		}
	} else {
		err = s.stock.Put(ctx, p.ID, qty)
	}
	if err != nil {
		s.log.Warn("stock counter not restored; reconciliation will rebuild it", zap.Int64("product_id", p.ID), zap.Error(err))
	}
}
