package payments

import (
	"context"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
)

// TestPaysimPartialRefunds runs the operator-refund suite against the
// simulator, then the refusals that change nothing.
func TestPaysimPartialRefunds(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	_, buyer := s.NewUser(t, "ann", 0)
	a := &refundShop{s: s, buyer: buyer, pid: s.NewCardProduct(t, "steam-50", 5000, 20), f: refundFake{
		name: "paysim",
		paid: func(t *testing.T, orderNo string) {
			if _, st, err := s.Pay.Pay(context.Background(), orderNo, 15000, ""); err != nil || st != 200 {
				t.Fatalf("pay %s: %d %v", orderNo, st, err)
			}
		},
		sends:    func(no string) int { return s.Sim.Stats().Refunds[no].Executed },
		refunded: func(_, tradeNo string) int64 { return s.Sim.TradeRefunded(tradeNo) },
	}}
	runPartialRefunds(t, a)

	t.Run("bad requests are refused with 400 and change nothing", func(t *testing.T) {
		o := a.finishedCardOrder(t)
		long := strings.Repeat("x", 256)
		cases := []struct {
			name, key string
			body      any
			code      string
		}{
			{"no Idempotency-Key", "", map[string]any{"amount_cents": 100}, "invalid_idempotency_key"},
			{"an Idempotency-Key of 256 bytes", long, map[string]any{"amount_cents": 100}, "invalid_idempotency_key"},
			{"amount 0", "k0", map[string]any{"amount_cents": 0}, "invalid_amount"},
			{"a negative amount", "k1", map[string]any{"amount_cents": -5}, "invalid_amount"},
			{"a reason of 256 characters", "k2", map[string]any{"amount_cents": 100, "reason": strings.Repeat("é", 256)}, "invalid_reason"},
		}
		for _, tc := range cases {
			st, ans, err := a.ask(o.OrderNo, tc.key, tc.body)
			if err != nil || st != 400 || ans.Error.Code != tc.code {
				t.Errorf("%s: %d %+v %v; want 400 %s", tc.name, st, ans, err, tc.code)
			}
		}
		if st, ans, _ := a.ask(o.OrderNo, "k3", map[string]any{"amount_cents": 100, "reason": strings.Repeat("é", 255)}); st != 201 {
			t.Errorf("a reason of 255 characters: %d %+v", st, ans)
		}
		if n := s.Count(t, "SELECT COUNT(*) FROM refunds WHERE order_no = ?", o.OrderNo); n != 1 {
			t.Errorf("%d refunds after the refusals and one good request, want 1", n)
		}
		if v := a.view(t, o.OrderNo); v.RefundedCents != 100 {
			t.Errorf("refunded_cents %d, want 100", v.RefundedCents)
		}
	})

	t.Run("an order never paid is 409 order_not_paid, an unknown one 404", func(t *testing.T) {
		pending := buyer.CreateOrder(t, a.pid, 1)
		if st, ans, _ := a.ask(pending.OrderNo, "np", map[string]any{"amount_cents": 100}); st != 409 || ans.Error.Code != "order_not_paid" {
			t.Errorf("pending order: %d %+v", st, ans)
		}
		if st := buyer.Do(t, "POST", "/api/v1/orders/"+pending.OrderNo+"/cancel", nil, nil); st != 200 {
			t.Fatalf("cancel: %d", st)
		}
		if st, ans, _ := a.ask(pending.OrderNo, "np2", map[string]any{"amount_cents": 100}); st != 409 || ans.Error.Code != "order_not_paid" {
			t.Errorf("closed order: %d %+v", st, ans)
		}
		if st, ans, _ := a.ask("O-no-such-order", "np3", map[string]any{"amount_cents": 100}); st != 404 {
			t.Errorf("unknown order: %d %+v", st, ans)
		}
		if n := s.Count(t, "SELECT COUNT(*) FROM refunds WHERE order_no = ?", pending.OrderNo); n != 0 {
			t.Errorf("%d refunds of an order never paid", n)
		}
	})

	t.Run("a refund of more than the payment is 409 at once", func(t *testing.T) {
		o := a.finishedCardOrder(t)
		if st, ans, _ := a.ask(o.OrderNo, "all+1", map[string]any{"amount_cents": 15001}); st != 409 || ans.Error.Code != "refund_exceeds_payment" {
			t.Errorf("15001 of 15000: %d %+v", st, ans)
		}
		if st, _, _ := a.ask(o.OrderNo, "all", map[string]any{"amount_cents": 15000, "reason": "every key bad"}); st != 201 {
			t.Errorf("the whole payment: %d", st)
		}
		a.s.WaitStatus(t, o.OrderNo, 5, 10*time.Second) // keeps its status
	})
}
