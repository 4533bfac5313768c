package httpapi

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"orderflow/internal/paysim"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

var (
	successBody = map[string]any{"result": "success"}
	happyPath   = []string{"-→pending", "pending→paid", "paid→claimed", "claimed→finished"}
)

// TestDuplicateNotifications is done-when 3: the same payment notification
// (same trade_no) arriving 20 times at once is acknowledged every time and
// applied once — one pending→paid, one payment row, one delivery. A second,
// different trade for an order already paid is acknowledged, recorded as a
// duplicate for refund, and delivers nothing more.
func TestDuplicateNotifications(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	recharge := s.NewProduct(t, map[string]any{"sku": "dup-topup", "kind": "recharge", "price_cents": 700, "credit_cents": 800})
	card := s.NewProduct(t, map[string]any{"sku": "dup-card", "kind": "card", "price_cents": 250})
	s.AddCards(t, card, "DUP", 5)
	buyer, bc := s.NewUser(t, "dup-buyer", 100)

	t.Run("20 identical signed notifications at once", func(t *testing.T) {
		o := bc.CreateOrder(t, recharge, 2)
		trade := "T-DUP-" + o.OrderNo
		body, _ := json.Marshal(map[string]any{"order_no": o.OrderNo, "trade_no": trade, "amount_cents": o.AmountCents})
		sig := s.Sign(body)

		type answer struct {
			status int
			body   []byte
			err    error
		}
		answers := make([]answer, 20)
		testenv.AtOnce(len(answers), func(i int) {
			st, raw, err := s.Notify(body, sig)
			answers[i] = answer{st, raw, err}
		})
		for i, a := range answers {
			var got map[string]any
			if a.err != nil || a.status != 200 || json.Unmarshal(a.body, &got) != nil || !cmp.Equal(successBody, got) {
				t.Errorf("notification #%d: status %d body %s err %v, want 200 %v", i, a.status, a.body, a.err, successBody)
			}
		}

		s.WaitStatus(t, o.OrderNo, model.OrderFinished, 15*time.Second)
		s.WaitQueuesIdle(t, 15*time.Second)
		row := s.OrderRow(t, o.OrderNo)
		assertDeliveredOnce(t, s, row, trade, []string{trade})
		if n := s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE ref = ?`, "order:"+o.OrderNo); n != 1 {
			t.Errorf("wallet entries for the order = %d, want 1", n)
		}
		if bal := s.Count(t, `SELECT balance_cents FROM users WHERE id = ?`, buyer.ID); bal != 100+2*800 {
			t.Errorf("balance = %d, want %d (credited once)", bal, 100+2*800)
		}
	})

	t.Run("20 identical notifications from the simulator", func(t *testing.T) {
		o := bc.CreateOrder(t, card, 2)
		res, err := s.Pay.PayTimes(ctx, paysim.PayRequest{OrderNo: o.OrderNo, AmountCents: o.AmountCents, Times: 20})
		if err != nil {
			t.Fatalf("PayTimes: %v", err)
		}
		want := make([]int, 20)
		for i := range want {
			want[i] = 200
		}
		if diff := cmp.Diff(want, res.StatusCodes); diff != "" {
			t.Errorf("status codes of the burst (-want +got):\n%s", diff)
		}
		var first map[string]any
		if json.Unmarshal(res.Body, &first) != nil || !cmp.Equal(successBody, first) {
			t.Errorf("first answer %s, want %v", res.Body, successBody)
		}

		s.WaitStatus(t, o.OrderNo, model.OrderFinished, 15*time.Second)
		s.WaitQueuesIdle(t, 15*time.Second)
		row := s.OrderRow(t, o.OrderNo)
		assertDeliveredOnce(t, s, row, res.TradeNo, []string{res.TradeNo})
		if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'SOLD'`, row.ID); n != 2 {
			t.Errorf("keys sold to the order = %d, want 2", n)
		}
		if v := bc.Order(t, o.OrderNo); len(v.Cards) != 2 {
			t.Errorf("cards on the order = %v, want 2", v.Cards)
		}
	})

	t.Run("a second trade for a paid order", func(t *testing.T) {
		o := bc.CreateOrder(t, card, 1)
		first, st, err := s.Pay.Pay(ctx, o.OrderNo, o.AmountCents, "")
		if err != nil || st != 200 {
			t.Fatalf("first payment: status %d err %v", st, err)
		}
		s.WaitStatus(t, o.OrderNo, model.OrderFinished, 15*time.Second)
		cardsBefore := bc.Order(t, o.OrderNo).Cards

		// The second trade arrives twice (a provider redelivery): still one record.
		second := "T-SECOND-" + o.OrderNo
		for i := range 2 {
			res, err := s.Pay.PayTimes(ctx, paysim.PayRequest{OrderNo: o.OrderNo, AmountCents: o.AmountCents, TradeNo: second})
			var got map[string]any
			if err != nil || res.StatusCode != 200 || json.Unmarshal(res.Body, &got) != nil || !cmp.Equal(successBody, got) {
				t.Fatalf("second trade, copy %d: status %d body %s err %v; want 200 %v", i+1, res.StatusCode, res.Body, err, successBody)
			}
		}
		s.WaitQueuesIdle(t, 15*time.Second)

		row := s.OrderRow(t, o.OrderNo)
		if row.Status != model.OrderFinished {
			t.Errorf("order status = %s after a second trade, want finished (it keeps its status)", row.Status)
		}
		assertDeliveredOnce(t, s, row, first, []string{first, second})
		disp := testenv.Rows[struct{ TradeNo, Disposition string }](t, s, `SELECT trade_no, disposition FROM payments WHERE order_id = ? ORDER BY id`, row.ID)
		wantDisp := []struct{ TradeNo, Disposition string }{{first, model.PaymentApplied.String()}, {second, model.PaymentDuplicate.String()}}
		if diff := cmp.Diff(wantDisp, disp); diff != "" {
			t.Errorf("payments (-want +got):\n%s", diff)
		}
		// The second trade's money goes back on its own refund record, once.
		var refunds []struct {
			TradeNo     string
			AmountCents int64
		}
		if err := s.SC.DB.Raw(`SELECT trade_no, amount_cents FROM refunds WHERE order_id = ?`, row.ID).Scan(&refunds).Error; err != nil {
			t.Fatal(err)
		}
		wantRefunds := []struct {
			TradeNo     string
			AmountCents int64
		}{{second, o.AmountCents}}
		if diff := cmp.Diff(wantRefunds, refunds); diff != "" {
			t.Errorf("refunds (-want +got):\n%s", diff)
		}
		if got := bc.Order(t, o.OrderNo).Cards; !cmp.Equal(cardsBefore, got) || len(got) != 1 {
			t.Errorf("cards after the second trade = %v, want unchanged %v", got, cardsBefore)
		}
	})
}

