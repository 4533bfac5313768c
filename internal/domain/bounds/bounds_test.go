package bounds_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/bounds"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// codeOf is the API code of a bound error ("" for nil).
func codeOf(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var b *bounds.BoundError
	if !errors.As(err, &b) {
		t.Fatalf("%v is not a *bounds.BoundError", err)
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Kind != apperr.Invalid || ae.Code != b.Code {
		t.Fatalf("%v does not unwrap to a 400 with code %s", err, b.Code)
	}
	return b.Code
}

// TestChecks: each single-value bound at, just inside, just outside and far
// outside its limits.
func TestChecks(t *testing.T) {
	const m = bounds.MaxCents
	for _, tc := range []struct {
		name  string
		check func(int64) error
		code  string
		ok    []int64
		bad   []int64
	}{
		{"price", bounds.CheckPrice, "invalid_price", []int64{0, 1, m}, []int64{-1, m + 1, math.MaxInt64, math.MinInt64}},
		{"group price", bounds.CheckGroupPrice, "invalid_price", []int64{1, m}, []int64{0, -1, m + 1, math.MaxInt64}},
		{"credit", bounds.CheckCredit, "invalid_credit", []int64{1, m}, []int64{0, -1, m + 1, 1 << 62}},
		{"days", bounds.CheckDays, "invalid_days", []int64{1, 36500}, []int64{0, -1, 36501, 1 << 31}},
		{"quantity", bounds.CheckQuantity, "invalid_quantity", []int64{1, 100}, []int64{0, -1, 101, 1 << 31}},
		{"stock", bounds.CheckStock, "invalid_stock", []int64{0, 1_000_000_000}, []int64{-1, 1_000_000_001, math.MaxInt64}},
		{"opening balance", bounds.CheckOpeningBalance, "invalid_balance", []int64{0, m}, []int64{-1, m + 1, math.MaxInt64}},
		{"payment", func(v int64) error { return bounds.CheckAmount(v, 1) }, "invalid_amount", []int64{1, m}, []int64{0, -1, m + 1, math.MaxInt64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range tc.ok {
				if got := codeOf(t, tc.check(v)); got != "" {
					t.Errorf("%d refused with %s, want accepted", v, got)
				}
			}
			for _, v := range tc.bad {
				if got := codeOf(t, tc.check(v)); got != tc.code {
					t.Errorf("%d: code %q, want %q", v, got, tc.code)
				}
			}
		})
	}
}

func TestMulWithin(t *testing.T) {
	for _, tc := range []struct {
		a, b, max int64
		want      int64
		ok        bool
	}{
		{3, 4, 12, 12, true},
		{3, 4, 11, 0, false},
		{0, math.MaxInt64, 0, 0, true},
		{6148914691236517206, 3, math.MaxInt64, 0, false}, // wraps to 2 unchecked
		{1_000_000_000_000_000_000, 10, math.MaxInt64, 0, false},
		{1 << 62, 2, math.MaxInt64, 0, false}, // wraps to MinInt64 unchecked
		{math.MaxInt64, 1, math.MaxInt64, math.MaxInt64, true},
		{-1, 5, 100, 0, false},
		{5, -1, 100, 0, false},
	} {
		got, ok := bounds.MulWithin(tc.a, tc.b, tc.max)
		if got != tc.want || ok != tc.ok {
			t.Errorf("MulWithin(%d, %d, %d) = %d, %v; want %d, %v", tc.a, tc.b, tc.max, got, ok, tc.want, tc.ok)
		}
	}
}

// TestPriceLine is the order rule: the product's numbers and each product
// with the quantity within their bounds — the wrapping cases among them.
func TestPriceLine(t *testing.T) {
	card := func(price int64) *model.Product { return &model.Product{Kind: model.KindCard, PriceCents: price} }
	topup := func(price, credit int64) *model.Product {
		return &model.Product{Kind: model.KindRecharge, PriceCents: price, CreditCents: credit}
	}
	plan := func(days int) *model.Product {
		return &model.Product{Kind: model.KindSubscription, PriceCents: 1, Days: days}
	}
	day := 24 * time.Hour
	for _, tc := range []struct {
		name string
		p    *model.Product
		qty  int
		want bounds.Line
		code string
	}{
		{"free card", card(0), 3, bounds.Line{}, ""},
		{"amount at the bound", card(bounds.MaxCents / 100), 100, bounds.Line{AmountCents: bounds.MaxCents}, ""},
		{"amount just over", card(bounds.MaxCents/100 + 1), 100, bounds.Line{}, "invalid_amount"},
		{"price 10^12 × 2", card(bounds.MaxCents), 2, bounds.Line{}, "invalid_amount"},
		{"price 6148914691236517206 × 3", card(6148914691236517206), 3, bounds.Line{}, "invalid_price"},
		{"price 10^18 × 10", card(1_000_000_000_000_000_000), 10, bounds.Line{}, "invalid_price"},
		{"negative price", card(-1), 1, bounds.Line{}, "invalid_price"},
		{"quantity 0", card(1), 0, bounds.Line{}, "invalid_quantity"},
		{"quantity 101", card(1), 101, bounds.Line{}, "invalid_quantity"},
		{"credit at the bound", topup(1, bounds.MaxCents), 1, bounds.Line{AmountCents: 1, CreditCents: bounds.MaxCents}, ""},
		{"credit 10^12 × 2", topup(1, bounds.MaxCents), 2, bounds.Line{}, "invalid_credit"},
		{"credit 2^62 × 2", topup(100, 1<<62), 2, bounds.Line{}, "invalid_credit"},
		{"recharge without credit", topup(100, 0), 1, bounds.Line{}, "invalid_credit"},
		{"days × quantity at the bound", plan(365), 100, bounds.Line{AmountCents: 100, Days: 36500, Extension: 36500 * day}, ""},
		{"days × quantity just over", plan(366), 100, bounds.Line{}, "invalid_days"},
		{"days 365 × 10", plan(365), 10, bounds.Line{AmountCents: 10, Days: 3650, Extension: 3650 * day}, ""},
		{"days 36500 × 1", plan(36500), 1, bounds.Line{AmountCents: 1, Days: 36500, Extension: 36500 * day}, ""},
		{"days 1100 × 100", plan(1100), 100, bounds.Line{}, "invalid_days"},
		{"days 2^31-1", plan(math.MaxInt32), 1, bounds.Line{}, "invalid_days"},
		{"subscription without days", plan(0), 1, bounds.Line{}, "invalid_days"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bounds.PriceLine(tc.p, tc.qty)
			if code := codeOf(t, err); code != tc.code {
				t.Fatalf("code %q, want %q (%v)", code, tc.code, err)
			}
			if tc.code == "" {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("line (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestFromLedger: the ledger's two limits become their bound errors, with
// the ledger's words as the message; anything else passes through.
func TestFromLedger(t *testing.T) {
	other := errors.New("connection refused")
	for _, tc := range []struct {
		err  error
		code string
	}{
		{fmt.Errorf("deliver recharge: %w", model.ErrWalletFull), "invalid_balance"},
		{fmt.Errorf("deliver subscription: %w", model.ErrSubscriptionEnd), "invalid_days"},
	} {
		if got := codeOf(t, bounds.FromLedger(tc.err)); got != tc.code {
			t.Errorf("FromLedger(%v): code %q, want %q", tc.err, got, tc.code)
		}
	}
	if got := bounds.FromLedger(other); !errors.Is(got, other) || got.Error() != other.Error() {
		t.Errorf("FromLedger(%v) = %v, want it unchanged", other, got)
	}
	if bounds.MaxBalanceCents != 1_000*bounds.MaxCents {
		t.Errorf("MaxBalanceCents = %d, want 1,000 × MaxCents", bounds.MaxBalanceCents)
	}
}
