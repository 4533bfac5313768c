package closeandrefund

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/refund"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"

	"github.com/google/go-cmp/cmp"
)

const (
	bobToken  = "manual-bob-operator-token-01"
	vicToken  = "manual-vic-viewer-token-0001"
	manualMsg = "manual payment: return the money by hand, then resolve"
)

// confirmed is the answer to POST /api/v1/admin/orders/{order_no}/payments.
type confirmed struct {
	OrderNo string `json:"order_no"`
	Status  string `json:"status"`
}

// paymentRow is one payments row of an order, as the admin view lists it.
type paymentRow struct {
	Provider    string `json:"provider"`
	TradeNo     string `json:"trade_no"`
	AmountCents int64  `json:"amount_cents"`
	Disposition string `json:"disposition"`
}

// An operator confirms payments seen outside every provider: a pending
// order is delivered, a closed one refunded by hand (never sent to a
// provider), the same reference twice applies once, and bad input, an
// unknown order or a viewer's token change nothing.
func TestManualPayments(t *testing.T) {
	ctx := context.Background()
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.AdminTokens = "bob:operator:" + bobToken + ",vic:viewer:" + vicToken
	}})
	bob := &testenv.Client{Base: s.APIURL, Token: bobToken}
	vic := &testenv.Client{Base: s.APIURL, Token: vicToken}
	pid := s.NewCardProduct(t, "manual", 900, 10)
	_, buyer := s.NewUser(t, "manual-buyer", 0)

	confirm := func(t *testing.T, c *testenv.Client, orderNo string, body map[string]any) (int, confirmed, apiError) {
		t.Helper()
		var raw map[string]any
		st := c.Do(t, "POST", "/api/v1/admin/orders/"+orderNo+"/payments", body, &raw)
		var ok confirmed
		var e apiError
		if st == 200 {
			ok = confirmed{OrderNo: raw["order_no"].(string), Status: raw["status"].(string)}
		} else if m, _ := raw["error"].(map[string]any); m != nil {
			e.Error.Code, _ = m["code"].(string)
		}
		return st, ok, e
	}
	payments := func(t *testing.T, orderNo string) []paymentRow {
		t.Helper()
		var v struct {
			Payments []paymentRow `json:"payments"`
		}
		if st := vic.Do(t, "GET", "/api/v1/admin/orders/"+orderNo, nil, &v); st != 200 {
			t.Fatalf("admin view of %s: status %d", orderNo, st)
		}
		return v.Payments
	}

	t.Run("pending order delivered once however often confirmed", func(t *testing.T) {
		o := buyer.CreateOrder(t, pid, 1)
		body := map[string]any{"reference": "  BANK-0001 ", "amount_cents": o.AmountCents, "note": "transfer seen on the statement"}
		for i := range 2 {
			st, got, e := confirm(t, bob, o.OrderNo, body)
			if st != 200 || got.OrderNo != o.OrderNo {
				t.Fatalf("confirmation #%d: status %d %+v %+v", i+1, st, got, e)
			}
			if i == 0 && got.Status == model.OrderPending.String() {
				t.Errorf("confirmation #1 left the order pending")
			}
			if i == 1 {
				s.WaitStatus(t, o.OrderNo, model.OrderFinished, 20*time.Second)
			}
		}
		if st, got, _ := confirm(t, bob, o.OrderNo, body); st != 200 || got.Status != model.OrderFinished.String() {
			t.Errorf("confirmation of the delivered order: %d %+v, want 200 finished", st, got)
		}
		row := s.CheckFinishedOnce(t, o.OrderNo)
		if row.TradeNo == nil || *row.TradeNo != "BANK-0001" {
			t.Errorf("order trade_no %v, want the trimmed reference BANK-0001", row.TradeNo)
		}
		want := []paymentRow{{Provider: "manual", TradeNo: "BANK-0001", AmountCents: o.AmountCents, Disposition: model.PaymentApplied.String()}}
		if diff := cmp.Diff(want, payments(t, o.OrderNo)); diff != "" {
			t.Errorf("payments of the order (-want +got):\n%s", diff)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM payments WHERE provider = 'manual' AND trade_no = 'BANK-0001'`); n != 1 {
			t.Errorf("%d payment rows for BANK-0001, want 1", n)
		}
		wantTrail := []testenv.AuditEntry{{Actor: "bob", Action: "order_payment", Object: o.OrderNo, Detail: map[string]any{
			"provider": "manual", "trade_no": "BANK-0001", "amount_cents": float64(o.AmountCents),
			"disposition": model.PaymentApplied.String(), "reason": "transfer seen on the statement",
		}}}
		if diff := cmp.Diff(wantTrail, bob.AuditTrail(t, o.OrderNo), ignoreAt); diff != "" {
			t.Errorf("audit of the order (-want +got):\n%s", diff)
		}
	})

	t.Run("closed order refunded by hand, never sent to a provider", func(t *testing.T) {
		o := buyer.CreateOrder(t, pid, 1)
		if err := cancelOrder(buyer, o.OrderNo); err != nil {
			t.Fatal(err)
		}
		st, got, e := confirm(t, bob, o.OrderNo, map[string]any{"reference": "BANK-LATE", "amount_cents": o.AmountCents})
		if st != 200 || got.Status != model.OrderRefunding.String() {
			t.Fatalf("confirmation of a closed order: %d %+v %+v, want 200 refunding", st, got, e)
		}
		refundNo := refund.NumberAt("manual", o.OrderNo, "BANK-LATE")
		var r model.Refund
		testenv.Eventually(t, 20*time.Second, "refund "+refundNo+" manual", func() (bool, error) {
			rs := testenv.Rows[model.Refund](t, s, `SELECT * FROM refunds WHERE refund_no = ?`, refundNo)
			if len(rs) != 1 {
				return false, nil
			}
			r = rs[0]
			return r.Status == model.RefundManual, nil
		})
		if r.Provider != "manual" || r.LastError != manualMsg || r.Attempts != 0 {
			t.Errorf("refund: provider %q last_error %q attempts %d; want manual, %q, 0", r.Provider, r.LastError, r.Attempts, manualMsg)
		}
		stats, err := s.Pay.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, sent := stats.Refunds[refundNo]; sent {
			t.Errorf("refund %s of manual money reached the simulator", refundNo)
		}
		if alerted := manualAlerts(t, s, refundNo); alerted != 1 {
			t.Errorf("%d refund_manual alerts for %s, want 1", alerted, refundNo)
		}
		needs, err := s.UC.Backlog.Needs(ctx, 50)
		if err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, x := range needs.ManualRefunds {
			listed = listed || x.RefundNo == refundNo
		}
		if !listed {
			t.Errorf("needs a hand does not list refund %s", refundNo)
		}
		var e409 apiError
		if st := bob.Do(t, "POST", "/api/v1/admin/refunds/"+refundNo+"/retry", nil, &e409); st != 409 || e409.Error.Code != "manual_payment" {
			t.Errorf("retry of a manual payment's refund: status %d %+v, want 409 manual_payment", st, e409)
		}
		if st := bob.Do(t, "POST", "/api/v1/admin/refunds/"+refundNo+"/resolve", nil, nil); st != 200 {
			t.Fatalf("resolve: status %d", st)
		}
		s.WaitStatus(t, o.OrderNo, model.OrderRefunded, 20*time.Second)
		if moves := s.Moves(t, o.OrderNo); !slices.Contains(moves, "closed→refunding") || slices.Contains(moves, "pending→paid") {
			t.Errorf("order history %v, want closed→refunding and never paid", moves)
		}
		want := []paymentRow{{Provider: "manual", TradeNo: "BANK-LATE", AmountCents: o.AmountCents, Disposition: model.PaymentLate.String()}}
		if diff := cmp.Diff(want, payments(t, o.OrderNo)); diff != "" {
			t.Errorf("payments of the late order (-want +got):\n%s", diff)
		}
	})

	t.Run("wrong amount is a mismatch refunded by hand", func(t *testing.T) {
		o := buyer.CreateOrder(t, pid, 1)
		st, got, e := confirm(t, bob, o.OrderNo, map[string]any{"reference": "BANK-WRONG", "amount_cents": o.AmountCents + 1})
		if st != 200 || got.Status != model.OrderPending.String() {
			t.Fatalf("confirmation of a wrong amount: %d %+v %+v, want 200 pending", st, got, e)
		}
		refundNo := refund.NumberAt("manual", o.OrderNo, "BANK-WRONG")
		testenv.Eventually(t, 20*time.Second, "refund "+refundNo+" manual", func() (bool, error) {
			n := s.Count(t, `SELECT COUNT(*) FROM refunds WHERE refund_no = ? AND status = ?`, refundNo, model.RefundManual)
			return n == 1, nil
		})
		if n := s.Count(t, `SELECT COUNT(*) FROM notifications WHERE kind = 'payment_mismatch' AND notify_id = ?`, "payment-mismatch:BANK-WRONG"); n != 1 {
			t.Errorf("%d mismatch alerts, want 1", n)
		}
	})

	t.Run("bad input, unknown order and a viewer change nothing", func(t *testing.T) {
		o := buyer.CreateOrder(t, pid, 1)
		long := strings.Repeat("R", 65)
		for _, c := range []struct {
			name string
			body map[string]any
			code string
		}{
			{"no reference", map[string]any{"amount_cents": o.AmountCents}, "invalid_reference"},
			{"blank reference", map[string]any{"reference": "   ", "amount_cents": o.AmountCents}, "invalid_reference"},
			{"long reference", map[string]any{"reference": long, "amount_cents": o.AmountCents}, "invalid_reference"},
			{"control in reference", map[string]any{"reference": "A\nB", "amount_cents": o.AmountCents}, "invalid_reference"},
			{"reference not a string", map[string]any{"reference": 12, "amount_cents": o.AmountCents}, "invalid_reference"},
			{"no amount", map[string]any{"reference": "BANK-BAD"}, "invalid_amount"},
			{"negative amount", map[string]any{"reference": "BANK-BAD", "amount_cents": -5}, "invalid_amount"},
			{"amount past the bound", map[string]any{"reference": "BANK-BAD", "amount_cents": bounds.MaxCents + 1}, "invalid_amount"},
			{"fractional amount", map[string]any{"reference": "BANK-BAD", "amount_cents": 1.5}, "invalid_amount"},
			{"long note", map[string]any{"reference": "BANK-BAD", "amount_cents": o.AmountCents, "note": strings.Repeat("n", 256)}, "invalid_note"},
		} {
			if st, _, e := confirm(t, bob, o.OrderNo, c.body); st != 400 || e.Error.Code != c.code {
				t.Errorf("%s: status %d %q, want 400 %s", c.name, st, e.Error.Code, c.code)
			}
		}
		if st, _, e := confirm(t, bob, "NO-SUCH-ORDER", map[string]any{"reference": "BANK-404", "amount_cents": 100}); st != 404 || e.Error.Code != "order_not_found" {
			t.Errorf("unknown order: status %d %q, want 404 order_not_found", st, e.Error.Code)
		}
		if st, _, e := confirm(t, vic, o.OrderNo, map[string]any{"reference": "BANK-VIC", "amount_cents": o.AmountCents}); st != 403 || e.Error.Code != "forbidden" {
			t.Errorf("viewer: status %d %q, want 403 forbidden", st, e.Error.Code)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM payments WHERE provider = 'manual' AND trade_no IN ('BANK-BAD', 'BANK-404', 'BANK-VIC')`); n != 0 {
			t.Errorf("%d payments recorded by refused confirmations", n)
		}
		if row := s.OrderRow(t, o.OrderNo); row.Status != model.OrderPending {
			t.Errorf("order %s is %s after refused confirmations, want pending", o.OrderNo, row.Status)
		}
		if got := bob.AuditTrail(t, o.OrderNo); len(got) != 0 {
			t.Errorf("refused confirmations wrote audit entries: %+v", got)
		}
	})
}
