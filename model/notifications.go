package model

import (
	"context"
	"time"
)

// Notification is a message for a shop owner or the admin, kept until acknowledged.
type Notification struct {
	ID          int64
	NotifyID    string
	Kind        string
	Subject     string
	Recipient   string
	Message     string
	Attempts    int
	LastError   string
	CreatedAt   time.Time
	DeliveredAt *time.Time
	LeaseUntil  *time.Time
}

// InsertNotification records a notification once per NotifyID.
func (s *Store) InsertNotification(ctx context.Context, n *Notification) error {
	_, err := s.insertIgnoringDuplicate(ctx,
		`INSERT INTO notifications (notify_id, kind, subject, recipient, message, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		n.NotifyID, n.Kind, n.Subject, n.Recipient, n.Message, n.CreatedAt)
	return err
}

// NotificationsByKind lists notifications of one kind, oldest first.
func (s *Store) NotificationsByKind(ctx context.Context, kind string) ([]Notification, error) {
	return rowsOf[Notification](ctx, s, `SELECT * FROM notifications WHERE kind = ? ORDER BY id`, kind)
}

// CountUndelivered returns how many notifications wait for delivery.
func (s *Store) CountUndelivered(ctx context.Context) (int64, error) {
	return valueOf[int64](ctx, s, `SELECT COUNT(*) FROM notifications WHERE delivered_at IS NULL`)
}

// UndeliveredNotifications lists notifications not yet acknowledged, oldest first.
func (s *Store) UndeliveredNotifications(ctx context.Context, limit int) ([]Notification, error) {
	return rowsOf[Notification](ctx, s, `SELECT * FROM notifications WHERE delivered_at IS NULL ORDER BY id LIMIT ?`, limit)
}

// LeaseNotification claims a pending notification for one delivery until
// `until`; false means it was delivered or another round holds it.
func (s *Store) LeaseNotification(ctx context.Context, id int64, now, until time.Time) (bool, error) {
	return s.leaseDelivery(ctx, "notifications", id, now, until)
}

// MarkNotificationDelivered records the webhook's acknowledgement once.
func (s *Store) MarkNotificationDelivered(ctx context.Context, id int64, at time.Time) error {
	_, err := s.exec(ctx, `UPDATE notifications SET delivered_at = ?, lease_until = NULL, attempts = attempts + 1 WHERE id = ? AND delivered_at IS NULL`, at, id)
	return err
}

// NoteNotificationFailure records a failed delivery and drops the lease;
// the row stays pending for the next round.
func (s *Store) NoteNotificationFailure(ctx context.Context, id int64, why string) error {
	_, err := s.exec(ctx, `UPDATE notifications SET attempts = attempts + 1, last_error = ?, lease_until = NULL WHERE id = ? AND delivered_at IS NULL`, clip(why, 255), id)
	return err
}
