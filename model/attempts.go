package model

import (
	"context"
	"time"
)

// PaymentAttempt is a payment a buyer started at one provider (the checkout
// call), once per (order, provider). While its order is pending the provider
// is asked about it before the close and by the sweep: a payment whose
// notification was lost is found all the same.
type PaymentAttempt struct {
	ID           int64
	OrderID      int64
	OrderNo      string
	Provider     string
	Ref          string // the provider's id of the payment, when it gives one at creation
	PayURL       string
	QRCode       string `gorm:"column:qr_code"`
	ClientSecret string
	ExpiresAt    time.Time
	CreatedAt    time.Time
}

// InsertPaymentAttempt records a started payment and reports false when the
// order already has one at that provider (the caller reads that one back).
func (s *Store) InsertPaymentAttempt(ctx context.Context, a *PaymentAttempt) (bool, error) {
	return s.insertIgnoringDuplicate(ctx,
		`INSERT INTO payment_attempts (order_id, order_no, provider, ref, pay_url, qr_code, client_secret, expires_at, created_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.OrderID, a.OrderNo, a.Provider, a.Ref, a.PayURL, a.QRCode, a.ClientSecret, a.ExpiresAt, a.CreatedAt)
}

// PaymentAttempt loads an order's started payment at one provider.
func (s *Store) PaymentAttempt(ctx context.Context, orderID int64, provider string) (*PaymentAttempt, error) {
	return rowOf[PaymentAttempt](ctx, s, `SELECT * FROM payment_attempts WHERE order_id = ? AND provider = ?`, orderID, provider)
}

// PaymentAttemptsFor lists an order's started payments, oldest first.
func (s *Store) PaymentAttemptsFor(ctx context.Context, orderID int64) ([]PaymentAttempt, error) {
	return rowsOf[PaymentAttempt](ctx, s, `SELECT * FROM payment_attempts WHERE order_id = ? ORDER BY id`, orderID)
}

// UnnotifiedAttemptsPage is the sweep's page of started payments whose order
// is still pending: started before `startedBefore`, good until after
// `liveAfter` (an attempt long expired has an order closed by now, so the
// walk stays within the live ones), after cur in (expires_at, id) order.
func (s *Store) UnnotifiedAttemptsPage(ctx context.Context, startedBefore, liveAfter time.Time, cur Cursor, limit int) ([]PaymentAttempt, error) {
	return rowsOf[PaymentAttempt](ctx, s, `SELECT a.* FROM payment_attempts a JOIN orders o ON o.id = a.order_id
		WHERE a.expires_at > ? AND a.created_at < ? AND o.status = ?
		AND (a.expires_at > ? OR (a.expires_at = ? AND a.id > ?))
		ORDER BY a.expires_at, a.id LIMIT ?`,
		liveAfter, startedBefore, OrderPending, cur.At, cur.At, cur.ID, limit)
}
