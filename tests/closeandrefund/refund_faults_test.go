package closeandrefund

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/paysim"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// Done-when 2: with the provider failing 30% and timing out 10% of refund
// calls (create and query alike), 200 late payments each end refunded, or
// with their refund in manual and the admin alerted; at least 190 end
// refunded; the provider's own count shows no refund executed twice; every
// refund_no is the deterministic number of (order, trade).
func TestLatePaymentRefundsThroughAFaultyProvider(t *testing.T) {
	const (
		nOrders = 200
		nBuyers = 20
	)
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.MaxPending = nOrders / nBuyers
		c.LogLevel = "error" // hundreds of expected "attempt failed" warnings
	}})
	pid, buyers := cardShop(t, s, "late", 250, nOrders, nBuyers)

	// Orders closed by their buyers first.
	orders := make([]created, nOrders)
	if err := parallel(nOrders, 12, func(i int) error {
		o, err := mustCreate(buyers[i%nBuyers], pid, 1)
		if err != nil {
			return err
		}
		orders[i] = o
		return cancelOrder(buyers[i%nBuyers], o.OrderNo)
	}); err != nil {
		t.Fatalf("create and cancel: %v", err)
	}

	// The provider turns unreliable: 30% of refund calls answer 500, 10% hang
	// for 1 s (twice the client's 500 ms timeout) and then answer 504, half
	// of those after applying the refund. Refunds it accepts stay processing
	// for 50 ms, so the active query and the callback both get exercised.
	s.Sim.SetKnobs(paysim.Knobs{TimeoutDelay: time.Second, CallbackDelay: 50 * time.Millisecond})
	s.Sim.SetFailRate(0.3)
	s.Sim.SetTimeoutRate(0.1)
	if k := s.Sim.Knobs(); k.FailRate != 0.3 || k.TimeoutRate != 0.1 || k.TimeoutDelay != time.Second {
		t.Fatalf("simulator knobs = %+v", k)
	}
	if s.Config.PayTimeout.D() >= time.Second {
		t.Fatalf("the provider client timeout %v must be shorter than the injected hang", s.Config.PayTimeout.D())
	}

	// The late payments, with trade numbers we choose so the refund numbers
	// can be predicted.
	trades := make([]string, nOrders)
	start := time.Now()
	if err := parallel(nOrders, 12, func(i int) error {
		trades[i] = fmt.Sprintf("TLATE%04d", i)
		_, err := payOrder(s, orders[i].OrderNo, orders[i].AmountCents, trades[i])
		return err
	}); err != nil {
		t.Fatalf("late payments: %v", err)
	}

	// Settled: every order refunded, or refunding with its refund in manual.
	testenv.Eventually(t, 120*time.Second, "every late payment refunded or in manual", func() (bool, error) {
		done := s.Count(t, `SELECT COUNT(*) FROM orders o WHERE o.status = ? OR (o.status = ? AND EXISTS
			(SELECT 1 FROM refunds r WHERE r.order_id = o.id AND r.status = ?))`,
			model.OrderRefunded, model.OrderRefunding, model.RefundManual)
		return done == nOrders, fmt.Errorf("%d of %d settled; orders %v", done, nOrders, statusCounts(t, s))
	})
	settle := time.Since(start)
	waitIdle(t, s, 30*time.Second)

	chk := newChecker(t)
	byNo := ordersByNo(t, s)
	events := orderEvents(t, s)
	refByOrder := refundsByOrder(t, s)
	payByOrder := paymentsByOrder(t, s)
	manualAlerts := map[string]int{}
	notes, err := s.SC.Store.NotificationsByKind(t.Context(), "refund_manual")
	if err != nil {
		t.Fatal(err)
	}
	sim := s.Sim.Stats()

	ours := map[string]bool{}
	var nRefunded, nManual, manualExecuted int
	for _, n := range notes {
		for i := range orders {
			if no := refund.Number(orders[i].OrderNo, trades[i]); strings.Contains(n.Subject+n.Message, no) {
				manualAlerts[no]++
			}
		}
		if n.Recipient != "admin" {
			chk.errorf("refund_manual notification %s goes to %q, want admin", n.NotifyID, n.Recipient)
		}
	}
	for i, c := range orders {
		o := byNo[c.OrderNo]
		want := refund.Number(c.OrderNo, trades[i])
		ours[want] = true
		ps, rs := payByOrder[o.ID], refByOrder[o.ID]
		if len(ps) != 1 || ps[0].Disposition != model.PaymentLate || ps[0].TradeNo != trades[i] {
			chk.errorf("order %s: payments %+v, want one late payment by %s", c.OrderNo, ps, trades[i])
		}
		if len(rs) != 1 {
			chk.errorf("order %s: %d refunds, want 1", c.OrderNo, len(rs))
			continue
		}
		r := rs[0]
		if r.RefundNo != want || r.BaseNo != want || r.NoGen != 1 {
			chk.errorf("order %s trade %s: refund_no %s (base %s, gen %d), want the deterministic %s",
				c.OrderNo, trades[i], r.RefundNo, r.BaseNo, r.NoGen, want)
		}
		if r.AmountCents != c.AmountCents || r.Reason != model.RefundReasonLate {
			chk.errorf("refund %s: %d cents, reason %s; want %d cents, late", r.RefundNo, r.AmountCents, r.Reason, c.AmountCents)
		}
		executed := sim.Refunds[r.RefundNo].Executed
		switch {
		case o.Status == model.OrderRefunded && r.Status == model.RefundSucceeded:
			nRefunded++
			if executed != 1 {
				chk.errorf("refund %s succeeded but the provider executed it %d times", r.RefundNo, executed)
			}
			if manualAlerts[r.RefundNo] != 0 {
				chk.errorf("succeeded refund %s has a refund_manual alert", r.RefundNo)
			}
			if p, want := path(events[c.OrderNo]), "-→pending,pending→closed,closed→refunding,refunding→refunded"; p != want {
				chk.errorf("order %s: history %s, want %s", c.OrderNo, p, want)
			}
		case o.Status == model.OrderRefunding && r.Status == model.RefundManual:
			nManual++
			manualExecuted += executed
			if manualAlerts[r.RefundNo] != 1 {
				chk.errorf("refund %s in manual has %d refund_manual alerts, want 1", r.RefundNo, manualAlerts[r.RefundNo])
			}
		default:
			chk.errorf("order %s in %s with refund %s in %s", c.OrderNo, o.Status, r.RefundNo, r.Status)
		}
		if executed > 1 {
			chk.errorf("provider executed refund %s %d times", r.RefundNo, executed)
		}
	}
	if sim.MaxExecuted > 1 {
		chk.errorf("provider MaxExecuted = %d, want <= 1", sim.MaxExecuted)
	}
	var calls, queries int
	for no, st := range sim.Refunds {
		calls += st.Calls
		queries += st.Queries
		if !ours[no] {
			chk.errorf("provider was called with out_request_no %s, not the deterministic number of any (order, trade)", no)
		}
	}
	if len(notes) != nManual {
		chk.errorf("%d refund_manual alerts for %d refunds in manual", len(notes), nManual)
	}
	if nRefunded < 190 {
		chk.errorf("%d of %d late payments ended refunded, want at least 190 (%d manual)", nRefunded, nOrders, nManual)
	}
	if calls+queries <= nOrders {
		chk.errorf("the provider saw only %d calls and %d queries for %d refunds: the faults were not exercised", calls, queries, nOrders)
	}
	// Cancelled orders never sell or keep their keys (a recycled key may have
	// been locked and recycled again by a later order; unused ones stay UNSOLD).
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE status IN ('SOLD', 'LOCKED')`); n != 0 {
		chk.errorf("%d keys SOLD or LOCKED after %d cancelled orders", n, nOrders)
	}
	chk.done()
	waitCountersMatch(t, s, 10*time.Second, pid)
	t.Logf("%d refunded, %d manual (provider executed %d of the manual ones); settled in %v; provider saw %d refund calls and %d queries; callbacks sent %d, failed %d",
		nRefunded, nManual, manualExecuted, settle.Round(time.Millisecond), calls, queries, sim.CallbacksSent, sim.CallbacksFailed)
}
