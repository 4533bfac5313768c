package crashes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// adminOrder is the admin view of an order with its history.
type adminOrder struct {
	OrderNo     string   `json:"order_no"`
	UserID      int64    `json:"user_id"`
	Status      string   `json:"status"`
	Quantity    int      `json:"quantity"`
	Cards       []string `json:"cards"`
	Attempts    int      `json:"attempts"`
	ActivateGen int      `json:"activate_gen"`
	Events      []event  `json:"events"`
}

type event struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason"`
}

func (o adminOrder) count(from, to, reason string) int {
	n := 0
	for _, e := range o.Events {
		if e.From == from && e.To == to && (reason == "" || e.Reason == reason) {
			n++
		}
	}
	return n
}

func adminGetOrder(t *testing.T, s *testenv.Stack, orderNo string) adminOrder {
	t.Helper()
	var o adminOrder
	if st := s.Admin.Do(t, "GET", "/api/v1/admin/orders/"+orderNo, nil, &o); st != 200 {
		t.Fatalf("admin get order %s: status %d", orderNo, st)
	}
	return o
}

// adminUser is the admin view of a user.
type adminUser struct {
	BalanceCents          int64      `json:"balance_cents"`
	SubscriptionExpiresAt *time.Time `json:"subscription_expires_at"`
}

func adminGetUser(t *testing.T, s *testenv.Stack, id int64) adminUser {
	t.Helper()
	var u adminUser
	if st := s.Admin.Do(t, "GET", fmt.Sprintf("/api/v1/admin/users/%d", id), nil, &u); st != 200 {
		t.Fatalf("admin get user %d: status %d", id, st)
	}
	return u
}

// placedOrder is a placed order, or what carries one.
type placedOrder interface{ orderNo() string }

func (p *placed) orderNo() string { return p.order.OrderNo }

// waitAllFinished waits until every order is finished, within one deadline
// for them all, and returns the time they were.
func waitAllFinished[P placedOrder](t *testing.T, s *testenv.Stack, within time.Duration, orders []P) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, p := range orders {
		waitStatus(t, s, p.orderNo(), "finished", time.Until(deadline))
	}
	return time.Now()
}

// waitStatus polls the admin view until the order is in status.
func waitStatus(t *testing.T, s *testenv.Stack, orderNo, status string, within time.Duration) adminOrder {
	t.Helper()
	var last adminOrder
	testenv.Eventually(t, within, "order "+orderNo+" "+status, func() (bool, error) {
		last = adminGetOrder(t, s, orderNo)
		return last.Status == status, fmt.Errorf("status %s, attempts %d, gen %d", last.Status, last.Attempts, last.ActivateGen)
	})
	return last
}

// effectRows is how many delivery effects the ledger recorded for the order.
func effectRows(t *testing.T, s *testenv.Stack, orderID int64) int64 {
	return s.Count(t, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, orderID)
}

// shop is one product of each kind.
type shop struct {
	card, recharge, subscription int64
}

const (
	creditCents = 500 // per recharge unit
	subDays     = 30  // per subscription unit
)

