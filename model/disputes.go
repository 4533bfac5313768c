package model

import (
	"context"
	"time"
)

// Dispute flags: what made a dispute suspect when it opened.
const (
	DisputeFlagNotDelivered    = "not_delivered"    // the order never finished: nothing was delivered
	DisputeFlagAlreadyRefunded = "already_refunded" // a refund of the trade existed: the money may go back twice
)

// Dispute is a card dispute (chargeback) the provider told us about, on
// one recorded payment.
type Dispute struct {
	ID            int64
	DisputeID     string // the provider's id (Stripe du_…)
	Provider      string
	TradeNo       string
	OrderID       int64
	OrderNo       string
	Status        DisputeStatus
	Reason        string
	AmountCents   int64
	LostCents     int64 // the money taken back: amount_cents once lost, else 0
	Flag          string
	EvidenceDueBy *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ClosedAt      *time.Time
	StatedOn      *string // the statement day that last listed it (statements.go)
}

// Open reports whether the dispute still waits for its outcome.
func (d *Dispute) Open() bool { return d.ClosedAt == nil }

// InsertDispute records a dispute once per dispute_id and reports false
// when it is already there. A new dispute sends order.disputed, in the
// caller's transaction, and changes its order's view.
func (s *Store) InsertDispute(ctx context.Context, d *Dispute) (bool, error) {
	var closedAt *time.Time
	if DisputeMachine.Terminal(d.Status) {
		closedAt = &d.UpdatedAt
	}
	var lost int64
	if d.Status == DisputeLost {
		lost = d.AmountCents
	}
	fresh, err := s.insertIgnoringDuplicate(ctx,
		`INSERT INTO disputes (dispute_id, provider, trade_no, order_id, order_no, status, reason, amount_cents, lost_cents, flag,
		 evidence_due_by, created_at, updated_at, closed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.DisputeID, d.Provider, d.TradeNo, d.OrderID, d.OrderNo, d.Status, d.Reason, d.AmountCents, lost, d.Flag,
		d.EvidenceDueBy, d.CreatedAt, d.UpdatedAt, closedAt)
	if err != nil || !fresh {
		return false, err
	}
	s.staleAfterCommit(ctx, d.OrderID, d.OrderNo)
	return true, s.webhookForNewLater(ctx, "dispute", "opened", d.CreatedAt, map[string]any{
		"order_no": d.OrderNo, "dispute_id": d.DisputeID, "status": d.Status, "reason": d.Reason,
		"amount_cents": d.AmountCents, "flag": d.Flag,
	})
}

// DisputeByID loads a dispute by the provider's id.
func (s *Store) DisputeByID(ctx context.Context, disputeID string) (*Dispute, error) {
	return rowOf[Dispute](ctx, s, `SELECT * FROM disputes WHERE dispute_id = ?`, disputeID)
}

// DisputeMove is one conditional status change of a dispute, as its
// provider reported it.
type DisputeMove struct {
	From, To      DisputeStatus
	Reason        string
	EvidenceDueBy *time.Time
	At            time.Time
}

// MoveDispute applies m to d with one UPDATE naming the status it leaves;
// false means another delivery of the same event moved it first. A move
// into a terminal status closes it; into lost it records the money taken
// back. A move changes d's order's view.
func (s *Store) MoveDispute(ctx context.Context, d *Dispute, m DisputeMove) (bool, error) {
	if err := DisputeMachine.Check(d.DisputeID, m.From, m.To); err != nil {
		return false, err
	}
	u := newStatusUpdate("disputes", m.To, m.At, map[string]any{"reason": m.Reason})
	if m.EvidenceDueBy != nil {
		u.assign("evidence_due_by = ?", *m.EvidenceDueBy)
	}
	if DisputeMachine.Terminal(m.To) {
		u.assign("closed_at = ?", m.At)
	}
	if m.To == DisputeLost {
		u.assign("lost_cents = amount_cents")
	}
	u.from(d.ID, "status = ?", m.From)
	q, args := u.sql()
	n, err := s.exec(ctx, q, args...)
	if err != nil || n == 0 {
		return false, err
	}
	s.staleAfterCommit(ctx, d.OrderID, d.OrderNo)
	return true, nil
}

// DisputesForOrder lists an order's disputes, oldest first.
func (s *Store) DisputesForOrder(ctx context.Context, orderID int64) ([]Dispute, error) {
	return rowsOf[Dispute](ctx, s, `SELECT * FROM disputes WHERE order_id = ? ORDER BY id`, orderID)
}

// OpenDisputesLatest lists the disputes not closed yet, newest first.
func (s *Store) OpenDisputesLatest(ctx context.Context, limit int) ([]Dispute, error) {
	return rowsOf[Dispute](ctx, s, `SELECT * FROM disputes WHERE closed_at IS NULL ORDER BY id DESC LIMIT ?`, limit)
}

// TradeHasRefund reports whether a refund of the trade was ever asked for
// (in any status): a dispute on it may take the money back a second time.
func (s *Store) TradeHasRefund(ctx context.Context, orderID int64, provider, tradeNo string) (bool, error) {
	var n int64
	err := s.first(ctx, &n, `SELECT COUNT(*) FROM refunds WHERE order_id = ? AND provider = ? AND trade_no = ?`, orderID, provider, tradeNo)
	return n > 0, err
}
