package model

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// User is a buyer (or group owner) with a wallet and a subscription.
type User struct {
	ID                    int64
	Name                  string
	TokenHash             string
	BalanceCents          int64
	SubscriptionExpiresAt *time.Time
	PendingOrders         int
	CreatedAt             time.Time
}

// InsertUser creates a user and its opening wallet entry, returning the ID.
func (s *Store) InsertUser(ctx context.Context, u *User) error {
	return s.InTx(ctx, func(tx *Store) error {
		id, err := tx.insert(ctx,
			`INSERT INTO users (name, token_hash, balance_cents, created_at) VALUES (?, ?, ?, ?)`,
			u.Name, u.TokenHash, u.BalanceCents, u.CreatedAt)
		if err != nil {
			return err
		}
		u.ID = id
		_, err = tx.exec(ctx, `INSERT INTO wallet_entries (user_id, kind, ref, amount_cents, created_at) VALUES (?, 'initial', ?, ?, ?)`,
			u.ID, "user:"+strconv.FormatInt(u.ID, 10)+":initial", u.BalanceCents, u.CreatedAt)
		return err
	})
}

// UserByID loads one user.
func (s *Store) UserByID(ctx context.Context, id int64) (*User, error) {
	return rowOf[User](ctx, s, `SELECT * FROM users WHERE id = ?`, id)
}

// UserByTokenHash finds the user a bearer token belongs to.
func (s *Store) UserByTokenHash(ctx context.Context, hash string) (*User, error) {
	return rowOf[User](ctx, s, `SELECT * FROM users WHERE token_hash = ?`, hash)
}

// TakePendingSlot counts one more pending order for the buyer if that keeps
// them at or under max; false means the cap is reached.
func (s *Store) TakePendingSlot(ctx context.Context, userID int64, max int) (bool, error) {
	n, err := s.exec(ctx, takePendingSlot, userID, max)
	return n == 1, err
}

const takePendingSlot = `UPDATE users SET pending_orders = pending_orders + 1 WHERE id = ? AND pending_orders < ?`

// ReleasePendingSlotLater gives a pending-order slot back when an order
// leaves pending. Its result is never needed, so inside a transaction it
// waits for the next statement's round trip.
func (s *Store) ReleasePendingSlotLater(ctx context.Context, userID int64) error {
	return s.later(ctx, `UPDATE users SET pending_orders = pending_orders - 1 WHERE id = ? AND pending_orders > 0`, userID)
}

// CreditWallet adds amount (1..MaxBalanceCents) to the user's balance once
// per ref. It reports false when the ref was already applied. A credit that
// would take the balance past MaxBalanceCents is refused (ErrWalletFull) by the
// UPDATE's own condition, so the addition in SQL cannot overflow either;
// the caller's transaction rolls the entry back with it.
func (s *Store) CreditWallet(ctx context.Context, userID int64, kind, ref string, amount int64, at time.Time) (bool, error) {
	if amount < 1 || amount > MaxBalanceCents {
		// The domain bounds a credit far lower (bounds.PriceLine); this
		// only keeps MaxBalanceCents - amount below from overflowing.
		return false, fmt.Errorf("credit of %d cents to user %d: outside 1..%d", amount, userID, MaxBalanceCents)
	}
	ok, err := s.insertIgnoringDuplicate(ctx,
		`INSERT INTO wallet_entries (user_id, kind, ref, amount_cents, created_at) VALUES (?, ?, ?, ?, ?)`,
		userID, kind, ref, amount, at)
	if !ok || err != nil {
		return false, err
	}
	n, err := s.exec(ctx, `UPDATE users SET balance_cents = balance_cents + ? WHERE id = ? AND balance_cents <= ?`,
		amount, userID, MaxBalanceCents-amount)
	if err == nil && n == 0 {
		err = s.unchanged(ctx, userID, errWalletFull(amount))
	}
	return err == nil, err
}

// unchanged explains a user UPDATE that matched no row: the user is
// missing, or its bound (why) held.
func (s *Store) unchanged(ctx context.Context, userID int64, why error) error {
	var n int64
	if err := s.first(ctx, &n, `SELECT COUNT(*) FROM users WHERE id = ?`, userID); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("user %d: %w", userID, ErrNotFound)
	}
	return why
}

// ExtendSubscription moves the user's subscription end to
// max(now, current end) + d. It runs inside the delivery's transaction. An
// end past MaxTime (the DATETIME limit) is refused with ErrSubscriptionEnd and
// nothing written: on MySQL by the UPDATE's own condition, so DATE_ADD never
// leaves the column's range.
func (s *Store) ExtendSubscription(ctx context.Context, userID int64, d time.Duration, now time.Time) error {
	if d <= 0 || d > MaxTime.Sub(now) {
		return errSubscriptionEnd(d)
	}
	if s.d.sqlite {
		// SQLite has no arithmetic on our time text; its transactions are
		// serial, so reading and then writing is as safe as one UPDATE.
		var u struct{ SubscriptionExpiresAt *time.Time }
		if err := s.first(ctx, &u, `SELECT subscription_expires_at FROM users WHERE id = ?`, userID); err != nil {
			return err
		}
		end, err := SubscriptionEnd(u.SubscriptionExpiresAt, now, d)
		if err != nil {
			return err
		}
		_, err = s.exec(ctx, `UPDATE users SET subscription_expires_at = ? WHERE id = ?`, end, userID)
		return err
	}
	n, err := s.exec(ctx,
		`UPDATE users SET subscription_expires_at =
		   DATE_ADD(GREATEST(COALESCE(subscription_expires_at, ?), ?), INTERVAL ? MICROSECOND)
		 WHERE id = ? AND GREATEST(COALESCE(subscription_expires_at, ?), ?) <= ?`,
		now, now, d.Microseconds(), userID, now, now, MaxTime.Add(-d))
	if err == nil && n == 0 {
		err = s.unchanged(ctx, userID, errSubscriptionEnd(d))
	}
	return err
}
