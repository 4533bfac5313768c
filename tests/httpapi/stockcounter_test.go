package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
)

// TestStockCounterSurvivesReconciliation: reconciliation rebuilds the Redis
// stock counters while buyers create and cancel orders. A rebuild that read
// the ledger and then blindly overwrote the counter would lose a restore
// landing in between and leave the counter too low — a product with keys
// answering out_of_stock. The rebuild is a compare-and-set, so during churn
// the counter is never below the ledger; it may be above it by the takes in
// flight at a rebuild (counted in Redis, not yet committed), which the
// ledger refuses. Once activity stops, one rebuild makes it exact.
func TestStockCounterSurvivesReconciliation(t *testing.T) {
	const keys, buyers = 8, 8
	s := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	card := s.NewCardProduct(t, "churn-card", 100, keys)
	body, _ := json.Marshal(map[string]any{"product_id": card, "quantity": 1})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var cycles, passes atomic.Int64
	var mu sync.Mutex
	var errs []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, fmt.Sprintf(format, args...))
	}
	// loop runs step in a goroutine of its own until stop closes or step
	// gives up (after reporting why).
	loop := func(step func() bool) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !step() {
					return
				}
			}
		})
	}
	for b := range buyers {
		_, c := s.NewUser(t, fmt.Sprintf("churn%d", b), 0)
		loop(func() bool {
			st, raw, err := c.Send("POST", "/api/v1/orders", body)
			if err != nil || (st != 201 && st != 409) {
				fail("create: %d %s %v", st, raw, err)
				return false
			}
			if st == 409 {
				return true
			}
			var o struct {
				OrderNo string `json:"order_no"`
			}
			_ = json.Unmarshal(raw, &o)
			if st, raw, err := c.Send("POST", "/api/v1/orders/"+o.OrderNo+"/cancel", nil); err != nil || st != 200 {
				fail("cancel %s: %d %s %v", o.OrderNo, st, raw, err)
				return false
			}
			cycles.Add(1)
			return true
		})
	}
	counter := stock.NewCounter(s.SC.Redis)
	loop(func() bool {
		if _, err := s.UC.Reconciler.Run(ctx); err != nil {
			fail("reconcile: %v", err)
			return false
		}
		passes.Add(1)
		return true
	})
	testenv.Eventually(t, time.Minute, "120 create+cancel cycles beside 40 reconciliation passes", func() (bool, error) {
		mu.Lock()
		failed := len(errs) > 0
		mu.Unlock()
		return failed || (cycles.Load() >= 120 && passes.Load() >= 40), nil
	})
	close(stop)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("churn failed: %v", errs[0])
	}
	t.Logf("%d create+cancel cycles, %d reconciliation passes", cycles.Load(), passes.Load())

	if n, ok, err := counter.Get(ctx, card); err != nil || !ok || n < keys {
		t.Errorf("after churn the Redis counter = %d (present %v, err %v): below the ledger's %d, it would refuse buyers", n, ok, err, keys)
	}
	// Quiescent: one reconciliation pass makes it exact.
	if _, err := s.UC.Reconciler.Run(ctx); err != nil {
		t.Fatal(err)
	}
	sellable := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED')`, card)
	if sellable != keys {
		t.Fatalf("ledger sellable keys = %d, want %d (every order was cancelled)", sellable, keys)
	}
	n, ok, err := counter.Get(ctx, card)
	if err != nil || !ok || n != sellable {
		t.Errorf("Redis stock counter = %d (present %v, err %v), ledger says %d", n, ok, err, sellable)
	}
}
