package order_test

import (
	"context"
	"errors"
	"testing"

	"orderflow/internal/domain/order"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// Every way a payment notification can land, through Pay on a real ledger:
// what it was recorded as, and what it left the order in. The cases run in
// order on one ledger; each names the state it builds on.
func TestPayDispositions(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{NoWorker: true}) // nothing activates or closes behind the test
	ctx := context.Background()
	uc := s.UC
	const price = 500
	shop := s.NewShop(t, "pay-disp", price)
	paid, held, late := shop.Order(t), shop.Order(t), shop.Order(t)
	if err := uc.Orders.Cancel(ctx, late, order.Viewer{Admin: true}); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Disposition model.Disposition
		Repeat      bool
		Status      string
	}
	for _, tc := range []struct {
		name    string
		orderNo string
		trade   string
		cents   int64
		want    outcome
	}{
		{"pending order, right amount: applied", paid, "T-1", price, outcome{model.PaymentApplied, false, "paid"}},
		{"the same notification again: a repeat, nothing new", paid, "T-1", price, outcome{"", true, "paid"}},
		{"another trade for the paid order: duplicate", paid, "T-2", price, outcome{model.PaymentDuplicate, false, "paid"}},
		{"wrong amount: mismatch", held, "T-3", price + 1, outcome{model.PaymentMismatch, false, "pending"}},
		{"a trade that pays another order: held", held, "T-1", price, outcome{model.PaymentHeld, false, "pending"}},
		{"the held notification again: still held, a repeat", held, "T-1", price, outcome{model.PaymentHeld, true, "pending"}},
		{"after the close: late, the order is refunded", late, "T-4", price, outcome{model.PaymentLate, false, "refunding"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := uc.Orders.Pay(ctx, order.Payment{OrderNo: tc.orderNo, TradeNo: tc.trade, AmountCents: tc.cents})
			if err != nil {
				t.Fatalf("Pay: %v", err)
			}
			o, err := s.SC.Store.OrderByNo(ctx, tc.orderNo)
			if err != nil {
				t.Fatal(err)
			}
			got := outcome{res.Disposition, res.Repeat, o.Status.String()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Pay (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := uc.Orders.Pay(ctx, order.Payment{OrderNo: "O-none", TradeNo: "T-9", AmountCents: price}); !errors.Is(err, order.ErrNotFound) {
		t.Errorf("Pay for an unknown order = %v, want order.ErrNotFound", err)
	}
}
