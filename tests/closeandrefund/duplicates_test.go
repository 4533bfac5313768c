package closeandrefund

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/paysim"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// Done-when 3: repeated and wrong payments are recorded once and refunded
// exactly once; a wrong amount is never delivered and the admin is alerted.
func TestDuplicateAndWrongPayments(t *testing.T) {
	const ttl = 4 * time.Second
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) { c.OrderTTL = svc.Duration(ttl) }})
	ctx := context.Background()

	// burst has the simulator send the same signed notification n times at
	// once and requires orderflow to acknowledge every copy.
	burst := func(t *testing.T, orderNo string, amount int64, trade string, n int) {
		t.Helper()
		res, err := s.Pay.PayTimes(ctx, paysim.PayRequest{OrderNo: orderNo, AmountCents: amount, TradeNo: trade, Times: n})
		if err != nil {
			t.Fatalf("pay %s ×%d: %v", orderNo, n, err)
		}
		for i, st := range res.StatusCodes {
			if st != 200 {
				t.Fatalf("pay %s ×%d: copy %d answered %d (all: %v)", orderNo, n, i, st, res.StatusCodes)
			}
		}
	}
	orderOf := func(t *testing.T, no string) *model.Order { t.Helper(); return s.OrderRow(t, no) }
	paymentsFor := func(t *testing.T, orderID int64) []model.Payment {
		t.Helper()
		return testenv.Rows[model.Payment](t, s, `SELECT * FROM payments WHERE order_id = ? ORDER BY id`, orderID)
	}
	refundsFor := func(t *testing.T, orderID int64) []model.Refund {
		t.Helper()
		return testenv.Rows[model.Refund](t, s, `SELECT * FROM refunds WHERE order_id = ? ORDER BY id`, orderID)
	}
	waitRefundsSucceeded := func(t *testing.T, orderID int64, want int) []model.Refund {
		t.Helper()
		var rs []model.Refund
		testenv.Eventually(t, 20*time.Second, "refunds succeeded", func() (bool, error) {
			rs = refundsFor(t, orderID)
			ok := len(rs) == want
			for _, r := range rs {
				ok = ok && r.Status == model.RefundSucceeded
			}
			return ok, fmt.Errorf("refunds %+v", rs)
		})
		return rs
	}

	t.Run("ten concurrent identical late notifications", func(t *testing.T) {
		pid := s.NewProduct(t, map[string]any{"sku": "dup-late", "kind": "card", "price_cents": 500})
		s.AddCards(t, pid, "DUPLATE", 1)
		_, buyer := s.NewUser(t, "dup-late", 0)
		o := buyer.CreateOrder(t, pid, 1)
		if err := cancelOrder(buyer, o.OrderNo); err != nil {
			t.Fatal(err)
		}
		const trade = "TDUPLATE1"
		rn := refund.Number(o.OrderNo, trade)
		burst(t, o.OrderNo, o.AmountCents, trade, 10)
		row := s.WaitStatus(t, o.OrderNo, model.OrderRefunded, 20*time.Second)

		check := func(t *testing.T) {
			t.Helper()
			ps := paymentsFor(t, row.ID)
			if len(ps) != 1 || ps[0].Disposition != model.PaymentLate || ps[0].TradeNo != trade {
				t.Errorf("payments = %+v, want one late payment by %s", ps, trade)
			}
			rs := refundsFor(t, row.ID)
			if len(rs) != 1 || rs[0].RefundNo != rn || rs[0].Status != model.RefundSucceeded || rs[0].AmountCents != o.AmountCents {
				t.Errorf("refunds = %+v, want one succeeded refund %s of %d cents", rs, rn, o.AmountCents)
			}
			if st := s.Sim.Stats().Refunds[rn]; st.Executed != 1 {
				t.Errorf("provider executed refund %s %d times (%d calls), want once", rn, st.Executed, st.Calls)
			}
			if p, want := strings.Join(s.Moves(t, o.OrderNo), ","), "-→pending,pending→closed,closed→refunding,refunding→refunded"; p != want {
				t.Errorf("history %s, want %s", p, want)
			}
		}
		check(t)
		// The provider redelivers the same notification after the refund
		// finished: still one payment, one refund, one execution.
		burst(t, o.OrderNo, o.AmountCents, trade, 10)
		waitIdle(t, s, 10*time.Second)
		if st := orderOf(t, o.OrderNo).Status; st != model.OrderRefunded {
			t.Errorf("after a second burst the order is %s, want refunded", st)
		}
		check(t)
	})

	t.Run("two trades race for one pending order", func(t *testing.T) {
		pid := s.NewProduct(t, map[string]any{"sku": "dup-trades", "kind": "card", "price_cents": 700})
		s.AddCards(t, pid, "DUPTRADE", 1)
		_, buyer := s.NewUser(t, "dup-trades", 0)
		o := buyer.CreateOrder(t, pid, 1)
		trades := []string{"TDUPTRADEA", "TDUPTRADEB"}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, tr := range trades {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := s.Pay.PayTimes(ctx, paysim.PayRequest{OrderNo: o.OrderNo, AmountCents: o.AmountCents, TradeNo: tr, Times: 5})
				if err == nil {
					for _, st := range res.StatusCodes {
						if st != 200 {
							err = fmt.Errorf("trade %s: answers %v", tr, res.StatusCodes)
						}
					}
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		row := s.WaitStatus(t, o.OrderNo, model.OrderFinished, 20*time.Second)
		rs := waitRefundsSucceeded(t, row.ID, 1)
		if row.TradeNo == nil {
			t.Fatal("finished order has no trade_no")
		}
		winner := *row.TradeNo
		loser := trades[0]
		if winner == loser {
			loser = trades[1]
		}
		disp := map[string]model.Disposition{}
		for _, p := range paymentsFor(t, row.ID) {
			disp[p.TradeNo] = p.Disposition
		}
		if len(disp) != 2 || disp[winner] != model.PaymentApplied || disp[loser] != model.PaymentDuplicate {
			t.Errorf("dispositions %v, want %s applied and %s duplicate", disp, winner, loser)
		}
		r := rs[0]
		if r.TradeNo != loser || r.RefundNo != refund.Number(o.OrderNo, loser) || r.Reason != model.RefundReasonDuplicate || r.AmountCents != o.AmountCents {
			t.Errorf("refund %+v, want the duplicate trade %s refunded in full", r, loser)
		}
		if st := s.Sim.Stats().Refunds[r.RefundNo]; st.Executed != 1 {
			t.Errorf("provider executed %s %d times, want once", r.RefundNo, st.Executed)
		}
		// The order keeps its status and its delivery.
		waitIdle(t, s, 10*time.Second)
		if st := orderOf(t, o.OrderNo).Status; st != model.OrderFinished {
			t.Errorf("order is %s after the duplicate was refunded, want finished", st)
		}
		if cards := buyer.Order(t, o.OrderNo).Cards; len(cards) != 1 {
			t.Errorf("cards %v, want the one key", cards)
		}
		for _, m := range s.Moves(t, o.OrderNo) {
			if strings.Contains(m, "closed") || strings.Contains(m, "refund") {
				t.Errorf("delivered order moved %s: %v", m, s.Moves(t, o.OrderNo))
			}
		}
	})

	t.Run("wrong amount on a pending order", func(t *testing.T) {
		pid := s.NewProduct(t, map[string]any{"sku": "dup-wrong", "kind": "card", "price_cents": 500})
		s.AddCards(t, pid, "WRONG", 1)
		_, buyer := s.NewUser(t, "dup-wrong", 0)
		o := buyer.CreateOrder(t, pid, 1)
		const trade, paid = "TWRONG1", int64(499)
		burst(t, o.OrderNo, paid, trade, 3)
		row := orderOf(t, o.OrderNo)
		rs := waitRefundsSucceeded(t, row.ID, 1)
		checkedAt := time.Now()

		ps := paymentsFor(t, row.ID)
		if len(ps) != 1 || ps[0].Disposition != model.PaymentMismatch || ps[0].AmountCents != paid {
			t.Errorf("payments %+v, want one mismatch of %d cents", ps, paid)
		}
		r := rs[0]
		if r.AmountCents != paid || r.Reason != model.RefundReasonMismatch || r.RefundNo != refund.Number(o.OrderNo, trade) {
			t.Errorf("refund %+v, want %d cents (what was paid), reason mismatch, number %s", r, paid, refund.Number(o.OrderNo, trade))
		}
		if st := s.Sim.Stats().Refunds[r.RefundNo]; st.Executed != 1 {
			t.Errorf("provider executed %s %d times, want once", r.RefundNo, st.Executed)
		}
		notes, err := s.SC.Store.NotificationsByKind(ctx, "payment_mismatch")
		if err != nil {
			t.Fatal(err)
		}
		mentions := 0
		for _, n := range notes {
			if strings.Contains(n.Subject+n.Message, o.OrderNo) {
				mentions++
			}
		}
		if mentions != 1 {
			t.Errorf("%d payment_mismatch notifications mention %s, want 1 (all: %+v)", mentions, o.OrderNo, notes)
		}
		// Nothing delivered: still pending (it was checked before its expiry),
		// no effect, its key still locked for it.
		row = orderOf(t, o.OrderNo)
		expired := !checkedAt.Before(row.ExpireAt)
		if (row.Status != model.OrderPending && !(expired && row.Status == model.OrderClosed)) || row.TradeNo != nil {
			t.Errorf("after a wrong amount the order is %s (trade %v), want pending with no trade", row.Status, row.TradeNo)
		}
		if expired {
			t.Logf("note: the refund finished only after the order's expiry (%v late); pending not checked strictly", checkedAt.Sub(row.ExpireAt))
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, row.ID); n != 0 {
			t.Errorf("%d order_effects rows for a wrongly paid order", n)
		}
		// It closes at its expiry like any unpaid order, and its key comes back.
		s.WaitStatus(t, o.OrderNo, model.OrderClosed, ttl+10*time.Second)
		if p, want := strings.Join(s.Moves(t, o.OrderNo), ","), "-→pending,pending→closed"; p != want {
			t.Errorf("history %s, want %s", p, want)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, row.ID); n != 0 {
			t.Errorf("%d order_effects rows for a wrongly paid order", n)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'RECYCLED'`, pid); n != 1 {
			t.Errorf("%d RECYCLED keys after the close, want 1", n)
		}
		waitCountersMatch(t, s, 10*time.Second, pid)
	})
}
