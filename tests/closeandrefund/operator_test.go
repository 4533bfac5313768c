package closeandrefund

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// The operator's refund tools: refunding a failed order (keys recycled,
// stock flow 4), and handling a refund the provider declared failed — retry
// under a new refund_no generation, or resolve by hand.
func TestOperatorRefunds(t *testing.T) {
	ctx := context.Background()
	s := testenv.StartFailFast(t, testenv.Shared, "")

	refundOf := func(t *testing.T, orderNo string) model.Refund {
		t.Helper()
		rs := testenv.Rows[model.Refund](t, s, `SELECT r.* FROM refunds r JOIN orders o ON o.id = r.order_id WHERE o.order_no = ?`, orderNo)
		if len(rs) != 1 {
			t.Fatalf("order %s has %d refunds, want 1", orderNo, len(rs))
		}
		return rs[0]
	}
	waitRefund := func(t *testing.T, orderNo string, status model.RefundStatus) model.Refund {
		t.Helper()
		var r model.Refund
		testenv.Eventually(t, 20*time.Second, "refund of "+orderNo+" "+status.String(), func() (bool, error) {
			r = refundOf(t, orderNo)
			return r.Status == status, fmt.Errorf("refund %s is %s (last error %q)", r.RefundNo, r.Status, r.LastError)
		})
		return r
	}
	manualList := func(t *testing.T) []string {
		t.Helper()
		var out struct {
			Refunds []struct {
				RefundNo string             `json:"refund_no"`
				Status   model.RefundStatus `json:"status"`
			} `json:"refunds"`
		}
		if st := s.Admin.Do(t, "GET", "/api/v1/admin/refunds?status=manual", nil, &out); st != 200 {
			t.Fatalf("list manual refunds: status %d", st)
		}
		var nos []string
		for _, r := range out.Refunds {
			if r.Status != model.RefundManual {
				t.Errorf("manual list holds %s in %s", r.RefundNo, r.Status)
			}
			nos = append(nos, r.RefundNo)
		}
		return nos
	}
	// lateManual makes a late payment whose refund the provider declares
	// failed on arrival, and waits until it is in manual.
	lateManual := func(t *testing.T, sku string) (orderNo, refundNo string) {
		t.Helper()
		_, buyer, o := s.NewCardOrder(t, sku, 650, 1)
		if err := cancelOrder(buyer, o.OrderNo); err != nil {
			t.Fatal(err)
		}
		trade := "T" + strings.ToUpper(sku)
		refundNo = refund.Number(o.OrderNo, trade)
		if err := s.Pay.FailRefund(ctx, refundNo); err != nil {
			t.Fatalf("arm the provider to fail %s: %v", refundNo, err)
		}
		if _, err := payOrder(s, o.OrderNo, o.AmountCents, trade); err != nil {
			t.Fatal(err)
		}
		r := waitRefund(t, o.OrderNo, model.RefundManual)
		if r.RefundNo != refundNo {
			t.Fatalf("refund_no %s, want %s", r.RefundNo, refundNo)
		}
		if st := s.OrderRow(t, o.OrderNo).Status; st != model.OrderRefunding {
			t.Errorf("order with a refund in manual is %s, want refunding", st)
		}
		if n := manualAlerts(t, s, refundNo); n != 1 {
			t.Errorf("%d refund_manual alerts for %s, want 1", n, refundNo)
		}
		if st := s.Sim.Stats().Refunds[refundNo]; st.Executed != 0 || st.Status != "failed" {
			t.Errorf("provider's view of %s: %+v, want failed and never executed", refundNo, st)
		}
		if !slices.Contains(manualList(t), refundNo) {
			t.Errorf("GET /admin/refunds?status=manual does not list %s", refundNo)
		}
		return o.OrderNo, refundNo
	}

	t.Run("a part refunded, the failed order's refund returns the rest", func(t *testing.T) {
		_, _, o := s.NewCardOrder(t, "op-part", 900, 2)
		s.PayUntilFailed(t, o, "TOPPART", 20*time.Second)
		var part struct {
			RefundNo string `json:"refund_no"`
		}
		if st := s.Admin.Do(t, "POST", "/api/v1/admin/orders/"+o.OrderNo+"/refunds", map[string]any{"amount_cents": 300, "reason": "goodwill"}, &part, "Idempotency-Key", "part-1"); st != 201 {
			t.Fatalf("partial refund: %d", st)
		}
		if st := s.OrderRow(t, o.OrderNo).Status; st != model.OrderFailed {
			t.Errorf("order after a partial refund is %s, want failed (it keeps its status)", st)
		}
		var out struct {
			Status   string `json:"status"`
			RefundNo string `json:"refund_no"`
		}
		if st := s.Admin.Do(t, "POST", "/api/v1/admin/orders/"+o.OrderNo+"/refund", nil, &out); st != 200 {
			t.Fatalf("operator refund of the failed order: %d", st)
		}
		s.WaitStatus(t, o.OrderNo, model.OrderRefunded, 20*time.Second)
		rs := testenv.Rows[model.Refund](t, s, `SELECT * FROM refunds WHERE order_no = ? ORDER BY id`, o.OrderNo)
		if len(rs) != 2 || rs[0].AmountCents != 300 || rs[1].AmountCents != 600 || rs[1].RefundNo != out.RefundNo {
			t.Fatalf("refunds %+v, want 300 then the 600 left", rs)
		}
		if row := s.OrderRow(t, o.OrderNo); row.RefundedCents != 900 {
			t.Errorf("refunded_cents %d, want 900", row.RefundedCents)
		}
		for _, r := range rs {
			if r.Status != model.RefundSucceeded || s.Sim.Stats().Refunds[r.RefundNo].Executed != 1 {
				t.Errorf("refund %s %s, executed %d; want succeeded once", r.RefundNo, r.Status, s.Sim.Stats().Refunds[r.RefundNo].Executed)
			}
		}
		if s.Sim.TradeRefunded("TOPPART") != 900 {
			t.Errorf("the provider returned %d of 900", s.Sim.TradeRefunded("TOPPART"))
		}
		var e apiError
		if st := s.Admin.Do(t, "POST", "/api/v1/admin/orders/"+o.OrderNo+"/refunds", map[string]any{"amount_cents": 1}, &e, "Idempotency-Key", "part-2"); st != 409 {
			t.Errorf("a cent more: %d %+v, want 409 refund_exceeds_payment", st, e)
		}
	})

	t.Run("refund a failed order", func(t *testing.T) {
		pid, _, o := s.NewCardOrder(t, "op-failed", 800, 2)
		const trade = "TOPFAILED"
		row := s.PayUntilFailed(t, o, trade, 20*time.Second)
		waitCountersMatch(t, s, 5*time.Second, pid)

		var out struct {
			Status   string `json:"status"`
			RefundNo string `json:"refund_no"`
		}
		if st := s.Admin.Do(t, "POST", "/api/v1/admin/orders/"+o.OrderNo+"/refund", nil, &out); st != 200 {
			t.Fatalf("operator refund: status %d", st)
		}
		if want := refund.Number(o.OrderNo, trade); out.Status != "refunding" || out.RefundNo != want {
			t.Errorf("operator refund answered %+v, want refunding with refund_no %s", out, want)
		}
		// In the same transaction as failed→refunding: the key recycled and
		// a type-4 stock flow.
		if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'RECYCLED'`, row.ID); n != 1 {
			t.Errorf("%d of the failed order's keys RECYCLED, want 1", n)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM stock_flows WHERE order_id = ? AND flow_type = ?`, row.ID, model.FlowRefundRestore); n != 1 {
			t.Errorf("%d refund-restore (type 4) stock flows, want 1", n)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM stock_flows WHERE order_id = ? AND flow_type IN (?, ?)`, row.ID, model.FlowSell, model.FlowCloseRestore); n != 0 {
			t.Errorf("%d sell or close-restore flows for a failed order", n)
		}
		s.WaitStatus(t, o.OrderNo, model.OrderRefunded, 20*time.Second)
		r := refundOf(t, o.OrderNo)
		if r.Status != model.RefundSucceeded || r.Reason != model.RefundReasonOperator || r.AmountCents != o.AmountCents || r.RefundNo != out.RefundNo {
			t.Errorf("refund %+v, want %s succeeded, reason operator, %d cents", r, out.RefundNo, o.AmountCents)
		}
		if st := s.Sim.Stats().Refunds[r.RefundNo]; st.Executed != 1 {
			t.Errorf("provider executed %s %d times, want once", r.RefundNo, st.Executed)
		}
		moves := strings.Join(s.Moves(t, o.OrderNo), ",")
		if !strings.HasSuffix(moves, "→failed,failed→refunding,refunding→refunded") {
			t.Errorf("history %s, want it to end failed→refunding→refunded", moves)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, row.ID); n != 0 {
			t.Errorf("refunded failed order has %d effects", n)
		}
		// The key is sellable again, in the ledger and in Redis.
		waitCountersMatch(t, s, 5*time.Second, pid)
		if n := sellable(t, s, pid); n != 2 {
			t.Errorf("sellable keys %d after the refund, want 2", n)
		}
		var e apiError
		if st := s.Admin.Do(t, "POST", "/api/v1/admin/orders/"+o.OrderNo+"/refund", nil, &e); st != 409 {
			t.Errorf("second operator refund: status %d %+v, want 409", st, e)
		}
	})

	t.Run("retry a refund the provider declared failed", func(t *testing.T) {
		orderNo, base := lateManual(t, "op-retry")
		var out struct {
			RefundNo string             `json:"refund_no"`
			Status   model.RefundStatus `json:"status"`
		}
		if st := s.Admin.Do(t, "POST", "/api/v1/admin/refunds/"+base+"/retry", nil, &out); st != 200 {
			t.Fatalf("retry: status %d", st)
		}
		if out.RefundNo != base+"-2" || out.Status != model.RefundProcessing {
			t.Errorf("retry answered %+v, want %s-2 processing", out, base)
		}
		s.WaitStatus(t, orderNo, model.OrderRefunded, 20*time.Second)
		r := refundOf(t, orderNo)
		if r.Status != model.RefundSucceeded || r.RefundNo != base+"-2" || r.BaseNo != base || r.NoGen != 2 {
			t.Errorf("refund after retry: %s (base %s, gen %d) %s, want %s-2 succeeded", r.RefundNo, r.BaseNo, r.NoGen, r.Status, base)
		}
		sim := s.Sim.Stats()
		if old, gen2 := sim.Refunds[base], sim.Refunds[base+"-2"]; old.Executed != 0 || gen2.Executed != 1 {
			t.Errorf("provider executed %s %d times and %s-2 %d times, want 0 and 1", base, old.Executed, base, gen2.Executed)
		}
		if l := manualList(t); slices.Contains(l, base) || slices.Contains(l, base+"-2") {
			t.Errorf("manual list still holds the retried refund: %v", l)
		}
		if n := manualAlerts(t, s, base+"-2"); n != 0 {
			t.Errorf("%d refund_manual alerts for the successful generation", n)
		}
	})

	t.Run("resolve a refund by hand", func(t *testing.T) {
		orderNo, no := lateManual(t, "op-resolve")
		if st := s.Admin.Do(t, "POST", "/api/v1/admin/refunds/"+no+"/resolve", nil, nil); st != 200 {
			t.Fatalf("resolve: status %d", st)
		}
		if r := refundOf(t, orderNo); r.Status != model.RefundSucceeded || r.RefundNo != no {
			t.Errorf("refund after resolve: %s %s, want %s succeeded", r.RefundNo, r.Status, no)
		}
		if st := s.OrderRow(t, orderNo).Status; st != model.OrderRefunded {
			t.Errorf("order after its only refund was resolved: %s, want refunded", st)
		}
		if st := s.Sim.Stats().Refunds[no]; st.Executed != 0 {
			t.Errorf("provider executed a refund resolved by hand %d times", st.Executed)
		}
		for _, action := range []string{"resolve", "retry"} {
			var e apiError
			if st := s.Admin.Do(t, "POST", "/api/v1/admin/refunds/"+no+"/"+action, nil, &e); st != 409 {
				t.Errorf("%s of a succeeded refund: status %d %+v, want 409", action, st, e)
			}
		}
		if slices.Contains(manualList(t), no) {
			t.Errorf("manual list still holds the resolved refund %s", no)
		}
	})
}
