package audit_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"orderflow/internal/audit"
	"orderflow/internal/domain/order"
	"orderflow/internal/domain/refund"
	paydto "orderflow/internal/infra/pay"
	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// healthy is a small ledger built by driving the real system, plus the
// numbers the corruptions below aim at.
type healthy struct {
	s        *testenv.Stack
	provider map[string]audit.ProviderRefund

	buyerID       int64
	cardProduct   int64
	cardOrder     string // finished, quantity 2, one key refunded by an operator
	subOrder      string // finished subscription
	rechargeOrder string // finished recharge, also paid by a second trade (refunded)
	closedOrder   string // cancelled unpaid card order
	lateOrder     string // cancelled, then paid: refunded
	lateTrade     string
	settledGroup  string
	failedGroup   string
	// planted is yesterday's statement break the ledger was given on
	// purpose: a payment taken for an order that is not ours.
	planted []audit.PlantedBreak
}

func buildHealthy(t *testing.T) *healthy {
	t.Helper()
	ctx := context.Background()
	s := testenv.Start(t, testenv.Options{})
	h := &healthy{s: s}

	buyer, buyerC := s.NewUser(t, "buyer", 10_000)
	h.buyerID = buyer.ID
	p1, p1C := s.NewUser(t, "p1", 5_000)
	_, p2C := s.NewUser(t, "p2", 5_000)
	poor, poorC := s.NewUser(t, "poor", 0)
	_ = p1
	_ = poor

	h.cardProduct = s.NewProduct(t, map[string]any{"sku": "card", "kind": "card", "price_cents": 500})
	s.AddCards(t, h.cardProduct, "AUDIT", 6)
	subProduct := s.NewProduct(t, map[string]any{"sku": "sub", "kind": "subscription", "price_cents": 300, "days": 30})
	rechProduct := s.NewProduct(t, map[string]any{"sku": "rech", "kind": "recharge", "price_cents": 900, "credit_cents": 1000})
	limProduct := s.NewProduct(t, map[string]any{"sku": "lim", "kind": "recharge", "price_cents": 100, "credit_cents": 100, "stock": 5})

	pay := func(orderNo string, amount int64, trade string) string {
		t.Helper()
		tr, st, err := s.Pay.Pay(ctx, orderNo, amount, trade)
		if err != nil || st != 200 {
			t.Fatalf("pay %s: status %d, %v", orderNo, st, err)
		}
		return tr
	}
	cancel := func(orderNo string) {
		t.Helper()
		if st := buyerC.Do(t, "POST", "/api/v1/orders/"+orderNo+"/cancel", nil, nil); st != 200 {
			t.Fatalf("cancel %s: %d", orderNo, st)
		}
	}

	card := buyerC.CreateOrder(t, h.cardProduct, 2)
	sub := buyerC.CreateOrder(t, subProduct, 1)
	rech := buyerC.CreateOrder(t, rechProduct, 2)
	lim := buyerC.CreateOrder(t, limProduct, 1)
	h.cardOrder, h.subOrder, h.rechargeOrder = card.OrderNo, sub.OrderNo, rech.OrderNo
	trades := map[string]string{}
	for _, o := range []testenv.OrderView{card, sub, rech, lim} {
		trades[o.OrderNo] = pay(o.OrderNo, o.AmountCents, "")
	}
	for _, o := range []testenv.OrderView{card, sub, rech, lim} {
		s.WaitStatus(t, o.OrderNo, model.OrderFinished, 15*time.Second)
	}
	pay(rech.OrderNo, rech.AmountCents, "") // a second trade: recorded and refunded
	// One bad key of two: an operator returns half of the card order's payment.
	if _, err := s.UC.Orders.Refund(ctx, card.OrderNo, order.RefundRequest{AmountCents: card.AmountCents / 2, Reason: "one bad key", Key: "audit-part"}); err != nil {
		t.Fatalf("partial refund of %s: %v", card.OrderNo, err)
	}
	// An operator's look at the codes: a note in the history, no move.
	if codes, err := s.UC.Orders.RevealCards(ctx, card.OrderNo, "the audit test"); err != nil || len(codes) != 2 {
		t.Fatalf("reveal %s: %v, %v", card.OrderNo, codes, err)
	}

	// A chargeback on the card order, opened and lost: the money taken back.
	for _, status := range []string{"needs_response", "lost"} {
		if err := s.UC.Payments.Disputes.Apply(ctx, paydto.NamePaysim, &paydto.DisputeUpdate{
			ID: "du_audit", TradeNo: trades[card.OrderNo], Status: status, Reason: "fraudulent", AmountCents: card.AmountCents,
		}); err != nil {
			t.Fatalf("dispute %s: %v", status, err)
		}
	}

	closed := buyerC.CreateOrder(t, h.cardProduct, 1)
	h.closedOrder = closed.OrderNo
	cancel(closed.OrderNo)
	late := buyerC.CreateOrder(t, subProduct, 1)
	h.lateOrder = late.OrderNo
	cancel(late.OrderNo)
	h.lateTrade = pay(late.OrderNo, late.AmountCents, "")
	s.WaitStatus(t, late.OrderNo, model.OrderRefunded, 15*time.Second)

	newGroup := func(title string, members ...*testenv.Client) string {
		t.Helper()
		var g struct {
			GroupNo string `json:"group_no"`
		}
		deadline := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
		if st := buyerC.Do(t, "POST", "/api/v1/groups", map[string]any{"title": title, "price_cents": 700, "deadline": deadline}, &g); st != 201 {
			t.Fatalf("create group: %d", st)
		}
		for _, m := range members {
			if st := m.Do(t, "POST", "/api/v1/groups/"+g.GroupNo+"/join", nil, nil); st != 200 {
				t.Fatalf("join %s: %d", g.GroupNo, st)
			}
		}
		return g.GroupNo
	}
	h.settledGroup = newGroup("settles", p1C, p2C)
	h.failedGroup = newGroup("short member", p1C, poorC)
	waitGroup := func(no string, status model.GroupStatus) {
		t.Helper()
		testenv.Eventually(t, 20*time.Second, "group "+no+" "+status.String(), func() (bool, error) {
			return s.Count(t, "SELECT COUNT(*) FROM `groups` WHERE group_no = ? AND status = ?", no, status) == 1, nil
		})
	}
	waitGroup(h.settledGroup, model.GroupSettled)
	waitGroup(h.failedGroup, model.GroupFailed)

	// Yesterday's statement, with one difference planted: the simulator
	// took a payment for an order that is not ours, unseen.
	day := time.Now().UTC().AddDate(0, 0, -1)
	s.Sim.SetClock(func() time.Time { return time.Date(day.Year(), day.Month(), day.Day(), 12, 0, 0, 0, time.UTC) })
	foreign, err := s.Sim.PayUnseen("O-NOT-OURS-AUDIT", 300)
	s.Sim.SetClock(nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.UC.Statements.Open(ctx, paydto.NamePaysim, day.Format("2006-01-02"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "statement run done", func() (bool, error) {
		v, err := s.UC.Statements.Get(ctx, run.ID)
		return err == nil && v.Run.Status == model.StatementDone, err
	})
	h.planted = []audit.PlantedBreak{{What: "payment for no order of ours", Provider: paydto.NamePaysim, Kind: "unknown_payment",
		TradeNo: foreign, OrderNo: "O-NOT-OURS-AUDIT", Status: model.BreakOpen}}

	testenv.Eventually(t, 20*time.Second, "ledger at rest", func() (bool, error) {
		return s.Count(t, `SELECT COUNT(*) FROM refunds WHERE status <> ?`, model.RefundSucceeded) == 0 &&
			s.Count(t, `SELECT COUNT(*) FROM refunds`) == 3 &&
			s.Count(t, `SELECT COUNT(*) FROM outbox`) == 0 &&
			s.Count(t, `SELECT COUNT(*) FROM orders WHERE status NOT IN (3, 5, 8)`) == 0, nil
	})
	if h.provider, err = audit.FetchProvider(ctx, s.SimURL); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *healthy) audit(t *testing.T, dsn string, provider map[string]audit.ProviderRefund) *audit.Report {
	t.Helper()
	db, err := audit.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rep, err := audit.Run(context.Background(), audit.Options{
		DB: db, Redis: h.s.SC.Redis, Provider: provider, Grace: time.Second, Planted: h.planted,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func printed(rep *audit.Report) string {
	var b bytes.Buffer
	rep.Print(&b)
	return b.String()
}

// The audit passes a healthy ledger and names every rule's corruption
// planted in a copy of it.
func TestAudit(t *testing.T) {
	h := buildHealthy(t)
	src := h.s.Config.MySQLDSN

	rep := h.audit(t, src, h.provider)
	if rep.Failed() {
		t.Fatalf("healthy ledger has violations:\n%s", printed(rep))
	}
	for _, res := range rep.Results {
		if res.Skipped != "" || res.Checked == 0 {
			t.Errorf("rule %s checked nothing on the healthy ledger (skipped %q)", res.Rule, res.Skipped)
		}
	}
	t.Logf("healthy ledger:\n%s", printed(rep))

	lateRefund := refund.Number(h.lateOrder, h.lateTrade)
	cardKey := stock.Key(h.cardProduct)

	cases := []struct {
		name string
		rule string
		sql  []string
		// provider edits a copy of the provider's stats.
		provider func(map[string]audit.ProviderRefund)
		// redis plants a counter corruption and returns its undo.
		redis func(t *testing.T) func()
	}{
		{name: "closed order back to pending past its expiry", rule: audit.RuleOrderSettled, sql: []string{
			q(`UPDATE orders SET status = 1, closed_at = NULL, expire_at = UTC_TIMESTAMP(3) - INTERVAL 1 HOUR WHERE order_no = %s`, h.closedOrder)}},
		{name: "order stuck in paid", rule: audit.RuleOrderSettled, sql: []string{
			q(`UPDATE orders SET status = 2 WHERE order_no = %s`, h.subOrder)}},
		{name: "key of a finished order recycled", rule: audit.RuleCardKeyOwner, sql: []string{
			q(`UPDATE card_keys SET status = 'RECYCLED' WHERE order_id = (SELECT id FROM orders WHERE order_no = %s) LIMIT 1`, h.cardOrder)}},
		{name: "key of a closed order still locked", rule: audit.RuleCardKeyOwner, sql: []string{
			q(`UPDATE card_keys SET status = 'LOCKED' WHERE order_id = (SELECT id FROM orders WHERE order_no = %s)`, h.closedOrder)}},
		{name: "finished card order short of a key", rule: audit.RuleCardOrderKeys, sql: []string{
			q(`UPDATE orders SET quantity = quantity + 1 WHERE order_no = %s`, h.cardOrder)}},
		{name: "finished order without its effect", rule: audit.RuleOrderEffect, sql: []string{
			q(`DELETE FROM order_effects WHERE order_id = (SELECT id FROM orders WHERE order_no = %s)`, h.subOrder)}},
		{name: "wallet credited for an order that never finished", rule: audit.RuleOrderEffect, sql: []string{
			q(`INSERT INTO wallet_entries (user_id, kind, ref, amount_cents, created_at) SELECT user_id, 'credit', CONCAT('order:', order_no), 500, UTC_TIMESTAMP(3) FROM orders WHERE order_no = %s`, h.closedOrder),
			fmt.Sprintf(`UPDATE users SET balance_cents = balance_cents + 500 WHERE id = %d`, h.buyerID)}},
		{name: "wallet credited without an entry", rule: audit.RuleWalletBalance, sql: []string{
			fmt.Sprintf(`UPDATE users SET balance_cents = balance_cents + 500 WHERE id = %d`, h.buyerID)}},
		{name: "wallet credit without a source", rule: audit.RuleWalletBalance, sql: []string{
			fmt.Sprintf(`INSERT INTO wallet_entries (user_id, kind, ref, amount_cents, created_at) VALUES (%d, 'credit', 'order:Onowhere', 500, UTC_TIMESTAMP(3))`, h.buyerID),
			fmt.Sprintf(`UPDATE users SET balance_cents = balance_cents + 500 WHERE id = %d`, h.buyerID)}},
		{name: "delivered trade also refunded", rule: audit.RulePaymentOutcome, sql: []string{
			q(`INSERT INTO refunds (refund_no, base_no, order_id, order_no, trade_no, amount_cents, reason, status, created_at, updated_at)
			   SELECT 'RFplanted', 'RFplanted', id, order_no, trade_no, amount_cents, 'duplicate', 'succeeded', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) FROM orders WHERE order_no = %s`, h.cardOrder),
			`INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at) VALUES ('refund', 'RFplanted', '-', 'processing', 'planted', UTC_TIMESTAMP(3)), ('refund', 'RFplanted', 'processing', 'succeeded', 'planted', UTC_TIMESTAMP(3))`}},
		{name: "operator refunds past the payment", rule: audit.RulePaymentOutcome, sql: []string{
			q(`UPDATE refunds SET amount_cents = amount_cents * 3 WHERE order_no = %s AND reason = 'operator'`, h.cardOrder),
			q(`UPDATE orders SET refunded_cents = refunded_cents * 3 WHERE order_no = %s`, h.cardOrder)}},
		{name: "refunded_cents that its refunds do not add up to", rule: audit.RulePaymentOutcome, sql: []string{
			q(`UPDATE orders SET refunded_cents = 0 WHERE order_no = %s`, h.cardOrder)}},
		{name: "late payment neither delivered nor refunded", rule: audit.RulePaymentOutcome, sql: []string{
			q(`DELETE FROM refunds WHERE order_no = %s`, h.lateOrder)}},
		{name: "refund stuck in manual without an alert", rule: audit.RulePaymentOutcome, sql: []string{
			q(`UPDATE refunds SET status = 'manual' WHERE order_no = %s`, h.lateOrder)}},
		{name: "provider executed one refund_no twice", rule: audit.RuleProviderRefund,
			provider: func(p map[string]audit.ProviderRefund) {
				p[lateRefund] = audit.ProviderRefund{Executed: 2, Status: "succeeded"}
			}},
		{name: "second provider refund for a trade under another refund_no", rule: audit.RuleProviderRefund,
			provider: func(p map[string]audit.ProviderRefund) {
				p[lateRefund+"-2"] = audit.ProviderRefund{Executed: 1, Status: "succeeded"}
			}},
		{name: "ledger refund succeeded the provider never executed", rule: audit.RuleProviderRefund,
			provider: func(p map[string]audit.ProviderRefund) { delete(p, lateRefund) }},
		{name: "event closed→paid", rule: audit.RuleEventMoves, sql: []string{
			q(`INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at) VALUES ('order', %s, 'closed', 'paid', 'planted', UTC_TIMESTAMP(3))`, h.closedOrder)}},
		{name: "event finished→finished that is not a note", rule: audit.RuleEventMoves, sql: []string{
			q(`INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at) VALUES ('order', %s, 'finished', 'finished', 'planted', UTC_TIMESTAMP(3))`, h.subOrder)}},
		{name: "history lost its last move", rule: audit.RuleEventHistory, sql: []string{
			q(`DELETE FROM events WHERE object_type = 'order' AND object_no = %s ORDER BY id DESC LIMIT 1`, h.subOrder)}},
		{name: "close restored stock twice", rule: audit.RuleStockFlow, sql: []string{
			q(`INSERT INTO stock_flows (product_id, order_id, flow_type, quantity, created_at) SELECT product_id, id, 4, quantity, UTC_TIMESTAMP(3) FROM orders WHERE order_no = %s`, h.closedOrder)}},
		{name: "closed order without its restore flow", rule: audit.RuleStockFlow, sql: []string{
			q(`DELETE FROM stock_flows WHERE flow_type = 3 AND order_id = (SELECT id FROM orders WHERE order_no = %s)`, h.closedOrder)}},
		{name: "Redis counter off by one", rule: audit.RuleStockCounter,
			redis: func(t *testing.T) func() {
				ctx := context.Background()
				rdb := h.s.SC.Redis
				old, err := rdb.Get(ctx, cardKey).Result()
				if err != nil {
					t.Fatalf("read %s: %v", cardKey, err)
				}
				if err := rdb.IncrBy(ctx, cardKey, 1).Err(); err != nil {
					t.Fatal(err)
				}
				return func() { rdb.Set(ctx, cardKey, old, 0) }
			}},
		{name: "pending slot leaked", rule: audit.RulePendingSlots, sql: []string{
			fmt.Sprintf(`UPDATE users SET pending_orders = pending_orders + 1 WHERE id = %d`, h.buyerID)}},
		{name: "SETTLED group with a participant uncharged", rule: audit.RuleGroupSettlement, sql: []string{
			q("UPDATE group_participants SET charged_at = NULL WHERE group_id = (SELECT id FROM `groups` WHERE group_no = %s) LIMIT 1", h.settledGroup)}},
		{name: "FAILED group charged someone", rule: audit.RuleGroupSettlement, sql: []string{
			q("UPDATE group_participants SET charged_at = UTC_TIMESTAMP(3) WHERE group_id = (SELECT id FROM `groups` WHERE group_no = %s)", h.failedGroup)}},
		{name: "group left OPEN past its deadline", rule: audit.RuleGroupSettlement, sql: []string{
			q("UPDATE `groups` SET status = 'OPEN', updated_at = UTC_TIMESTAMP(3) - INTERVAL 1 HOUR WHERE group_no = %s", h.failedGroup)}},
		{name: "lost dispute without the money taken back", rule: audit.RuleDisputeMoney, sql: []string{
			`UPDATE disputes SET lost_cents = 0 WHERE dispute_id = 'du_audit'`}},
		{name: "dispute on a trade never paid", rule: audit.RuleDisputeMoney, sql: []string{
			`UPDATE disputes SET trade_no = 'Tplanted' WHERE dispute_id = 'du_audit'`}},
		{name: "statement break nobody planted", rule: audit.RuleStatementBreaks, sql: []string{
			`INSERT INTO statement_breaks (provider, day, kind, ref, trade_no, order_no, ledger_amount_cents, status, action, run_id, created_at)
			 SELECT provider, day, 'missing_payment', 'Tplanted', 'Tplanted', 'Oplanted', 500, 'open', 'none', run_id, created_at FROM statement_breaks LIMIT 1`}},
		{name: "planted statement break resolved by an operator", rule: audit.RuleStatementBreaks, sql: []string{
			`UPDATE statement_breaks SET status = 'resolved', resolved_by = 'alice', resolved_at = UTC_TIMESTAMP(3) WHERE kind = 'unknown_payment'`}},
		{name: "outbox row never relayed", rule: audit.RuleOutboxDrained, sql: []string{
			`INSERT INTO outbox (task_id, task_type, payload, process_at, created_at) VALUES ('order:close:Oplanted:1', 'order:close', '{}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE)`}},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.rule] = true
		t.Run(tc.name, func(t *testing.T) {
			dsn := src
			if len(tc.sql) > 0 {
				dsn = testenv.CopyDatabase(t, src)
				db, err := audit.Open(dsn)
				if err != nil {
					t.Fatal(err)
				}
				plant(t, db, tc.sql)
				db.Close()
			}
			provider := maps.Clone(h.provider)
			if tc.provider != nil {
				tc.provider(provider)
			}
			if tc.redis != nil {
				defer tc.redis(t)()
			}
			rep := h.audit(t, dsn, provider)
			if got := rep.Result(tc.rule); got.Violations == 0 {
				t.Fatalf("audit did not name %s:\n%s", tc.rule, printed(rep))
			}
			t.Logf("flagged %v:\n%s", rep.Violated(), printed(rep))
		})
	}
	for _, rule := range audit.Rules {
		if !covered[rule] {
			t.Errorf("no corruption planted for rule %s", rule)
		}
	}
}

// q quotes string arguments into a statement (test-only: our own values).
func q(format string, args ...any) string {
	quoted := make([]any, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(fmt.Sprint(a))
	}
	return fmt.Sprintf(format, quoted...)
}

func plant(t *testing.T, db *sql.DB, stmts []string) {
	t.Helper()
	for _, s := range stmts {
		res, err := db.Exec(s)
		if err != nil {
			t.Fatalf("plant %q: %v", s, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			t.Fatalf("plant %q changed nothing", s)
		}
	}
}
