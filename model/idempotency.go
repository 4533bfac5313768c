package model

import (
	"context"
	"time"
)

// IdempotencyKey is a buyer's Idempotency-Key: reserved by the create that
// first used it (OrderID 0 while that create runs), then bound to its order.
type IdempotencyKey struct {
	UserID int64
	Key    string `gorm:"column:idem_key"`
	// RequestHash is the fingerprint of the create that reserved the key
	// ('' for keys reserved before fingerprints were kept: they match any).
	RequestHash string
	OrderID     int64
	CreatedAt   time.Time
}

// ReserveIdempotencyKey reserves a buyer's key for a create with the given
// fingerprint; false means the key is already taken.
func (s *Store) ReserveIdempotencyKey(ctx context.Context, userID int64, key, requestHash string, at time.Time) (bool, error) {
	return s.insertIgnoringDuplicate(ctx,
		`INSERT INTO idempotency_keys (user_id, idem_key, request_hash, order_id, created_at) VALUES (?, ?, ?, 0, ?)`,
		userID, key, requestHash, at)
}

// IdempotencyKeyFor returns a buyer's key reserved at or after since, or
// ErrNotFound.
func (s *Store) IdempotencyKeyFor(ctx context.Context, userID int64, key string, since time.Time) (*IdempotencyKey, error) {
	return rowOf[IdempotencyKey](ctx, s, `SELECT * FROM idempotency_keys WHERE user_id = ? AND idem_key = ? AND created_at >= ?`, userID, key, since)
}

// BindIdempotencyKey points a reserved key at its order.
func (s *Store) BindIdempotencyKey(ctx context.Context, userID int64, key string, orderID int64) error {
	_, err := s.exec(ctx, `UPDATE idempotency_keys SET order_id = ? WHERE user_id = ? AND idem_key = ? AND order_id = 0`, orderID, userID, key)
	return err
}

// ReleaseIdempotencyKey drops a reservation whose create failed, so a retry can run.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, userID int64, key string) error {
	_, err := s.exec(ctx, `DELETE FROM idempotency_keys WHERE user_id = ? AND idem_key = ? AND order_id = 0`, userID, key)
	return err
}

// ExpireIdempotencyKey drops a key older than since so it can be bound again.
func (s *Store) ExpireIdempotencyKey(ctx context.Context, userID int64, key string, since time.Time) error {
	_, err := s.exec(ctx, `DELETE FROM idempotency_keys WHERE user_id = ? AND idem_key = ? AND created_at < ?`, userID, key, since)
	return err
}
