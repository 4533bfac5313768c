package model

import (
	"context"
	"time"
)

// The reads and marks a statement run matches one page of provider lines
// with: each is one query for the whole page, by the keys the lines name.

// PaymentsByTrades loads a provider's payments by trade number.
func (s *Store) PaymentsByTrades(ctx context.Context, provider string, tradeNos []string) ([]Payment, error) {
	return rowsIn[Payment](ctx, s, tradeNos, `SELECT * FROM payments WHERE provider = ? AND trade_no IN ?`, provider, tradeNos)
}

// RefundsByNos loads a provider's refunds by the numbers orderflow sent
// them under (the current refund_no or the one it was opened under).
func (s *Store) RefundsByNos(ctx context.Context, provider string, nos []string) ([]Refund, error) {
	return rowsIn[Refund](ctx, s, nos, `SELECT * FROM refunds WHERE provider = ? AND (refund_no IN ? OR base_no IN ?)`, provider, nos, nos)
}

// RefundsByProviderRefs loads the refunds recorded from a provider's own
// ids (refunds made outside orderflow).
func (s *Store) RefundsByProviderRefs(ctx context.Context, provider string, refs []string) ([]Refund, error) {
	return rowsIn[Refund](ctx, s, refs, `SELECT * FROM refunds WHERE provider = ? AND provider_ref IN ?`, provider, refs)
}

// DisputesByIDs loads a provider's disputes by the provider's ids.
func (s *Store) DisputesByIDs(ctx context.Context, provider string, ids []string) ([]Dispute, error) {
	return rowsIn[Dispute](ctx, s, ids, `SELECT * FROM disputes WHERE provider = ? AND dispute_id IN ?`, provider, ids)
}

// Stated tables: what MarkStated marks.
const (
	StatedPayments = "payments"
	StatedRefunds  = "refunds"
	StatedDisputes = "disputes"
)

// MarkStated records that the statement of day lists the rows ids of
// table (Stated*), one UPDATE for the page.
func (s *Store) MarkStated(ctx context.Context, table string, ids []int64, day string) error {
	if len(ids) == 0 {
		return nil
	}
	switch table {
	case StatedPayments, StatedRefunds, StatedDisputes:
	default:
		panic("model: MarkStated of table " + table)
	}
	_, err := s.exec(ctx, `UPDATE `+table+` SET stated_on = ? WHERE id IN ?`, day, ids)
	return err
}

// UnstatedPayments lists a provider's payments of [from, to) (the
// provider's time) that no statement has listed, in id order after afterID.
func (s *Store) UnstatedPayments(ctx context.Context, provider string, from, to time.Time, afterID int64, limit int) ([]Payment, error) {
	return rowsOf[Payment](ctx, s, `SELECT * FROM payments WHERE provider = ? AND paid_at >= ? AND paid_at < ? AND stated_on IS NULL AND id > ?
		ORDER BY id LIMIT ?`, provider, from, to, afterID, limit)
}

// UnstatedRefunds lists a provider's refunds that succeeded in [from, to)
// and that no statement has listed, in id order after afterID.
func (s *Store) UnstatedRefunds(ctx context.Context, provider string, from, to time.Time, afterID int64, limit int) ([]Refund, error) {
	return rowsOf[Refund](ctx, s, `SELECT * FROM refunds WHERE provider = ? AND status = ? AND succeeded_at >= ? AND succeeded_at < ?
		AND stated_on IS NULL AND id > ? ORDER BY id LIMIT ?`, provider, RefundSucceeded, from, to, afterID, limit)
}

// InsertProviderRefund records, once per provider id, a refund the
// provider made outside orderflow (its dashboard), as succeeded at the
// provider's time; false when it was recorded already. The caller counts
// it against the order's payment in the same transaction.
func (s *Store) InsertProviderRefund(ctx context.Context, r *Refund) (bool, error) {
	fresh, err := s.insertIgnoringDuplicate(ctx,
		`INSERT INTO refunds (refund_no, base_no, no_gen, order_id, order_no, provider, trade_no, amount_cents, trade_cents, reason, note,
		 status, provider_status, provider_ref, stated_on, created_at, updated_at, succeeded_at)
		 VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.RefundNo, r.BaseNo, r.OrderID, r.OrderNo, r.Provider, r.TradeNo, r.AmountCents, r.TradeCents, r.Reason, r.Note,
		RefundSucceeded, r.ProviderStatus, r.ProviderRef, r.StatedOn, r.CreatedAt, r.UpdatedAt, r.SucceededAt)
	if fresh {
		s.staleAfterCommit(ctx, r.OrderID, r.OrderNo)
	}
	return fresh, err
}
