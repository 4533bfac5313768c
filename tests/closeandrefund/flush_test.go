package closeandrefund

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"orderflow/internal/domain/reconcile"
	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// Done-when 4: Redis is wiped while 100 orders are pending (40 of them past
// their life and the grace) and 50 are paid but not activated, and the
// outbox holds nothing to replay. A worker that starts afterwards finds the
// epoch marker missing and reconciles at once — the schedule would not fire
// for a year: the expired orders close (keys recycled, stock restored), the
// paid ones are activated, the unexpired ones get a new close task and close
// at their expiry, and the Redis stock counters end equal to the ledger.
func TestReconcileAfterRedisWipe(t *testing.T) {
	const (
		ttl   = 8 * time.Second // the 60 live orders must outlive their creation and the first pass, even on a loaded machine
		grace = time.Second
	)
	ctx := context.Background()
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.OrderTTL = svc.Duration(ttl)
		c.ReconcileGrace = svc.Duration(grace)
		c.MaxPending = 20
		// Only the epoch marker may start reconciliation, and only
		// reconciliation may re-queue lost activations.
		c.ReconcileSchedule = "0 3 1 1 *"
		c.SweepInterval = svc.Duration(10 * time.Minute)
	}})
	testenv.Eventually(t, 10*time.Second, "the first worker sets the epoch marker", func() (bool, error) {
		n, err := s.SC.Redis.Exists(ctx, reconcile.EpochKey).Result()
		return n == 1, err
	})
	// No worker from here until the wipe: closes and activations pile up in Redis.
	s.Worker.Shutdown(ctx)

	pids := []int64{
		s.NewProduct(t, map[string]any{"sku": "wipe-a", "kind": "card", "price_cents": 300}),
		s.NewProduct(t, map[string]any{"sku": "wipe-b", "kind": "card", "price_cents": 400}),
	}
	for i, pid := range pids {
		s.AddCards(t, pid, fmt.Sprintf("WIPE%d", i), 100)
	}
	buyers := newBuyers(t, s, "wiped", 10)
	createN := func(n, offset int) []created {
		out := make([]created, n)
		if err := parallel(n, 8, func(i int) error {
			var err error
			out[i], err = mustCreate(buyers[(offset+i)%len(buyers)], pids[i%2], 1)
			return err
		}); err != nil {
			t.Fatalf("create orders: %v", err)
		}
		return out
	}
	expired := createN(40, 0)
	paid := createN(50, 40)
	if err := parallel(len(paid), 8, func(i int) error {
		_, err := payOrder(s, paid[i].OrderNo, paid[i].AmountCents, "")
		return err
	}); err != nil {
		t.Fatalf("pay: %v", err)
	}
	// Let the first 40 pass their life and the grace (a wait for a known
	// wall-clock time, not for an event), then create the 60 that will still
	// be alive when the worker starts.
	var last time.Time
	for _, o := range expired {
		if o.ExpireAt.After(last) {
			last = o.ExpireAt
		}
	}
	time.Sleep(time.Until(last.Add(grace + 200*time.Millisecond)))
	live := createN(60, 90)

	// FLUSHALL, as far as this stack can see: FLUSHDB on the stack's own
	// reserved Redis DB (s.SC.Redis is bound to it). The shared server's
	// other DBs belong to other test packages and are left alone.
	if err := s.SC.Redis.FlushDB(ctx).Err(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	// The worst case: nothing left in the outbox to replay either.
	if err := s.SC.DB.Exec(`DELETE FROM outbox`).Error; err != nil {
		t.Fatal(err)
	}
	if n, _ := s.SC.Redis.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("redis DB holds %d keys after the flush", n)
	}
	if c := statusCounts(t, s); c["pending"] != 100 || c["paid"] != 50 {
		t.Fatalf("before the worker starts: orders %v, want 100 pending and 50 paid", c)
	}

	startedAt := time.Now()
	for _, o := range live {
		if !startedAt.Before(o.ExpireAt) {
			t.Fatalf("live order %s expired at %v, before the worker started at %v: the machine is too slow for this timing", o.OrderNo, o.ExpireAt, startedAt)
		}
	}
	s.StartWorker(t)

	byNos := func(cs []created) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.OrderNo
		}
		return out
	}
	waitAll := func(what string, nos []string, within time.Duration, ok func(model.Order) bool) time.Duration {
		t.Helper()
		testenv.Eventually(t, within, what, func() (bool, error) {
			all := ordersByNo(t, s)
			bad := 0
			for _, no := range nos {
				if !ok(all[no]) {
					bad++
				}
			}
			return bad == 0, fmt.Errorf("%d of %d not yet", bad, len(nos))
		})
		return time.Since(startedAt)
	}
	closeLag := waitAll("expired orders closed", byNos(expired), 20*time.Second, func(o model.Order) bool { return o.Status == model.OrderClosed })
	activateLag := waitAll("paid orders finished", byNos(paid), 20*time.Second, func(o model.Order) bool { return o.Status == model.OrderFinished })
	requeueLag := waitAll("live orders' closes re-queued", byNos(live), 20*time.Second, func(o model.Order) bool { return o.CloseGen == 2 || o.Status != model.OrderPending })
	if n, err := s.SC.Redis.Exists(ctx, reconcile.EpochKey).Result(); err != nil || n != 1 {
		t.Errorf("epoch marker not set again after the wipe (exists=%d, err=%v)", n, err)
	}
	// Rebuilt counters agree with the ledger right after reconciliation…
	waitCountersMatch(t, s, 10*time.Second, pids...)
	rebuiltAfter := time.Since(startedAt)

	// …and after the re-queued closes ran at the live orders' expiry.
	var lastLive time.Time
	for _, o := range live {
		if o.ExpireAt.After(lastLive) {
			lastLive = o.ExpireAt
		}
	}
	waitAll("live orders closed at their expiry", byNos(live), time.Until(lastLive)+20*time.Second, func(o model.Order) bool { return o.Status == model.OrderClosed })
	waitIdle(t, s, 20*time.Second)
	waitCountersMatch(t, s, 10*time.Second, pids...)

	chk := newChecker(t)
	all := ordersByNo(t, s)
	events := orderEvents(t, s)
	flows := flowsByOrder(t, s)
	effects := effectCounts(t, s)
	keysOf := map[int64][]model.CardStatus{}
	keyStatus := map[model.CardStatus]int{}
	for _, k := range cardKeys(t, s) {
		keyStatus[k.Status]++
		if k.OrderID != nil {
			keysOf[*k.OrderID] = append(keysOf[*k.OrderID], k.Status)
		}
	}
	closedBy := func(no string) string {
		for _, e := range events[no] {
			if e.ToStatus == "closed" {
				return e.Reason
			}
		}
		return ""
	}
	for _, c := range expired {
		o := all[c.OrderNo]
		// The sweep (its slot runs at start too) may re-queue the close
		// before reconciliation closes it: either closer is right.
		if p, by := path(events[c.OrderNo]), closedBy(c.OrderNo); p != "-→pending,pending→closed" || (by != "reconcile" && by != "expired") {
			chk.errorf("expired order %s: history %s closed by %q, want closed by reconciliation or its re-queued close task", c.OrderNo, p, by)
		}
		if !slices.Equal(keysOf[o.ID], []model.CardStatus{model.CardRecycled}) || !slices.Equal(flows[o.ID], []model.FlowKind{model.FlowLock, model.FlowCloseRestore}) {
			chk.errorf("expired order %s: keys %v, flows %v; want its key RECYCLED and flows [lock close-restore]", c.OrderNo, keysOf[o.ID], flows[o.ID])
		}
	}
	for _, c := range live {
		o := all[c.OrderNo]
		if p := path(events[c.OrderNo]); p != "-→pending,pending→closed" || closedBy(c.OrderNo) != "expired" {
			chk.errorf("live order %s: history %s closed by %q, want closed by its (re-queued) close task", c.OrderNo, p, closedBy(c.OrderNo))
		}
		if o.CloseGen != 2 {
			chk.errorf("live order %s: close_gen %d, want 2 (re-queued once)", c.OrderNo, o.CloseGen)
		}
		if o.ClosedAt == nil || o.ClosedAt.Before(o.ExpireAt) {
			chk.errorf("live order %s closed at %v, before its expiry %v", c.OrderNo, o.ClosedAt, o.ExpireAt)
		}
		if !slices.Equal(keysOf[o.ID], []model.CardStatus{model.CardRecycled}) || !slices.Equal(flows[o.ID], []model.FlowKind{model.FlowLock, model.FlowCloseRestore}) {
			chk.errorf("live order %s: keys %v, flows %v; want its key RECYCLED and flows [lock close-restore]", c.OrderNo, keysOf[o.ID], flows[o.ID])
		}
	}
	for _, c := range paid {
		o := all[c.OrderNo]
		if o.ActivateGen != 2 {
			chk.errorf("paid order %s: activate_gen %d, want 2 (re-queued by reconciliation)", c.OrderNo, o.ActivateGen)
		}
		if !slices.Equal(keysOf[o.ID], []model.CardStatus{model.CardSold}) || effects[o.ID] != 1 || !slices.Equal(flows[o.ID], []model.FlowKind{model.FlowLock, model.FlowSell}) {
			chk.errorf("paid order %s: keys %v, effects %d, flows %v; want one SOLD key, one effect, flows [lock sell]", c.OrderNo, keysOf[o.ID], effects[o.ID], flows[o.ID])
		}
	}
	if keyStatus[model.CardSold] != 50 || keyStatus[model.CardRecycled] != 100 || keyStatus[model.CardUnsold] != 50 || keyStatus[model.CardLocked] != 0 {
		chk.errorf("keys by status %v, want 50 SOLD, 100 RECYCLED, 50 UNSOLD", keyStatus)
	}
	var total int64
	for _, pid := range pids {
		n, _, _ := stock.NewCounter(s.SC.Redis).Get(ctx, pid)
		total += n
	}
	if total != 150 {
		chk.errorf("stock counters sum to %d, want 150 (200 keys - 50 sold)", total)
	}
	chk.done()
	t.Logf("after the worker started: expired orders closed within %v, paid orders finished within %v, live closes re-queued within %v, counters matched within %v",
		closeLag.Round(time.Millisecond), activateLag.Round(time.Millisecond), requeueLag.Round(time.Millisecond), rebuiltAfter.Round(time.Millisecond))
}
