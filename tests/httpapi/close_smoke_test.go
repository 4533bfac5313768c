package httpapi

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

// An order left unpaid closes at its expiry, its key is recycled and sold
// again; a payment after the close is refunded and the order ends refunded.
func TestSmokeCloseRecycleAndLateRefund(t *testing.T) {
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) { c.OrderTTL = svc.Duration(time.Second) }})
	s.WaitReconciled(t, 15*time.Second) // its counter rebuild would race our first take
	pid := s.NewProduct(t, map[string]any{"sku": "close", "kind": "card", "price_cents": 300})
	s.AddCards(t, pid, "CLOSE", 1)
	_, buyer := s.NewUser(t, "bob", 0)
	o := buyer.CreateOrder(t, pid, 1)
	testenv.Eventually(t, 10*time.Second, "order closed", func() (bool, error) {
		return buyer.Order(t, o.OrderNo).Status == "closed", nil
	})
	// The recycled key is sellable again once the close's Redis restore ran.
	testenv.Eventually(t, 5*time.Second, "stock counter restored", func() (bool, error) {
		n, err := s.SC.Redis.Get(context.Background(), stock.Key(pid)).Int()
		return n == 1, err
	})
	o2 := buyer.CreateOrder(t, pid, 1)
	// The late payment of the first order is refunded.
	if _, st, err := s.Pay.Pay(context.Background(), o.OrderNo, o.AmountCents, ""); err != nil || st != 200 {
		t.Fatalf("late pay: %d %v", st, err)
	}
	testenv.Eventually(t, 10*time.Second, "late order refunded", func() (bool, error) {
		return buyer.Order(t, o.OrderNo).Status == "refunded", nil
	})
	if _, st, err := s.Pay.Pay(context.Background(), o2.OrderNo, o2.AmountCents, ""); err != nil || st != 200 {
		t.Fatalf("pay: %d %v", st, err)
	}
	testenv.Eventually(t, 10*time.Second, "second order finished", func() (bool, error) {
		return buyer.Order(t, o2.OrderNo).Status == "finished", nil
	})
	if cards := buyer.Order(t, o2.OrderNo).Cards; len(cards) != 1 || cards[0] != "CLOSE-00000" {
		t.Fatalf("second order cards = %v, want the recycled key", cards)
	}
}