func newShop(t *testing.T, s *testenv.Stack, cardKeys int) shop {
	t.Helper()
	tag := strings.ToUpper(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(tag) > 40 {
		tag = tag[:40]
	}
	// Workaround for two product bugs in order creation of non-card
	// products (see the report): an unlimited one (stock NULL) is refused
	// with out_of_stock because TakeProductStock's UPDATE changes no row, and
	// a limited one fails with 500 when its Redis counter must be rebuilt
	// because SellableStock cannot scan the stock column. So they get a stock
	// and a seeded counter: the faults here are about activation.
	sh := shop{
		card:         s.NewProduct(t, map[string]any{"sku": tag + "-card", "kind": "card", "price_cents": 300}),
		recharge:     s.NewProduct(t, map[string]any{"sku": tag + "-recharge", "kind": "recharge", "price_cents": 450, "credit_cents": creditCents, "stock": 1000}),
		subscription: s.NewProduct(t, map[string]any{"sku": tag + "-sub", "kind": "subscription", "price_cents": 990, "days": subDays, "stock": 1000}),
	}
	for _, id := range []int64{sh.recharge, sh.subscription} {
		if err := s.SC.Redis.Set(context.Background(), stock.Key(id), 1000, 0).Err(); err != nil {
			t.Fatalf("seed stock counter: %v", err)
		}
	}
	if cardKeys > 0 {
		s.AddCards(t, sh.card, tag, cardKeys)
	}
	return sh
}

func (sh shop) product(kind string) int64 {
	switch kind {
	case "card":
		return sh.card
	case "recharge":
		return sh.recharge
	case "subscription":
		return sh.subscription
	}
	panic("unknown kind " + kind)
}

// placed is an order with its own buyer, so the buyer's wallet and
// subscription show this order's effect alone.
type placed struct {
	kind    string
	userID  int64
	order   testenv.OrderView
	paidAt  time.Time // just before the payment was sent
	orderID int64
}

func place(t *testing.T, s *testenv.Stack, sh shop, kind string, qty int) *placed {
	t.Helper()
	u, buyer := s.NewUser(t, "buyer-"+kind, 0)
	o := buyer.CreateOrder(t, sh.product(kind), qty)
	o.Quantity = qty // the create answer does not carry it
	return &placed{kind: kind, userID: u.ID, order: o, orderID: s.OrderRow(t, o.OrderNo).ID}
}

// checkDeliveredOnce asserts that a finished order's effect is in the ledger
// exactly once: one effect row, and for its kind the keys sold, the wallet
// credit or the subscription extension of exactly one delivery.
func checkDeliveredOnce(t *testing.T, s *testenv.Stack, p *placed, finishedBy time.Time) {
	t.Helper()
	no, qty := p.order.OrderNo, p.order.Quantity
	if n := effectRows(t, s, p.orderID); n != 1 {
		t.Errorf("order %s: %d order_effects rows, want 1", no, n)
	}
	switch p.kind {
	case "card":
		if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'SOLD'`, p.orderID); n != int64(qty) {
			t.Errorf("order %s: %d keys SOLD, want %d", no, n, qty)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status <> 'SOLD'`, p.orderID); n != 0 {
			t.Errorf("order %s: %d keys not SOLD, want 0", no, n)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM stock_flows WHERE order_id = ? AND flow_type = ?`, p.orderID, model.FlowSell); n != 1 {
			t.Errorf("order %s: %d sell stock flows, want 1", no, n)
		}
		if got := adminGetOrder(t, s, no).Cards; len(got) != qty {
			t.Errorf("order %s shows cards %v, want %d", no, got, qty)
		}
	case "recharge":
		want := int64(creditCents * qty)
		if n := s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE ref = ?`, "order:"+no); n != 1 {
			t.Errorf("order %s: %d wallet entries, want 1", no, n)
		}
		if got := s.Count(t, `SELECT COALESCE(SUM(amount_cents), 0) FROM wallet_entries WHERE ref = ?`, "order:"+no); got != want {
			t.Errorf("order %s: wallet credited %d, want %d", no, got, want)
		}
		if got := adminGetUser(t, s, p.userID).BalanceCents; got != want {
			t.Errorf("order %s: buyer balance %d, want %d", no, got, want)
		}
	case "subscription":
		// A fresh buyer: one extension puts the end at delivery time + days×qty,
		// and delivery happened between the payment and the finish we saw. A
		// second extension would be another days×qty further out.
		d := time.Duration(subDays*qty) * 24 * time.Hour
		lo, hi := p.paidAt.Add(d-time.Second), finishedBy.Add(d+time.Second)
		got := adminGetUser(t, s, p.userID).SubscriptionExpiresAt
		if got == nil || got.Before(lo) || got.After(hi) {
			t.Errorf("order %s: subscription ends %v, want within [%v, %v] (one extension of %v)", no, got, lo, hi, d)
		}
	}
}
