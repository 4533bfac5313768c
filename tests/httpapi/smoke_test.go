package httpapi

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

// The smoke tests: each main path of the system once, end to end.

// A card order is paid and finishes with its key delivered.
func TestSmokeCardOrderFinishes(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	_, buyer, o := s.NewCardOrder(t, "smoke", 300, 2)
	s.PayOrder(t, o, "")
	testenv.Eventually(t, 10*time.Second, "order finished", func() (bool, error) {
		return buyer.Order(t, o.OrderNo).Status == "finished", nil
	})
	if got := buyer.Order(t, o.OrderNo).Cards; len(got) != 1 {
		t.Fatalf("cards on order = %v, want 1", got)
	}
}

// An order left unpaid closes at its expiry, its key is recycled and sold
// again; a payment after the close is refunded and the order ends refunded.
func TestSmokeCloseRecycleAndLateRefund(t *testing.T) {
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) { c.OrderTTL = svc.Duration(time.Second) }})
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
	s.PayOrder(t, o, "")
	testenv.Eventually(t, 10*time.Second, "late order refunded", func() (bool, error) {
		return buyer.Order(t, o.OrderNo).Status == "refunded", nil
	})
	s.PayOrder(t, o2, "")
	testenv.Eventually(t, 10*time.Second, "second order finished", func() (bool, error) {
		return buyer.Order(t, o2.OrderNo).Status == "finished", nil
	})
	if cards := buyer.Order(t, o2.OrderNo).Cards; len(cards) != 1 || cards[0] != "CLOSE-00000" {
		t.Fatalf("second order cards = %v, want the recycled key", cards)
	}
}

// A group-buy settles at its deadline and charges every participant once.
func TestSmokeGroupSettles(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	owner, ownerC := s.NewUser(t, "owner", 0)
	var g struct {
		GroupNo string `json:"group_no"`
	}
	deadline := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	if st := ownerC.Do(t, "POST", "/api/v1/groups", map[string]any{"title": "tea", "price_cents": 700, "deadline": deadline}, &g); st != 201 {
		t.Fatalf("create group: %d", st)
	}
	var ids []int64
	for i := range 3 {
		u, c := s.NewUser(t, "p", 1000)
		ids = append(ids, u.ID)
		if st := c.Do(t, "POST", "/api/v1/groups/"+g.GroupNo+"/join", nil, nil); st != 200 {
			t.Fatalf("join %d: %d", i, st)
		}
	}
	var view struct {
		Status       string `json:"status"`
		Participants []struct {
			UserID  int64 `json:"user_id"`
			Charged bool  `json:"charged"`
		} `json:"participants"`
	}
	testenv.Eventually(t, 10*time.Second, "group settled", func() (bool, error) {
		ownerC.Do(t, "GET", "/api/v1/groups/"+g.GroupNo, nil, &view)
		return view.Status == "settled", nil
	})
	for _, p := range view.Participants {
		if !p.Charged {
			t.Errorf("participant %d not charged", p.UserID)
		}
	}
	for _, id := range ids {
		var u struct {
			BalanceCents int64 `json:"balance_cents"`
		}
		s.Admin.Do(t, "GET", "/api/v1/admin/users/"+itoa(id), nil, &u)
		if u.BalanceCents != 300 {
			t.Errorf("user %d balance = %d, want 300", id, u.BalanceCents)
		}
	}
	_ = owner
	if st := ownerC.Do(t, "POST", "/api/v1/groups/"+g.GroupNo+"/join", nil, nil); st != 409 {
		t.Errorf("join after settle: %d, want 409", st)
	}
}
