package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// heldView is one held payment as GET /api/v1/admin/orders/{order_no} shows it.
type heldView struct {
	TradeNo     string `json:"trade_no"`
	AmountCents int64  `json:"amount_cents"`
	PaidOrderNo string `json:"paid_order_no"`
}

// TestReusedTradeIsHeld: a correctly signed notification naming order B with
// a trade number that already pays order A is acknowledged only once it is
// recorded — held for an operator against B, with an admin notification and
// a count in the stats — and never delivered nor refunded; its repeat adds
// nothing, and the same trade repeated for A stays a plain repeat.
//
// It runs on MariaDB and on the dev mode's SQLite (each has its migration).
func TestReusedTradeIsHeld(t *testing.T) {
	testenv.EachBackend(t, reusedTradeIsHeld)
}

func reusedTradeIsHeld(t *testing.T, backend testenv.Backend) {
	s := testenv.Start(t, testenv.Options{Backend: backend})
	card := s.NewCardProduct(t, "reuse-card", 300, 4)
	_, bc := s.NewUser(t, "reuse-buyer", 0)

	a := bc.CreateOrder(t, card, 1)
	b := bc.CreateOrder(t, card, 1)
	trade := "T-REUSE-" + a.OrderNo
	notify := func(orderNo string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"order_no": orderNo, "trade_no": trade, "amount_cents": a.AmountCents})
		st, raw, err := s.Notify(body, s.Sign(body))
		var got map[string]any
		if err != nil || st != 200 || json.Unmarshal(raw, &got) != nil || !cmp.Equal(successBody, got) {
			t.Fatalf("notify %s with %s: status %d body %s err %v; want 200 %v", orderNo, trade, st, raw, err, successBody)
		}
	}
	notify(a.OrderNo)
	s.WaitStatus(t, a.OrderNo, model.OrderFinished, 15*time.Second)

	// Order B with A's trade, redelivered by the provider 8 times at once.
	body, _ := json.Marshal(map[string]any{"order_no": b.OrderNo, "trade_no": trade, "amount_cents": a.AmountCents})
	answers := make([]error, 8)
	testenv.AtOnce(len(answers), func(i int) {
		st, raw, err := s.Notify(body, s.Sign(body))
		var got map[string]any
		if err == nil && (st != 200 || json.Unmarshal(raw, &got) != nil || !cmp.Equal(successBody, got)) {
			err = fmt.Errorf("status %d body %s", st, raw)
		}
		answers[i] = err
	})
	for i, err := range answers {
		if err != nil {
			t.Errorf("notify B with A's trade, copy %d: %v; want 200 %v", i+1, err, successBody)
		}
	}
	notify(b.OrderNo) // once more, after the burst
	notify(a.OrderNo) // and the trade again for the order it pays
	s.WaitQueuesIdle(t, 15*time.Second)

	var view struct {
		Status       string     `json:"status"`
		HeldPayments []heldView `json:"held_payments"`
	}
	if st := s.Admin.Do(t, "GET", "/api/v1/admin/orders/"+b.OrderNo, nil, &view); st != 200 {
		t.Fatalf("admin order view: status %d", st)
	}
	wantHeld := []heldView{{TradeNo: trade, AmountCents: a.AmountCents, PaidOrderNo: a.OrderNo}}
	if diff := cmp.Diff(wantHeld, view.HeldPayments); diff != "" {
		t.Errorf("held_payments of order B (-want +got):\n%s", diff)
	}
	if view.Status != model.OrderPending.String() {
		t.Errorf("order B status = %s, want pending (never delivered)", view.Status)
	}
	var stats map[string]any
	if st := s.Admin.Do(t, "GET", "/api/v1/admin/stats", nil, &stats); st != 200 || stats["held_payments"] != float64(1) {
		t.Errorf("stats held_payments = %v (status %d), want 1", stats["held_payments"], st)
	}

	// The ledger: one held row, one admin notification, nothing else for B.
	rowB := s.OrderRow(t, b.OrderNo)
	for _, c := range []struct {
		what  string
		query string
		args  []any
		want  int64
	}{
		{"held rows for (trade, B)", `SELECT COUNT(*) FROM held_payments WHERE trade_no = ? AND order_id = ?`, []any{trade, rowB.ID}, 1},
		{"held rows in all", `SELECT COUNT(*) FROM held_payments`, nil, 1},
		{"admin notifications of the held payment", `SELECT COUNT(*) FROM notifications WHERE notify_id = ? AND kind = 'payment_held' AND recipient = 'admin'`, []any{"payment-held:" + trade + ":" + b.OrderNo}, 1},
		{"notifications in all", `SELECT COUNT(*) FROM notifications`, nil, 1},
		{"payments of B", `SELECT COUNT(*) FROM payments WHERE order_id = ?`, []any{rowB.ID}, 0},
		{"payments of the trade", `SELECT COUNT(*) FROM payments WHERE trade_no = ?`, []any{trade}, 1},
		{"refunds", `SELECT COUNT(*) FROM refunds`, nil, 0},
		{"effects of B", `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, []any{rowB.ID}, 0},
	} {
		if n := s.Count(t, c.query, c.args...); n != c.want {
			t.Errorf("%s = %d, want %d", c.what, n, c.want)
		}
	}
	if diff := cmp.Diff([]string{"-→pending"}, s.Moves(t, b.OrderNo)); diff != "" {
		t.Errorf("history of B (-want +got):\n%s", diff)
	}
	assertDeliveredOnce(t, s, s.OrderRow(t, a.OrderNo), trade, []string{trade})

	// B's own payment still pays it; the held one stays for the operator.
	own, st, err := s.Pay.Pay(context.Background(), b.OrderNo, b.AmountCents, "")
	if err != nil || st != 200 {
		t.Fatalf("B's own payment: status %d err %v", st, err)
	}
	s.WaitStatus(t, b.OrderNo, model.OrderFinished, 15*time.Second)
	s.WaitQueuesIdle(t, 15*time.Second)
	assertDeliveredOnce(t, s, s.OrderRow(t, b.OrderNo), own, []string{own})
	if n := s.Count(t, `SELECT COUNT(*) FROM held_payments WHERE order_id = ?`, rowB.ID); n != 1 {
		t.Errorf("held rows for B after its own payment = %d, want 1", n)
	}
}
