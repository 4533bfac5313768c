// Package bounds is the bounds on money, time and counts: the one place each
// rule is written. The ledger (model) keeps only the two limits its own SQL
// enforces — a wallet's and a DATETIME's — and reports them as sentinels,
// which FromLedger turns into the bound errors here.
package bounds

import (
	"errors"
	"fmt"
	"math/bits"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/model"
)

// The bounds on money, time and counts.
// Every product of them (price × quantity, credit × quantity, days ×
// quantity) is checked against them before anything is written, and again at
// delivery, so no row — even one written before the bounds existed — can
// wrap an int64 or a time.Duration.
const (
	// MaxCents bounds a price, a credit, an order amount, a payment, a group
	// price and an opening balance (10^12 cents).
	MaxCents int64 = 1_000_000_000_000
	// MaxBalanceCents bounds a wallet (1,000 × MaxCents): a credit that
	// would take it further is refused by the ledger's UPDATE itself, so
	// balance + credit never nears the int64 limit.
	MaxBalanceCents = model.MaxBalanceCents
	// MaxDays bounds a subscription product's days and an order's days × quantity.
	MaxDays int64 = 36_500
	// MinQuantity and MaxQuantity bound an order's quantity.
	MinQuantity, MaxQuantity = 1, 100
	// MaxStock bounds a limited product's stock column.
	MaxStock int64 = 1_000_000_000
	// MaxGroupLife bounds how far ahead a group-buy's deadline may be.
	MaxGroupLife = 365 * 24 * time.Hour
)

// MaxTime is the last instant a DATETIME(3) column holds: a subscription
// may not be extended past it.
var MaxTime = model.MaxTime

// BoundError is a value outside its bound. Code names the field
// ("invalid_price", "invalid_amount", …); it unwraps to the API's 400.
type BoundError struct {
	Code    string
	Message string
}

func (e *BoundError) Error() string { return e.Code + ": " + e.Message }

// Unwrap is the business error the API answers with.
func (e *BoundError) Unwrap() error { return apperr.New(apperr.Invalid, e.Code, e.Message) }

func outOfBounds(code, format string, args ...any) error {
	return &BoundError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// inRange is every CheckX: v must be lo..hi, else the bound's code and a
// message naming the field.
func inRange(code, field string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return outOfBounds(code, "%s %d is outside %d..%d", field, v, lo, hi)
	}
	return nil
}

// CheckPrice: a product's price is 0..MaxCents (0 is a free product).
func CheckPrice(cents int64) error {
	return inRange("invalid_price", "price_cents", cents, 0, MaxCents)
}

// CheckGroupPrice: a group-buy's price is 1..MaxCents.
func CheckGroupPrice(cents int64) error {
	return inRange("invalid_price", "price_cents", cents, 1, MaxCents)
}

// CheckCredit: a recharge product's credit is 1..MaxCents.
func CheckCredit(cents int64) error {
	return inRange("invalid_credit", "credit_cents", cents, 1, MaxCents)
}

// CheckDays: a subscription product's days are 1..MaxDays.
func CheckDays(days int64) error { return inRange("invalid_days", "days", days, 1, MaxDays) }

// CheckQuantity: an order's quantity is MinQuantity..MaxQuantity.
func CheckQuantity(qty int64) error {
	return inRange("invalid_quantity", "quantity", qty, MinQuantity, MaxQuantity)
}

// CheckStock: a limited product's stock is 0..MaxStock.
func CheckStock(n int64) error { return inRange("invalid_stock", "stock", n, 0, MaxStock) }

// CheckOpeningBalance: a new user's balance is 0..MaxCents.
func CheckOpeningBalance(cents int64) error {
	return inRange("invalid_balance", "balance_cents", cents, 0, MaxCents)
}

// CheckAmount: a payment or an order amount is lo..MaxCents.
func CheckAmount(cents, lo int64) error {
	return inRange("invalid_amount", "amount_cents", cents, lo, MaxCents)
}

// MulWithin returns a × b for a, b ≥ 0 and whether the product is at most
// max, without ever wrapping.
func MulWithin(a, b, max int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > uint64(max) {
		return 0, false
	}
	return int64(lo), true
}

// Line is what an order of quantity × product costs and delivers, each
// product checked against its bound.
type Line struct {
	AmountCents int64         // price × quantity
	CreditCents int64         // a recharge's credit × quantity
	Days        int64         // a subscription's days × quantity
	Extension   time.Duration // Days as a duration
}

// PriceLine checks a product and a quantity against every bound and returns
// the line they make. The same check runs at order creation and at delivery.
func PriceLine(p *model.Product, qty int) (Line, error) {
	var l Line
	if err := CheckQuantity(int64(qty)); err != nil {
		return l, err
	}
	if err := CheckPrice(p.PriceCents); err != nil {
		return l, err
	}
	q := int64(qty)
	var ok bool
	if l.AmountCents, ok = MulWithin(p.PriceCents, q, MaxCents); !ok {
		return l, outOfBounds("invalid_amount", "price_cents %d × quantity %d exceeds %d", p.PriceCents, qty, MaxCents)
	}
	switch p.Kind {
	case model.KindRecharge:
		if err := CheckCredit(p.CreditCents); err != nil {
			return l, err
		}
		if l.CreditCents, ok = MulWithin(p.CreditCents, q, MaxCents); !ok {
			return l, outOfBounds("invalid_credit", "credit_cents %d × quantity %d exceeds %d", p.CreditCents, qty, MaxCents)
		}
	case model.KindSubscription:
		if err := CheckDays(int64(p.Days)); err != nil {
			return l, err
		}
		if l.Days, ok = MulWithin(int64(p.Days), q, MaxDays); !ok {
			return l, outOfBounds("invalid_days", "days %d × quantity %d exceeds %d", p.Days, qty, MaxDays)
		}
		// At most 36,500 days: 3.2e18 ns, inside time.Duration.
		l.Extension = time.Duration(l.Days) * 24 * time.Hour
	}
	return l, nil
}

// FromLedger is err with the ledger's own limits (model.ErrWalletFull,
// model.ErrSubscriptionEnd) turned into their bound errors; any other error
// is returned as is.
func FromLedger(err error) error {
	switch {
	case errors.Is(err, model.ErrWalletFull):
		return &BoundError{Code: "invalid_balance", Message: err.Error()}
	case errors.Is(err, model.ErrSubscriptionEnd):
		return &BoundError{Code: "invalid_days", Message: err.Error()}
	}
	return err
}
