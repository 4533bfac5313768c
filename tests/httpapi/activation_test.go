package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"orderflow/internal/domain/order"
	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"

	"github.com/google/go-cmp/cmp"
)

// scaleProduct is one product of the activation run and what it delivers.
type scaleProduct struct {
	id     int64
	kind   string
	price  int64
	days   int64 // subscription
	credit int64 // recharge
	codes  []string
}

// scaleOrder is one planned order and what happened to it.
type scaleOrder struct {
	buyer   int
	product int // index into the catalog
	qty     int64
	no      string
	amount  int64
	tradeNo string
}

// TestActivationAtScale is done-when 2: 300 orders over the three kinds for
// 30 buyers, created and paid concurrently through the simulator, all end
// finished, and the ledger shows every effect applied exactly once — each
// card key sold once and shown on its order only, each wallet credited once
// per recharge order, each subscription extended once per order — with the
// history pending→paid→claimed→finished for every order.
//
// It runs on production's databases (MariaDB, Redis) and on the dev mode's
// embedded ones (SQLite, miniredis): the same code serves both.
func TestActivationAtScale(t *testing.T) {
	testenv.EachBackend(t, activationAtScale)
}

func activationAtScale(t *testing.T, backend testenv.Backend) {
	const buyers, perBuyer, spareKeys = 30, 10, 7
	began := time.Now()
	s := testenv.Start(t, testenv.Options{Backend: backend, Configure: func(c *svc.Config) {
		c.MaxPending = perBuyer // every buyer holds all their orders unpaid at once
		// This is the happy path under load: no claim may time out or be
		// recovered just because the race detector slows a busy machine.
		c.ClaimTimeout = svc.Duration(2 * time.Minute)
		c.ActivateTimeout = svc.Duration(time.Minute)
	}})
	ctx := context.Background()

	catalog := []*scaleProduct{
		{kind: "card", price: 150}, {kind: "card", price: 990},
		{kind: "subscription", price: 300, days: 7}, {kind: "subscription", price: 1200, days: 30},
		{kind: "recharge", price: 500, credit: 500}, {kind: "recharge", price: 1900, credit: 2000},
	}
	var orders []*scaleOrder
	for i := range buyers * perBuyer {
		b := i % buyers
		o := &scaleOrder{buyer: b, product: (i/buyers + b) % len(catalog), qty: 1}
		if i%4 == 0 {
			o.qty = 2 + int64(i/4)%3
		}
		orders = append(orders, o)
	}
	needKeys := map[int]int64{}
	for _, o := range orders {
		if catalog[o.product].kind == "card" {
			needKeys[o.product] += o.qty
		}
	}
	for i, p := range catalog {
		p.id = s.NewProduct(t, map[string]any{"sku": fmt.Sprintf("scale-%d", i), "kind": p.kind,
			"price_cents": p.price, "days": p.days, "credit_cents": p.credit})
		if p.kind == "card" {
			p.codes = s.AddCards(t, p.id, fmt.Sprintf("K%d", i), int(needKeys[i])+spareKeys)
		}
	}
	users := make([]*testenv.User, buyers)
	clients := make([]*testenv.Client, buyers)
	for b := range buyers {
		users[b], clients[b] = s.NewUser(t, fmt.Sprintf("buyer%02d", b), int64(b)*1000)
	}

	// Create: one goroutine per buyer, each buyer's orders in sequence.
	created := time.Now()
	var mu sync.Mutex
	var errs []string
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for b := range buyers {
		wg.Go(func() {
			for _, o := range orders {
				if o.buyer != b {
					continue
				}
				p := catalog[o.product]
				body, _ := json.Marshal(map[string]any{"product_id": p.id, "quantity": o.qty})
				st, raw, err := clients[b].Send("POST", "/api/v1/orders", body)
				var res struct {
					OrderNo     string `json:"order_no"`
					Status      string `json:"status"`
					AmountCents int64  `json:"amount_cents"`
				}
				if err != nil || st != 201 || json.Unmarshal(raw, &res) != nil {
					fail("buyer %d create %s×%d: status %d err %v body %s", b, p.kind, o.qty, st, err, raw)
					continue
				}
				if res.Status != "pending" || res.AmountCents != p.price*o.qty {
					fail("created %s: status %q amount %d, want pending %d", res.OrderNo, res.Status, res.AmountCents, p.price*o.qty)
				}
				o.no, o.amount = res.OrderNo, res.AmountCents
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d creates failed, first: %s", len(errs), errs[0])
	}
	createdIn := time.Since(created)

	// Pay through the simulator, 24 notifications in flight at a time.
	paid := time.Now()
	work := make(chan *scaleOrder)
	for range 24 {
		wg.Go(func() {
			for o := range work {
				trade, st, err := s.Pay.Pay(ctx, o.no, o.amount, "")
				if err != nil || st != 200 {
					fail("pay %s: status %d err %v", o.no, st, err)
					continue
				}
				o.tradeNo = trade
			}
		})
	}
	for _, o := range orders {
		work <- o
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d payments failed, first: %s", len(errs), errs[0])
	}
	paidIn := time.Since(paid)

	testenv.Eventually(t, 2*time.Minute, "all 300 orders finished", func() (bool, error) {
		n := s.Count(t, `SELECT COUNT(*) FROM orders WHERE status = ?`, model.OrderFinished)
		return n == int64(len(orders)), nil
	})
	finishedIn := time.Since(paid)
	s.WaitQueuesIdle(t, 30*time.Second)
	t.Logf("300 orders: created in %v, notified in %v, all finished %v after the first payment (stack up in %v)",
		createdIn.Round(time.Millisecond), paidIn.Round(time.Millisecond), finishedIn.Round(time.Millisecond), created.Sub(began).Round(time.Millisecond))

	byNo := keyBy(orders, func(o *scaleOrder) string { return o.no })

	// Every order: finished on the first attempt under the first generation,
	// carrying the trade that paid it.
	rows := testenv.Rows[struct {
		ID          int64
		OrderNo     string
		UserID      int64
		Status      model.OrderStatus
		Attempts    int
		ActivateGen int
		TradeNo     *string
		PaidAt      *time.Time
		FinishedAt  *time.Time
	}](t, s, `SELECT id, order_no, user_id, status, attempts, activate_gen, trade_no, paid_at, finished_at FROM orders`)
	if len(rows) != len(orders) {
		t.Fatalf("orders in the ledger = %d, want %d", len(rows), len(orders))
	}
	idOf := map[int64]*scaleOrder{}
	paidAt, finishedAt := map[string]time.Time{}, map[string]time.Time{}
	for _, r := range rows {
		o := byNo[r.OrderNo]
		if o == nil {
			t.Fatalf("ledger has an order %s nobody created", r.OrderNo)
		}
		idOf[r.ID] = o
		if r.UserID != users[o.buyer].ID || r.Status != model.OrderFinished || r.Attempts != 1 || r.ActivateGen != 1 ||
			r.TradeNo == nil || *r.TradeNo != o.tradeNo || r.PaidAt == nil || r.FinishedAt == nil {
			t.Errorf("order %s: user %d status %s attempts %d gen %d trade %v paid %v finished %v; want user %d finished 1 1 %s",
				r.OrderNo, r.UserID, r.Status, r.Attempts, r.ActivateGen, r.TradeNo, r.PaidAt, r.FinishedAt, users[o.buyer].ID, o.tradeNo)
			continue
		}
		paidAt[r.OrderNo], finishedAt[r.OrderNo] = *r.PaidAt, *r.FinishedAt
	}

	// History: exactly created→pending→paid→claimed→finished, nothing else.
	type eventRow struct{ ObjectNo, FromStatus, ToStatus string }
	events := testenv.Rows[eventRow](t, s, `SELECT object_no, from_status, to_status FROM events WHERE object_type = 'order' ORDER BY id`)
	history := groupBy(events, func(e eventRow) (string, string) { return e.ObjectNo, e.FromStatus + "→" + e.ToStatus })
	wantHistory := []string{"-→pending", "pending→paid", "paid→claimed", "claimed→finished"}
	for _, o := range orders {
		if diff := cmp.Diff(wantHistory, history[o.no]); diff != "" {
			t.Errorf("history of %s (-want +got):\n%s", o.no, diff)
		}
	}
	if len(history) != len(orders) {
		t.Errorf("events name %d orders, want %d", len(history), len(orders))
	}

	// One effect per order, of its kind; one applied payment per order.
	type effectRow struct {
		OrderID int64
		Effect  string
	}
	effects := testenv.Rows[effectRow](t, s, `SELECT order_id, effect FROM order_effects`)
	effectsOf := groupBy(effects, func(e effectRow) (int64, string) { return e.OrderID, e.Effect })
	for id, o := range idOf {
		if diff := cmp.Diff([]string{catalog[o.product].kind}, effectsOf[id]); diff != "" {
			t.Errorf("effects of %s (-want +got):\n%s", o.no, diff)
		}
	}
	if len(effects) != len(orders) {
		t.Errorf("order_effects rows = %d, want %d", len(effects), len(orders))
	}
	payments := testenv.Rows[struct {
		TradeNo     string
		OrderID     int64
		AmountCents int64
		Disposition model.Disposition
	}](t, s, `SELECT trade_no, order_id, amount_cents, disposition FROM payments`)
	if len(payments) != len(orders) {
		t.Errorf("payments rows = %d, want %d", len(payments), len(orders))
	}
	for _, p := range payments {
		o := idOf[p.OrderID]
		if o == nil || p.TradeNo != o.tradeNo || p.AmountCents != o.amount || p.Disposition != model.PaymentApplied {
			t.Errorf("payment %+v does not match its order %+v", p, o)
		}
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM refunds`); n != 0 {
		t.Errorf("refunds = %d, want none for exact single payments", n)
	}

	// Card keys: each sold exactly once, to a card order of its product, as
	// many as the order's quantity; none LOCKED; the spares still UNSOLD.
	keys := testenv.Rows[struct {
		Code      string
		ProductID int64
		Status    model.CardStatus
		OrderID   *int64
	}](t, s, `SELECT code, product_id, status, order_id FROM card_keys`)
	soldTo := map[string][]string{} // order_no → codes, from the ledger
	byStatus := map[int64]map[model.CardStatus]int64{}
	for _, k := range keys {
		if byStatus[k.ProductID] == nil {
			byStatus[k.ProductID] = map[model.CardStatus]int64{}
		}
		byStatus[k.ProductID][k.Status]++
		if k.Status != model.CardSold {
			continue
		}
		var o *scaleOrder
		if k.OrderID != nil {
			o = idOf[*k.OrderID]
		}
		if o == nil || catalog[o.product].id != k.ProductID {
			t.Errorf("key %s of product %d is SOLD to order id %v, which is not a card order of that product", k.Code, k.ProductID, k.OrderID)
			continue
		}
		soldTo[o.no] = append(soldTo[o.no], k.Code)
	}
	for i, p := range catalog {
		if p.kind != "card" {
			continue
		}
		want := map[model.CardStatus]int64{model.CardSold: needKeys[i], model.CardUnsold: spareKeys}
		if diff := cmp.Diff(want, byStatus[p.id]); diff != "" {
			t.Errorf("product %d keys by status (-want +got):\n%s", p.id, diff)
		}
		var view struct{ Stock *int64 }
		if st := s.Admin.Do(t, "GET", fmt.Sprintf("/api/v1/admin/products/%d", p.id), nil, &view); st != 200 || view.Stock == nil || *view.Stock != spareKeys {
			t.Errorf("product %d admin stock = %v (status %d), want %d", p.id, view.Stock, st, spareKeys)
		}
		if n, ok, err := stock.NewCounter(s.SC.Redis).Get(ctx, p.id); err != nil || !ok || n != spareKeys {
			t.Errorf("product %d Redis stock counter = %d (present %v, err %v), want %d", p.id, n, ok, err, spareKeys)
		}
	}

	// The API shows each card order exactly its own keys, and every sold
	// key on exactly one order.
	shownOn := map[string]string{}
	for _, o := range orders {
		var v order.View
		if st := clients[o.buyer].Do(t, "GET", "/api/v1/orders/"+o.no, nil, &v); st != 200 {
			t.Errorf("GET %s: status %d", o.no, st)
			continue
		}
		if v.Status != "finished" || v.Quantity != int(o.qty) || v.AmountCents != o.amount {
			t.Errorf("GET %s: status %s qty %d amount %d, want finished %d %d", o.no, v.Status, v.Quantity, v.AmountCents, o.qty, o.amount)
		}
		if catalog[o.product].kind != "card" {
			if len(v.Cards) != 0 {
				t.Errorf("GET %s (%s): cards %v, want none", o.no, catalog[o.product].kind, v.Cards)
			}
			continue
		}
		if len(v.Cards) != int(o.qty) {
			t.Errorf("GET %s: %d cards, want %d", o.no, len(v.Cards), o.qty)
		}
		if diff := cmp.Diff(sorted(soldTo[o.no]), sorted(v.Cards)); diff != "" {
			t.Errorf("GET %s: cards differ from the keys sold to it (-ledger +api):\n%s", o.no, diff)
		}
		for _, c := range v.Cards {
			if prev, dup := shownOn[c]; dup {
				t.Errorf("card %s shown on %s and %s", c, prev, o.no)
			}
			shownOn[c] = o.no
		}
	}
	var sold int64
	for i := range catalog {
		sold += needKeys[i]
	}
	if int64(len(shownOn)) != sold {
		t.Errorf("cards shown across orders = %d, keys sold = %d", len(shownOn), sold)
	}

	// Wallets and subscriptions, per buyer.
	type userRow struct {
		ID                    int64
		BalanceCents          int64
		PendingOrders         int
		SubscriptionExpiresAt *time.Time
	}
	ledgerUsers := keyBy(testenv.Rows[userRow](t, s, `SELECT id, balance_cents, pending_orders, subscription_expires_at FROM users`),
		func(r userRow) int64 { return r.ID })
	walletRows := testenv.Rows[struct {
		UserID      int64
		Kind        string
		Ref         string
		AmountCents int64
	}](t, s, `SELECT user_id, kind, ref, amount_cents FROM wallet_entries`)
	entriesByRef := map[string]int{}
	walletSum := map[int64]int64{}
	for _, w := range walletRows {
		entriesByRef[w.Ref]++
		walletSum[w.UserID] += w.AmountCents
	}
	rechargeOrders := 0
	for _, o := range orders {
		p := catalog[o.product]
		if p.kind != "recharge" {
			continue
		}
		rechargeOrders++
		if n := entriesByRef["order:"+o.no]; n != 1 {
			t.Errorf("wallet entries for recharge order %s = %d, want 1", o.no, n)
		}
	}
	if len(walletRows) != buyers+rechargeOrders {
		t.Errorf("wallet_entries rows = %d, want %d opening + %d credits", len(walletRows), buyers, rechargeOrders)
	}
	for b, u := range users {
		var credit, subDays int64
		var firstPaid, lastFinished time.Time
		for _, o := range orders {
			if o.buyer != b {
				continue
			}
			p := catalog[o.product]
			credit += p.credit * o.qty
			if p.kind == "subscription" {
				subDays += p.days * o.qty
				if pa := paidAt[o.no]; firstPaid.IsZero() || pa.Before(firstPaid) {
					firstPaid = pa
				}
				if fa := finishedAt[o.no]; fa.After(lastFinished) {
					lastFinished = fa
				}
			}
		}
		r, ok := ledgerUsers[u.ID]
		if !ok {
			t.Fatalf("user %d missing from the ledger", u.ID)
		}
		if want := int64(b)*1000 + credit; r.BalanceCents != want || walletSum[u.ID] != want {
			t.Errorf("buyer %d balance = %d, wallet entries sum = %d; want %d (opening %d + credits %d)",
				b, r.BalanceCents, walletSum[u.ID], want, int64(b)*1000, credit)
		}
		if r.PendingOrders != 0 {
			t.Errorf("buyer %d pending_orders = %d after paying everything, want 0", b, r.PendingOrders)
		}
		if subDays == 0 {
			if r.SubscriptionExpiresAt != nil {
				t.Errorf("buyer %d bought no subscription but expires at %v", b, r.SubscriptionExpiresAt)
			}
			continue
		}
		// The first extension starts from the time it ran (after the first
		// payment, before the last finish); every later one adds to the end.
		total := time.Duration(subDays) * 24 * time.Hour
		lo, hi := firstPaid.Add(total).Add(-time.Millisecond), lastFinished.Add(total).Add(time.Millisecond)
		if got := r.SubscriptionExpiresAt; got == nil || got.Before(lo) || got.After(hi) {
			t.Errorf("buyer %d subscription ends %v, want within [%v, %v] (%d days bought)", b, got, lo, hi, subDays)
		}
	}

	// Stock flows: one lock per order, one sell per card order; nothing restored.
	flows := testenv.Rows[struct {
		FlowType model.FlowKind
		N        int64
	}](t, s, `SELECT flow_type, COUNT(*) AS n FROM stock_flows GROUP BY flow_type ORDER BY flow_type`)
	cardOrders := int64(0)
	for _, o := range orders {
		if catalog[o.product].kind == "card" {
			cardOrders++
		}
	}
	wantFlows := []struct {
		FlowType model.FlowKind
		N        int64
	}{{model.FlowLock, int64(len(orders))}, {model.FlowSell, cardOrders}}
	if diff := cmp.Diff(wantFlows, flows); diff != "" {
		t.Errorf("stock flows by type (-want +got):\n%s", diff)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
