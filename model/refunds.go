package model

import (
	"context"
	"time"
)

// Refund reasons: why the money goes back.
const (
	RefundReasonLate      = "late"      // paid after the order closed
	RefundReasonDuplicate = "duplicate" // a second trade for one order
	RefundReasonMismatch  = "mismatch"  // wrong amount
	// RefundReasonOperator: an operator returned the order's own payment,
	// whole (a failed order) or in part; it counts in orders.refunded_cents.
	RefundReasonOperator = "operator"
	// RefundReasonProvider: a refund made at the provider outside orderflow
	// (its dashboard), recorded when a statement listed it; it counts in
	// orders.refunded_cents as an operator's does.
	RefundReasonProvider = "provider"
)

// OfPayment reports whether a refund returns (part of) its order's own
// payment — counted in orders.refunded_cents — rather than a whole trade
// that never paid the order (late, duplicate, mismatch).
func (r *Refund) OfPayment() bool { return OfPayment(r.Reason) }

// OfPayment is Refund.OfPayment by reason.
func OfPayment(reason string) bool {
	return reason == RefundReasonOperator || reason == RefundReasonProvider
}

// Refund returns one payment's money.
type Refund struct {
	ID             int64
	RefundNo       string
	BaseNo         string
	NoGen          int
	OrderID        int64
	OrderNo        string
	Provider       string // the provider that took the money, and gives it back
	TradeNo        string
	AmountCents    int64
	TradeCents     int64 // the whole payment this refund is part of; 0: AmountCents
	Reason         string
	Note           string // the operator's words (an operator refund's reason)
	Status         RefundStatus
	Attempts       int
	TaskGen        int
	LastError      string
	ProviderStatus string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	SucceededAt    *time.Time
	StatedOn       *string // the statement day that last listed it (statements.go)
	// ProviderRef is the provider's id of a refund made outside orderflow
	// (its dashboard), recorded when a statement listed it; nil otherwise.
	ProviderRef *string
}