// assertDeliveredOnce checks the ledger for one order: the happy-path history
// (a single pending→paid), the payments recorded (trades, in order), the
// order paid by applied, one effect row, and one activation generation.
func assertDeliveredOnce(t *testing.T, s *testenv.Stack, o *model.Order, applied string, trades []string) {
	t.Helper()
	if diff := cmp.Diff(happyPath, s.Moves(t, o.OrderNo)); diff != "" {
		t.Errorf("history of %s (-want +got):\n%s", o.OrderNo, diff)
	}
	got := testenv.Rows[string](t, s, `SELECT trade_no FROM payments WHERE order_id = ? ORDER BY id`, o.ID)
	if diff := cmp.Diff(trades, got); diff != "" {
		t.Errorf("payments of %s (-want +got):\n%s", o.OrderNo, diff)
	}
	if o.TradeNo == nil || *o.TradeNo != applied {
		t.Errorf("order %s trade_no = %v, want %s", o.OrderNo, o.TradeNo, applied)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, o.ID); n != 1 {
		t.Errorf("order_effects rows for %s = %d, want 1", o.OrderNo, n)
	}
	if o.Attempts != 1 || o.ActivateGen != 1 {
		t.Errorf("order %s attempts %d gen %d, want 1 1 (one activation)", o.OrderNo, o.Attempts, o.ActivateGen)
	}
	wantSells := int64(0)
	if o.Kind == model.KindCard {
		wantSells = 1
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM stock_flows WHERE order_id = ? AND flow_type = ?`, o.ID, model.FlowSell); n != wantSells {
		t.Errorf("sell stock flows for %s = %d, want %d", o.OrderNo, n, wantSells)
	}
}
