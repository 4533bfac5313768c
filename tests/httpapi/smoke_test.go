package httpapi

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/testenv"
)

func TestSmokeCardOrderFinishes(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	pid := s.NewProduct(t, map[string]any{"sku": "smoke", "kind": "card", "price_cents": 300})
	s.AddCards(t, pid, "SMOKE", 2)
	_, buyer := s.NewUser(t, "ann", 0)
	o := buyer.CreateOrder(t, pid, 1)
	if _, st, err := s.Pay.Pay(context.Background(), o.OrderNo, o.AmountCents, ""); err != nil || st != 200 {
		t.Fatalf("pay: status %d err %v", st, err)
	}
	testenv.Eventually(t, 10*time.Second, "order finished", func() (bool, error) {
		return buyer.Order(t, o.OrderNo).Status == "finished", nil
	})
	if got := buyer.Order(t, o.OrderNo).Cards; len(got) != 1 {
		t.Fatalf("cards on order = %v, want 1", got)
	}
}
