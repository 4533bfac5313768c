package model

import (
	"context"
	"time"
)

// ClaimEffect records that an order's delivery effect is being applied and
// reports false when it already was. Run it in the same transaction as the
// effect: the primary key (order_id, effect) is what makes the effect once-only.
func (s *Store) ClaimEffect(ctx context.Context, orderID int64, effect, detail string, at time.Time) (bool, error) {
	return s.insertIgnoringDuplicate(ctx, claimEffect, orderID, effect, detail, at)
}

const claimEffect = `INSERT INTO order_effects (order_id, effect, detail, created_at) VALUES (?, ?, ?, ?)`

// InsertStockFlowLater records a stock movement that cannot have been
// recorded before — the lock of an order being created, the sale inside the
// transaction that claims the order's effect, the restore inside the one
// that closes it — so, inside a transaction, it waits for the next
// statement's round trip (a flow is unique per order and type: a second
// one fails the transaction).
func (s *Store) InsertStockFlowLater(ctx context.Context, productID, orderID int64, flowType FlowKind, qty int, at time.Time) error {
	return s.later(ctx, insertStockFlow, productID, orderID, flowType, qty, at)
}

const insertStockFlow = `INSERT INTO stock_flows (product_id, order_id, flow_type, quantity, created_at) VALUES (?, ?, ?, ?, ?)`

// Payment is one payment notification from a provider, once per
// (provider, trade): each provider numbers its own trades.
type Payment struct {
	ID          int64
	Provider    string
	TradeNo     string
	OrderID     int64
	AmountCents int64
	Disposition Disposition
	CreatedAt   time.Time
	// PaidAt is the provider's own time of the payment (CreatedAt when it
	// gave none): the statement day the payment belongs to.
	PaidAt time.Time
	// StatedOn is the statement day (YYYY-MM-DD) that last listed the
	// payment; nil until a statement run finds it.
	StatedOn *string
}

const insertPayment = `INSERT INTO payments (provider, trade_no, order_id, amount_cents, disposition, created_at, paid_at) VALUES (?, ?, ?, ?, ?, ?, ?)`

// InsertPayment records a payment and reports false if the trade was already recorded.
func (s *Store) InsertPayment(ctx context.Context, p *Payment) (bool, error) {
	return s.insertIgnoringDuplicate(ctx, insertPayment, p.Provider, p.TradeNo, p.OrderID, p.AmountCents, p.Disposition, p.CreatedAt, paidAt(p))
}

// InsertPaymentLater records a payment expected to be new: inside a MySQL
// transaction it waits for the next round trip, and a trade already
// recorded fails the transaction with a unique-key violation (IsDuplicate)
// instead of answering — for callers with a careful path to fall back on.
func (s *Store) InsertPaymentLater(ctx context.Context, p *Payment) error {
	return s.later(ctx, insertPayment, p.Provider, p.TradeNo, p.OrderID, p.AmountCents, p.Disposition, p.CreatedAt, paidAt(p))
}

// SetPaymentDisposition records what a payment turned out to be.
func (s *Store) SetPaymentDisposition(ctx context.Context, provider, tradeNo string, disposition Disposition) error {
	_, err := s.exec(ctx, `UPDATE payments SET disposition = ? WHERE provider = ? AND trade_no = ?`, disposition, provider, tradeNo)
	return err
}

// PaymentsForOrder lists an order's payments.
func (s *Store) PaymentsForOrder(ctx context.Context, orderID int64) ([]Payment, error) {
	return rowsOf[Payment](ctx, s, `SELECT * FROM payments WHERE order_id = ? ORDER BY id`, orderID)
}

// HasStockFlow reports whether an order has a stock-flow row of a type.
func (s *Store) HasStockFlow(ctx context.Context, orderID int64, flowType FlowKind) (bool, error) {
	var n int64
	err := s.first(ctx, &n, `SELECT COUNT(*) FROM stock_flows WHERE order_id = ? AND flow_type = ?`, orderID, flowType)
	return n > 0, err
}

// HasEffect reports whether an order's delivery effect was applied.
func (s *Store) HasEffect(ctx context.Context, orderID int64) (bool, error) {
	var n int64
	err := s.first(ctx, &n, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, orderID)
	return n > 0, err
}

// PaymentByTrade loads one payment by its provider's trade number.
func (s *Store) PaymentByTrade(ctx context.Context, provider, tradeNo string) (*Payment, error) {
	return rowOf[Payment](ctx, s, `SELECT * FROM payments WHERE provider = ? AND trade_no = ?`, provider, tradeNo)
}

// paidAt is the time a payment row is filed under: the provider's, else ours.
func paidAt(p *Payment) time.Time {
	if p.PaidAt.IsZero() {
		return p.CreatedAt
	}
	return p.PaidAt
}
