package reconcile_test

import (
	"context"
	"strconv"
	"testing"

	"orderflow/internal/domain/reconcile"
	"orderflow/internal/infra/stock"
)

// A Redis stock counter that differs from the ledger by the same amount at
// two sweep passes is reset from it, low (a create killed between its take
// and its commit) or high (a replica that lost a take); one that differs by
// a different amount each pass (takes in flight) is left alone, and a
// missing one is left for the next take to build. Without this, a low
// counter on a product that never runs out waited for the daily rebuild.
func TestSweepRepairsACounterOffForAWholePass(t *testing.T) {
	t.Parallel()
	s := startSweep(t, 2)
	ctx := context.Background()
	var low, high, moving, missing int64
	for i, p := range []*int64{&low, &high, &moving, &missing} {
		*p = s.NewProduct(t, map[string]any{"sku": "counter-" + itoa(int64(i)), "kind": "card", "price_cents": 100})
		s.AddCards(t, *p, "CNT"+itoa(int64(i)), 10)
	}
	set := func(p, v int64) {
		t.Helper()
		if err := s.SC.Redis.Set(ctx, stock.Key(p), v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	pass := func() int {
		t.Helper()
		return sweepPass(t, s).Kinds[reconcile.KindStockCounters].Requeued
	}
	counter := func(p int64) string {
		n, ok, err := stock.NewCounter(s.SC.Redis).Get(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return "missing"
		}
		return itoa(n)
	}
	set(low, 7)
	set(high, 12)
	set(moving, 9)
	s.SC.Redis.Del(ctx, stock.Key(missing))
	if n := pass(); n != 0 {
		t.Fatalf("first pass repaired %d counters; a gap seen once may be a take in flight", n)
	}
	set(moving, 8) // another take meanwhile: a different gap
	if n := pass(); n != 2 {
		t.Errorf("second pass repaired %d counters, want 2 (the low and the high one)", n)
	}
	for _, c := range []struct {
		name    string
		product int64
		want    string
	}{{"low", low, "10"}, {"high", high, "10"}, {"moving", moving, "8"}, {"missing", missing, "missing"}} {
		if got := counter(c.product); got != c.want {
			t.Errorf("%s counter = %s after two passes, want %s", c.name, got, c.want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
