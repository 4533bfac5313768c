package model

import (
	"context"
	"strings"
	"time"
)

// The operator console's reads: each one a LIMITed walk of an index, so a
// page costs the same with a hundred orders in the ledger or a million.

// NotePrefix starts the reason of an event that records what an operator
// did without moving the object (from = to): a note in the history, which
// the audit accepts as no move.
const NotePrefix = "note: "

// IsNote reports whether an event is a note rather than a status move.
func IsNote(from, to, reason string) bool {
	return from == to && strings.HasPrefix(reason, NotePrefix)
}

// InsertNote writes a note to an object's history, now (not held).
func (s *Store) InsertNote(ctx context.Context, objectType, objectNo, status, text string, at time.Time) error {
	_, err := s.exec(ctx, `INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		objectType, objectNo, status, status, NotePrefix+text, at)
	return err
}

// OrdersInStatusLatest lists the orders of one status most recently moved
// first (idx_orders_status_updated).
func (s *Store) OrdersInStatusLatest(ctx context.Context, status OrderStatus, limit int) ([]Order, error) {
	return rowsOf[Order](ctx, s, `SELECT * FROM orders WHERE status = ? ORDER BY updated_at DESC LIMIT ?`, status, limit)
}

// RefundsInStatusLatest lists the refunds of one status most recently moved
// first (idx_refunds_status_updated).
func (s *Store) RefundsInStatusLatest(ctx context.Context, status RefundStatus, limit int) ([]Refund, error) {
	return rowsOf[Refund](ctx, s, `SELECT * FROM refunds WHERE status = ? ORDER BY updated_at DESC LIMIT ?`, status, limit)
}

// GroupsInStatus lists the groups of one status by deadline, latest first
// (idx_groups_status_deadline).
func (s *Store) GroupsInStatus(ctx context.Context, status GroupStatus, limit int) ([]Group, error) {
	return rowsOf[Group](ctx, s, "SELECT * FROM `groups` WHERE status = ? ORDER BY deadline DESC LIMIT ?", status, limit)
}

// FailingNotifications lists undelivered notifications whose delivery has
// failed at least once, oldest first (idx_notifications_delivered).
func (s *Store) FailingNotifications(ctx context.Context, limit int) ([]Notification, error) {
	return rowsOf[Notification](ctx, s, `SELECT * FROM notifications WHERE delivered_at IS NULL AND attempts > 0 ORDER BY id LIMIT ?`, limit)
}

// LatestHeldPayments lists held payments, newest first.
func (s *Store) LatestHeldPayments(ctx context.Context, limit int) ([]HeldPayment, error) {
	return rowsOf[HeldPayment](ctx, s, `SELECT * FROM held_payments ORDER BY id DESC LIMIT ?`, limit)
}

// LastEvents returns the newest event of each of some objects of one type
// (idx_events_object), by object number.
func (s *Store) LastEvents(ctx context.Context, objectType string, nos []string) (map[string]Event, error) {
	out := map[string]Event{}
	if len(nos) == 0 {
		return out, nil
	}
	var rows []Event
	if err := s.all(ctx, &rows, `SELECT * FROM events WHERE object_type = ? AND object_no IN ? ORDER BY id`, objectType, nos); err != nil {
		return nil, err
	}
	for _, e := range rows {
		out[e.ObjectNo] = e
	}
	return out, nil
}

// Activation is one order's paid and finished times.
type Activation struct {
	PaidAt     time.Time
	FinishedAt time.Time
}

// ActivationsSince lists the paid and finished times of orders finished
// since a time, at most limit of them (idx_orders_status_updated: a finished
// order's updated_at is at or after its finished_at).
func (s *Store) ActivationsSince(ctx context.Context, since time.Time, limit int) ([]Activation, error) {
	return rowsOf[Activation](ctx, s, `SELECT paid_at, finished_at FROM orders WHERE status = ? AND updated_at >= ? AND finished_at >= ? AND paid_at IS NOT NULL LIMIT ?`,
		OrderFinished, since, since, limit)
}
