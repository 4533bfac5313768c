package model_test

import (
	"sync"
	"testing"

	"orderflow/model"
)

// TestAddRefundedHoldsTheSum: an order's refunds add up to at most what it
// was paid, on both backends and for refunds asked at once: the condition
// is in the UPDATE, so no read before the write can let two through.
func TestAddRefundedHoldsTheSum(t *testing.T) {
	eachStore(t, func(t *testing.T, bd *bundle) {
		o := bd.order(t, model.OrderFinished) // 100 cents
		steps := []struct {
			amount int64
			want   bool
			sum    int64
		}{
			{33, true, 33}, {33, true, 66}, {35, false, 66}, {34, true, 100}, {1, false, 100},
		}
		for _, st := range steps {
			ok, err := bd.store.AddRefunded(bd.ctx, o.ID, st.amount)
			if err != nil || ok != st.want {
				t.Fatalf("add %d: %v, %v; want %v", st.amount, ok, err, st.want)
			}
			if got, _ := bd.store.OrderByID(bd.ctx, o.ID); got.RefundedCents != st.sum {
				t.Fatalf("after adding %d: refunded_cents %d, want %d", st.amount, got.RefundedCents, st.sum)
			}
		}

		// Eight transactions at once, each asking for 30 of 100: three fit.
		o = bd.order(t, model.OrderFinished)
		var wg sync.WaitGroup
		var mu sync.Mutex
		passed := 0
		for range 8 {
			wg.Go(func() {
				var ok bool
				err := bd.store.InTx(bd.ctx, func(tx *model.Store) (err error) {
					ok, err = tx.AddRefunded(bd.ctx, o.ID, 30)
					return err
				})
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if ok {
					passed++
				}
			})
		}
		wg.Wait()
		got, _ := bd.store.OrderByID(bd.ctx, o.ID)
		if passed != 3 || got.RefundedCents != 90 {
			t.Errorf("%d of 8 refunds of 30 passed, refunded_cents %d; want 3 and 90", passed, got.RefundedCents)
		}
	})
}
