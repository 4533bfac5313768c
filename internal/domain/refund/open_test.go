package refund_test

import (
	"errors"
	"testing"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/pay"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// refund.Open records a refund once per number: a second refund.Open of the same trade
// (a repeated notification) or the same operator key (a repeated request)
// finds the first refund, fresh false, and writes nothing again — no
// second row, history entry or task, and no second count against the
// payment.
func TestOpenOncePerNumber(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	o := l.order(t, model.OrderFinished, 1000)
	type written struct{ Refunds, Events, Tasks, RefundedCents int64 }
	got := func() written {
		row, err := l.Store.OrderByID(l.ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		return written{
			Refunds:       testenv.Count(t, l.DB, `SELECT COUNT(*) FROM refunds WHERE order_id = ?`, o.ID),
			Events:        testenv.Count(t, l.DB, `SELECT COUNT(*) FROM events WHERE object_type = 'refund'`),
			Tasks:         testenv.Count(t, l.DB, `SELECT COUNT(*) FROM outbox WHERE task_type = 'refund:execute'`),
			RefundedCents: row.RefundedCents,
		}
	}
	late := refund.Request{Provider: pay.NamePaysim, TradeNo: "T-LATE", AmountCents: 1000, Reason: model.RefundReasonLate}
	part := refund.Request{Provider: pay.NamePaysim, TradeNo: "T-OWN", AmountCents: 300, Reason: model.RefundReasonOperator, Key: "key-1", OfPayment: true}
	for _, c := range []struct {
		name    string
		req     refund.Request
		no      string
		fresh   bool
		written written
	}{
		{"a late trade's refund", late, refund.Number(o.OrderNo, "T-LATE"), true, written{1, 1, 1, 0}},
		{"the same trade again", late, refund.Number(o.OrderNo, "T-LATE"), false, written{1, 1, 1, 0}},
		{"an operator's part of the payment", part, refund.OperatorNumber(o.OrderNo, "key-1"), true, written{2, 2, 2, 300}},
		{"the same request again", part, refund.OperatorNumber(o.OrderNo, "key-1"), false, written{2, 2, 2, 300}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, fresh, err := l.open(o, c.req)
			if err != nil {
				t.Fatal(err)
			}
			if fresh != c.fresh || r.RefundNo != c.no || r.BaseNo != c.no || r.Status != model.RefundProcessing || r.AmountCents != c.req.AmountCents {
				t.Errorf("open: %s (base %s) %s %d cents, fresh %v; want %s processing %d cents, fresh %v",
					r.RefundNo, r.BaseNo, r.Status, r.AmountCents, fresh, c.no, c.req.AmountCents, c.fresh)
			}
			// A repeat returns the refund the ledger holds (a fresh one's
			// ID is not read back: no caller needs it).
			if stored := l.refund(t, c.no); !fresh && stored.ID != r.ID {
				t.Errorf("open returned refund %d, the ledger holds %d under %s", r.ID, stored.ID, c.no)
			}
			if diff := cmp.Diff(c.written, got()); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
		})
	}
}

// An order's refunds of its own payment add up to at most what it was
// paid: the one that would pass it is refused with refund.ErrExceedsPayment and
// its transaction leaves no refund behind. Other money (a late trade) is
// not counted against the payment.
func TestOpenHoldsThePaymentsSum(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	o := l.order(t, model.OrderFinished, 1000)
	own := func(key string, cents int64) refund.Request {
		return refund.Request{Provider: pay.NamePaysim, TradeNo: "T-OWN", AmountCents: cents, TradeCents: 1000,
			Reason: model.RefundReasonOperator, Key: key, OfPayment: true}
	}
	for _, c := range []struct {
		name     string
		req      refund.Request
		no       string
		err      error
		refunded int64
	}{
		{"600 of 1000", own("a", 600), refund.OperatorNumber(o.OrderNo, "a"), nil, 600},
		{"500 more would pass the payment", own("b", 500), refund.OperatorNumber(o.OrderNo, "b"), refund.ErrExceedsPayment, 600},
		{"400 more is exactly the payment", own("c", 400), refund.OperatorNumber(o.OrderNo, "c"), nil, 1000},
		{"1 more", own("d", 1), refund.OperatorNumber(o.OrderNo, "d"), refund.ErrExceedsPayment, 1000},
		{"a late trade is other money", refund.Request{Provider: pay.NamePaysim, TradeNo: "T-LATE", AmountCents: 5000, Reason: model.RefundReasonLate},
			refund.Number(o.OrderNo, "T-LATE"), nil, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := l.open(o, c.req)
			if !errors.Is(err, c.err) {
				t.Fatalf("open: %v, want %v", err, c.err)
			}
			rows := testenv.Count(t, l.DB, `SELECT COUNT(*) FROM refunds WHERE base_no = ?`, c.no)
			if want := map[bool]int64{true: 1, false: 0}[c.err == nil]; rows != want {
				t.Errorf("%d refunds under %s, want %d", rows, c.no, want)
			}
			row, err := l.Store.OrderByID(l.ctx, o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if row.RefundedCents != c.refunded {
				t.Errorf("refunded_cents %d, want %d", row.RefundedCents, c.refunded)
			}
		})
	}
}
