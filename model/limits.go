package model

import (
	"errors"
	"fmt"
	"time"
)

// The ledger's own limits: the two bounds its SQL enforces in the UPDATE
// itself (the rules on every other number are internal/domain/bounds').
const (
	// MaxBalanceCents bounds a wallet: 1,000 × the largest credit
	// (bounds.MaxCents, 10^12). CreditWallet refuses a credit that would
	// take a balance past it, so balance + credit never nears the int64 limit.
	MaxBalanceCents int64 = 1_000_000_000_000_000
)

// MaxTime is the last instant a DATETIME(3) column holds: a subscription
// may not be extended past it.
var MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC)

// The limits, as the ledger reports them; bounds.FromLedger turns them into
// the API's bound errors.
var (
	// ErrWalletFull: a credit would take the wallet past MaxBalanceCents.
	ErrWalletFull = errors.New("wallet bound")
	// ErrSubscriptionEnd: an extension would end the subscription after MaxTime.
	ErrSubscriptionEnd = errors.New("subscription bound")
)

// SubscriptionEnd is max(now, current end) + d, refused (ErrSubscriptionEnd)
// when it would pass MaxTime.
func SubscriptionEnd(current *time.Time, now time.Time, d time.Duration) (time.Time, error) {
	from := now
	if current != nil && current.After(now) {
		from = *current
	}
	if d < 0 || from.After(MaxTime.Add(-d)) {
		return time.Time{}, errSubscriptionEnd(d)
	}
	return from.Add(d), nil
}

func errSubscriptionEnd(d time.Duration) error {
	return fmt.Errorf("extending the subscription by %d days would end it after %s: %w",
		int64(d/(24*time.Hour)), MaxTime.Format(time.DateOnly), ErrSubscriptionEnd)
}

func errWalletFull(amount int64) error {
	return fmt.Errorf("crediting %d cents would take the wallet past %d: %w", amount, MaxBalanceCents, ErrWalletFull)
}