// InsertRefund records a refund once per base number (deterministic from
// what the refund is for) and reports false when it already exists. A new
// refund changes its order's view.
func (s *Store) InsertRefund(ctx context.Context, r *Refund) (bool, error) {
	fresh, err := s.insertIgnoringDuplicate(ctx,
		`INSERT INTO refunds (refund_no, base_no, no_gen, order_id, order_no, provider, trade_no, amount_cents, trade_cents, reason, note, status, created_at, updated_at)
		 VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.RefundNo, r.BaseNo, r.OrderID, r.OrderNo, r.Provider, r.TradeNo, r.AmountCents, r.TradeCents, r.Reason, r.Note, r.Status, r.CreatedAt, r.UpdatedAt)
	if fresh {
		s.staleAfterCommit(ctx, r.OrderID, r.OrderNo)
	}
	return fresh, err
}

// RefundByNo loads a refund by its current refund_no.
func (s *Store) RefundByNo(ctx context.Context, refundNo string) (*Refund, error) {
	return rowOf[Refund](ctx, s, `SELECT * FROM refunds WHERE refund_no = ?`, refundNo)
}

// RefundByBaseNo loads a refund by the number it was opened under (its
// refund_no until an operator's retry gave it another).
func (s *Store) RefundByBaseNo(ctx context.Context, baseNo string) (*Refund, error) {
	return rowOf[Refund](ctx, s, `SELECT * FROM refunds WHERE base_no = ?`, baseNo)
}

// AddRefunded counts amount against order id's payment, in the refund's
// transaction: false, with nothing written, when the order's refunds would
// then add up to more than it was paid. The condition is in the UPDATE, so
// of two refunds at once the second re-reads the first's sum (InnoDB's
// locking read; on Galera the certification conflict re-runs it) and fails.
func (s *Store) AddRefunded(ctx context.Context, id, amount int64) (bool, error) {
	n, err := s.exec(ctx, `UPDATE orders SET refunded_cents = refunded_cents + ? WHERE id = ? AND refunded_cents + ? <= amount_cents`,
		amount, id, amount)
	return n == 1, err
}

// RefundsForOrder lists an order's refunds.
func (s *Store) RefundsForOrder(ctx context.Context, orderID int64) ([]Refund, error) {
	return rowsOf[Refund](ctx, s, `SELECT * FROM refunds WHERE order_id = ? ORDER BY id`, orderID)
}

// ListRefunds pages refunds, newest first, optionally of one status.
func (s *Store) ListRefunds(ctx context.Context, status RefundStatus, limit int) ([]Refund, error) {
	if status == "" {
		return rowsOf[Refund](ctx, s, `SELECT * FROM refunds ORDER BY id DESC LIMIT ?`, limit)
	}
	return rowsOf[Refund](ctx, s, `SELECT * FROM refunds WHERE status = ? ORDER BY id DESC LIMIT ?`, status, limit)
}

// CountRefundsByStatus returns the number of refunds per status.
func (s *Store) CountRefundsByStatus(ctx context.Context) (map[RefundStatus]int64, error) {
	return countsBy[RefundStatus](ctx, s, `SELECT status AS counted, COUNT(*) AS n FROM refunds GROUP BY status`)
}

// UnfinishedRefunds counts an order's refunds that have not succeeded.
func (s *Store) UnfinishedRefunds(ctx context.Context, orderID int64) (int64, error) {
	return valueOf[int64](ctx, s, `SELECT COUNT(*) FROM refunds WHERE order_id = ? AND status <> ?`, orderID, RefundSucceeded)
}

// RefundMove is one conditional status change of a refund.
type RefundMove struct {
	From, To RefundStatus
	Reason   string
	At       time.Time
	Set      map[string]any
	// NextTaskGen, when set, writes task_gen = NextTaskGen and requires task_gen = NextTaskGen-1.
	NextTaskGen int
}

// MoveRefund applies m to refund r (as read) with one UPDATE naming the
// status it leaves and the number r was read under; false means someone
// else moved it first, or an operator's retry gave it a new number (a move
// decided on what the provider said about one number must not land on the
// next generation). A move changes r's order's view.
//
// The history stays under the base number, so one refund's story holds
// every generation (the console, the audit's replay and the backlog read it
// there); the shop webhook names the number the refund has after the move,
// the one the admin API finds it by.
func (s *Store) MoveRefund(ctx context.Context, r *Refund, m RefundMove) (bool, error) {
	if err := RefundMachine.Check(r.RefundNo, m.From, m.To); err != nil {
		return false, err
	}
	u := newStatusUpdate("refunds", m.To, m.At, m.Set)
	u.from(r.ID, "status = ?", m.From)
	u.and("refund_no = ?", r.RefundNo)
	if m.NextTaskGen > 0 {
		u.assign("task_gen = ?", m.NextTaskGen)
		u.and("task_gen = ?", m.NextTaskGen-1)
	}
	q, args := u.sql()
	n, err := s.exec(ctx, q, args...)
	if err != nil || n == 0 {
		return false, err
	}
	current := r.RefundNo
	if no, ok := m.Set["refund_no"].(string); ok {
		current = no
	}
	s.staleAfterCommit(ctx, r.OrderID, r.OrderNo)
	if err := s.webhookForMoveLater(ctx, "refund", m.From.String(), m.To.String(), m.At, map[string]any{
		"refund_no": current, "order_no": r.OrderNo, "amount_cents": r.AmountCents, "reason": r.Reason,
	}); err != nil {
		return false, err
	}
	return true, s.InsertEventLater(ctx, Event{ObjectType: "refund", ObjectNo: r.BaseNo, FromStatus: m.From.String(), ToStatus: m.To.String(), Reason: m.Reason, CreatedAt: m.At})
}

// CountRefundAttempt records one provider call for a refund still processing.
func (s *Store) CountRefundAttempt(ctx context.Context, id int64, at time.Time) (int, error) {
	if _, err := s.exec(ctx, `UPDATE refunds SET attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = ?`, at, id, RefundProcessing); err != nil {
		return 0, err
	}
	return valueOf[int](ctx, s, `SELECT attempts FROM refunds WHERE id = ?`, id)
}

// ProviderNote is what an execute run learned from the provider about one
// refund number: its status, or the error of the call.
type ProviderNote struct {
	ID       int64
	RefundNo string       // the out_request_no the run asked about
	From     RefundStatus // the refund status the run read (processing)
	Status   string       // the provider's status; "" after an error
	LastErr  string
	At       time.Time
}

// NoteRefundProvider records the provider's last answer (or error) on a
// refund, only while it is still in n.From under n.RefundNo: a callback may
// have moved it to manual with provider status failed meanwhile, or an
// operator's retry given it a new number, and a stale "processing" written
// over that would make the retry reuse a number the provider failed. false
// means the refund moved on and nothing was written.
func (s *Store) NoteRefundProvider(ctx context.Context, n ProviderNote) (bool, error) {
	rows, err := s.exec(ctx, `UPDATE refunds SET provider_status = ?, last_error = ?, updated_at = ? WHERE id = ? AND status = ? AND refund_no = ?`,
		n.Status, clip(n.LastErr, 255), n.At, n.ID, n.From, n.RefundNo)
	return rows == 1, err
}

// RequeueRefund gives a processing refund whose task was lost a new task generation.
func (s *Store) RequeueRefund(ctx context.Context, id int64, nextGen int, at time.Time) (bool, error) {
	n, err := s.exec(ctx, `UPDATE refunds SET task_gen = ?, updated_at = ? WHERE id = ? AND status = ? AND task_gen = ?`,
		nextGen, at, id, RefundProcessing, nextGen-1)
	return n == 1, err
}
