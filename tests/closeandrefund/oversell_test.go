package closeandrefund

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// Done-when 5: 1,000 concurrent creates from 250 buyers (4 each, cap 5) for
// 100 keys take exactly the 100 keys; every other answer is 409
// out_of_stock (or 429 for a buyer over the cap). After all 100 orders close
// (cancelled by their buyers or the admin — expiry runs the same close
// procedure and is covered by the race and wipe tests) the keys are
// sellable again, and a second round sells each of them exactly once.
func TestStockNeverOversells(t *testing.T) {
	const (
		keys       = 100
		nBuyers    = 250
		perBuyer   = 4
		ttl        = time.Minute // no order may expire during the burst, however loaded the machine
		maxPending = 5
	)
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.OrderTTL = svc.Duration(ttl)
		c.MaxPending = maxPending
	}})
	pid := s.NewProduct(t, map[string]any{"sku": "scarce", "kind": "card", "price_cents": 990})
	codes := s.AddCards(t, pid, "SCARCE", keys)
	buyers := newBuyers(t, s, "crowd", nBuyers)

	// Round one: every create at once.
	type answer struct {
		buyer int
		res   createResult
		err   error
	}
	answers := make([]answer, nBuyers*perBuyer)
	burstStart := time.Now()
	testenv.AtOnce(len(answers), func(i int) {
		b := i / perBuyer
		res, err := tryCreate(buyers[b], pid, 1)
		answers[i] = answer{buyer: b, res: res, err: err}
	})
	burstEnd := time.Now()
	burst := burstEnd.Sub(burstStart)
	byAnswer := map[string]int{}
	var won []answer
	for _, a := range answers {
		if a.err != nil {
			t.Fatalf("create: %v", a.err)
		}
		key := fmt.Sprintf("%d %s", a.res.Status, a.res.Code)
		byAnswer[key]++
		switch {
		case a.res.Status == 201:
			won = append(won, a)
		case a.res.Status == 409 && a.res.Code == "out_of_stock":
		case a.res.Status == 429 && a.res.Code == "too_many_pending":
		default:
			t.Errorf("unexpected answer %s", key)
		}
	}
	t.Logf("1000 concurrent creates answered in %v: %v", burst.Round(time.Millisecond), byAnswer)
	for _, a := range won {
		if !burstEnd.Before(a.res.Order.ExpireAt) {
			t.Fatalf("order %s expired at %v, before the burst ended at %v: closes during the burst make the count meaningless",
				a.res.Order.OrderNo, a.res.Order.ExpireAt, burstEnd)
		}
	}
	if len(won) != keys {
		t.Fatalf("%d creates succeeded for %d keys", len(won), keys)
	}
	if c := statusCounts(t, s); c["pending"] != keys || len(c) != 1 {
		t.Fatalf("orders by status %v, want exactly %d pending", c, keys)
	}
	lockedBy := map[int64]int{}
	for _, k := range cardKeys(t, s) {
		if k.Status != model.CardLocked || k.OrderID == nil {
			t.Errorf("key %s is %s after round one, want LOCKED", k.Code, k.Status)
			continue
		}
		lockedBy[*k.OrderID]++
	}
	if len(lockedBy) != keys {
		t.Errorf("%d distinct orders hold the %d keys, want one key each", len(lockedBy), keys)
	}
	waitCountersMatch(t, s, 5*time.Second, pid)

	// Half are cancelled by their buyers, the other half by the admin.
	if err := parallel(keys, 10, func(i int) error {
		c := buyers[won[i].buyer]
		if i%2 == 1 {
			c = s.Admin
		}
		return cancelOrder(c, won[i].res.Order.OrderNo)
	}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	testenv.Eventually(t, 20*time.Second, "all 100 orders closed", func() (bool, error) {
		c := statusCounts(t, s)
		return c["closed"] == keys, fmt.Errorf("orders by status %v", c)
	})
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'RECYCLED'`, pid); n != keys {
		t.Fatalf("%d keys RECYCLED after every order closed, want %d", n, keys)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM stock_flows WHERE flow_type = ?`, model.FlowCloseRestore); n != keys {
		t.Errorf("%d close-restore stock flows, want %d", n, keys)
	}
	testenv.Eventually(t, 10*time.Second, "stock counter back to 100", func() (bool, error) {
		n, ok, err := counter(s, pid)
		return ok && n == keys, fmt.Errorf("counter %d (present %v): %v", n, ok, err)
	})

	// Round two: new buyers take every key again, and one more is refused.
	second := newBuyers(t, s, "second", keys+1)
	orders := make([]created, keys)
	if err := parallel(keys, 20, func(i int) error {
		var err error
		orders[i], err = mustCreate(second[i], pid, 1)
		return err
	}); err != nil {
		t.Fatalf("round two: %v", err)
	}
	if res, err := tryCreate(second[keys], pid, 1); err != nil || res.Status != 409 || res.Code != "out_of_stock" {
		t.Errorf("create beyond the 100 keys: %d %s %v, want 409 out_of_stock", res.Status, res.Code, err)
	}
	if err := parallel(keys, 20, func(i int) error {
		_, err := payOrder(s, orders[i].OrderNo, orders[i].AmountCents, "")
		return err
	}); err != nil {
		t.Fatalf("pay round two: %v", err)
	}
	testenv.Eventually(t, 30*time.Second, "round two finished", func() (bool, error) {
		c := statusCounts(t, s)
		return c["finished"] == keys, fmt.Errorf("orders by status %v", c)
	})

	// Each key sold exactly once, to a distinct round-two order, and shown
	// to that buyer.
	roundTwo := map[int64]bool{}
	all := ordersByNo(t, s)
	for _, o := range orders {
		roundTwo[all[o.OrderNo].ID] = true
	}
	soldTo := map[int64]int{}
	for _, k := range cardKeys(t, s) {
		if k.Status != model.CardSold || k.OrderID == nil || !roundTwo[*k.OrderID] {
			t.Errorf("key %s is %s for order %v, want SOLD to a round-two order", k.Code, k.Status, k.OrderID)
			continue
		}
		soldTo[*k.OrderID]++
	}
	for id, n := range soldTo {
		if n != 1 {
			t.Errorf("order %d holds %d keys, want 1", id, n)
		}
	}
	var shown []string
	for i, o := range orders {
		shown = append(shown, second[i].Order(t, o.OrderNo).Cards...)
	}
	slices.Sort(shown)
	if !slices.Equal(shown, codes) {
		t.Errorf("buyers were shown %d codes (%d distinct), want each of the %d keys once", len(shown), len(slices.Compact(slices.Clone(shown))), len(codes))
	}
	waitCountersMatch(t, s, 10*time.Second, pid)
	if n, _, _ := counter(s, pid); n != 0 {
		t.Errorf("counter %d after every key was sold, want 0", n)
	}
}
