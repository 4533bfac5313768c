package model

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The statements of the close: pending orders closed in one transaction,
// one order or a batch of them. Each order gets its own move with
// closed_at, event and shop event, its pending slot released, its stock
// given back and its close-restore flow; only the statements, round trips
// and the commit are shared.

// OrderClose is one order of a close: its user, and the stock it holds
// (card keys LOCKED for it, or Quantity units of a limited product).
type OrderClose struct {
	ID, UserID, ProductID int64
	No                    string
	Card                  bool
	Quantity              int
}

// CloseOf is o as a close (or a stock release) takes it.
func CloseOf(o *Order) OrderClose {
	return OrderClose{ID: o.ID, UserID: o.UserID, ProductID: o.ProductID, No: o.OrderNo, Card: o.Kind == KindCard, Quantity: o.Quantity}
}

// LockPendingOrders begins a close (one order or a batch): inside a
// transaction it locks the orders among ids that are still pending and
// returns their IDs. An order a payment moved first is not among them; a
// payment that comes later waits for the commit and finds its order closed.
func (s *Store) LockPendingOrders(ctx context.Context, ids []int64) ([]int64, error) {
	args := make([]any, 0, len(ids)+1)
	for _, id := range ids {
		args = append(args, id)
	}
	args = append(args, OrderPending)
	var locked []int64
	err := s.all(ctx, &locked, `SELECT id FROM orders WHERE id IN (`+placeholders(len(ids))+`) AND status = ? ORDER BY id FOR UPDATE`, args...)
	return locked, err
}

// CloseOrdersLater closes orders LockPendingOrders locked in this
// transaction: pending→closed (every one, or the transaction fails with
// ErrUnmet), with their events and shop events, their pending slots
// released, their stock given back and their close-restore flows
// (ReleaseStockLater). On MariaDB it all waits for the COMMIT.
func (s *Store) CloseOrdersLater(ctx context.Context, orders []OrderClose, reason string, at time.Time) error {
	if err := OrderMachine.Check("batch", OrderPending, OrderClosed); err != nil {
		return err
	}
	ids := make([]any, len(orders))
	for i, o := range orders {
		ids[i] = o.ID
	}
	in := `id IN (` + placeholders(len(ids)) + `)`
	if err := s.laterExpectExactly(ctx, fmt.Sprintf("a batch of %d orders pending→closed", len(orders)), int64(len(orders)),
		`UPDATE orders FORCE INDEX (PRIMARY) SET status = ?, updated_at = ?, closed_at = ? WHERE `+in+` AND status = ?`,
		append(append([]any{OrderClosed, at, at}, ids...), OrderPending)...); err != nil {
		return err
	}
	if err := s.later(ctx, `INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at)
		 SELECT ?, order_no, ?, ?, ?, ? FROM orders WHERE `+in+` ORDER BY id`,
		append([]any{"order", OrderPending.String(), OrderClosed.String(), reason, at}, ids...)...); err != nil {
		return err
	}
	for _, o := range orders {
		if err := s.ReleasePendingSlotLater(ctx, o.UserID); err != nil {
			return err
		}
	}
	if err := s.ReleaseStockLater(ctx, orders, FlowCloseRestore, at); err != nil {
		return err
	}
	for _, o := range orders {
		if err := s.orderMovedLater(ctx, o.ID, o.No, OrderMove{From: OrderPending, To: OrderClosed, At: at}); err != nil {
			return err
		}
	}
	return nil
}

// ReleaseStockLater gives the stock of orders back in the ledger (their
// card keys LOCKED→RECYCLED, or their limited products' stock column) and
// records each one's flow of type flow: a close's, or an operator refund's.
// The caller's move of each order in the same transaction makes this run
// once per order; a second flow of the same order and type (unique) fails
// the transaction. On MariaDB it all waits for the next round trip.
func (s *Store) ReleaseStockLater(ctx context.Context, orders []OrderClose, flow FlowKind, at time.Time) error {
	var cardIDs, flowArgs []any
	var flows strings.Builder
	for i, o := range orders {
		if o.Card {
			cardIDs = append(cardIDs, o.ID)
		} else if err := s.ReturnProductStockLater(ctx, o.ProductID, o.Quantity); err != nil {
			return err
		}
		if i > 0 {
			flows.WriteString(", ")
		}
		flows.WriteString("(?, ?, ?, ?, ?)")
		flowArgs = append(flowArgs, o.ProductID, o.ID, flow, o.Quantity, at)
	}
	if len(cardIDs) > 0 {
		if err := s.later(ctx, `UPDATE card_keys SET status = 'RECYCLED', updated_at = ? WHERE order_id IN (`+placeholders(len(cardIDs))+`) AND status = 'LOCKED'`,
			append([]any{at}, cardIDs...)...); err != nil {
			return err
		}
	}
	return s.later(ctx, `INSERT INTO stock_flows (product_id, order_id, flow_type, quantity, created_at) VALUES `+flows.String(), flowArgs...)
}

// OrdersWithAttempts returns which of the orders ids had a payment started
// at a provider (one statement).
func (s *Store) OrdersWithAttempts(ctx context.Context, ids []int64) (map[int64]bool, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	var with []int64
	if err := s.all(ctx, &with, `SELECT DISTINCT order_id FROM payment_attempts WHERE order_id IN (`+placeholders(len(ids))+`)`, args...); err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(with))
	for _, id := range with {
		out[id] = true
	}
	return out, nil
}
