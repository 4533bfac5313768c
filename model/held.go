package model

import (
	"context"
	"time"
)

// HeldPayment is a payment notified for an order with a trade number the
// ledger already records for another order. It is held for an operator:
// never delivered, never refunded automatically (refunding the trade again
// could return the other order's money).
type HeldPayment struct {
	ID          int64
	Provider    string
	TradeNo     string
	OrderID     int64
	OrderNo     string
	AmountCents int64
	PaidOrderID int64 // the order the trade's recorded payment belongs to
	PaidOrderNo string
	CreatedAt   time.Time
}

// InsertHeldPayment records a held payment once per (trade, order) and
// reports false when it already was.
func (s *Store) InsertHeldPayment(ctx context.Context, h *HeldPayment) (bool, error) {
	return s.insertIgnoringDuplicate(ctx,
		`INSERT INTO held_payments (provider, trade_no, order_id, order_no, amount_cents, paid_order_id, paid_order_no, created_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		h.Provider, h.TradeNo, h.OrderID, h.OrderNo, h.AmountCents, h.PaidOrderID, h.PaidOrderNo, h.CreatedAt)
}

// HeldPaymentsForOrder lists the payments held against an order, oldest first.
func (s *Store) HeldPaymentsForOrder(ctx context.Context, orderID int64) ([]HeldPayment, error) {
	return rowsOf[HeldPayment](ctx, s, `SELECT * FROM held_payments WHERE order_id = ? ORDER BY id`, orderID)
}

// CountHeldPayments returns how many payments are held for an operator.
func (s *Store) CountHeldPayments(ctx context.Context) (int64, error) {
	return valueOf[int64](ctx, s, `SELECT COUNT(*) FROM held_payments`)
}
