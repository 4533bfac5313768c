package order

import (
	"strings"
	"testing"

	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// What a newly recorded payment does to its order, for every order status:
// only a pending order with the right amount is paid; a wrong amount is a
// mismatch whatever the status; a closed or refund-bound order makes it late;
// an order another trade already moved makes it a duplicate. Every status
// must be in the table, so a new status cannot slip through unclassified.
func TestDisposition(t *testing.T) {
	const price = 1990
	want := map[model.OrderStatus][2]model.Disposition{ // [right amount, wrong amount]
		model.OrderPending:   {model.PaymentApplied, model.PaymentMismatch},
		model.OrderPaid:      {model.PaymentDuplicate, model.PaymentMismatch},
		model.OrderClaimed:   {model.PaymentDuplicate, model.PaymentMismatch},
		model.OrderFinished:  {model.PaymentDuplicate, model.PaymentMismatch},
		model.OrderFailed:    {model.PaymentDuplicate, model.PaymentMismatch},
		model.OrderClosed:    {model.PaymentLate, model.PaymentMismatch},
		model.OrderRefunding: {model.PaymentLate, model.PaymentMismatch},
		model.OrderRefunded:  {model.PaymentLate, model.PaymentMismatch},
	}
	got := map[model.OrderStatus][2]model.Disposition{}
	for st := model.OrderStatus(1); !strings.HasPrefix(st.String(), "status("); st++ {
		o := &model.Order{OrderNo: "O1", Status: st, AmountCents: price}
		got[st] = [2]model.Disposition{disposition(o, price), disposition(o, price+1)}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("disposition by status [right amount, wrong amount] (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		paid int64
	}{
		{"a cent short", price - 1},
		{"nothing", 0},
		{"double", 2 * price},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &model.Order{Status: model.OrderPending, AmountCents: price}
			if got := disposition(o, tc.paid); got != model.PaymentMismatch {
				t.Errorf("disposition(pending %d, paid %d) = %q, want %q", price, tc.paid, got, model.PaymentMismatch)
			}
		})
	}
}
