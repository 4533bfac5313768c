package crashes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// TestWorkerKilledMidCloseBatchEveryOrderClosesOnce: close tasks pile up
// while no worker runs, so a real worker process takes them together and
// closes them in one transaction (closebatch.go); it dies after that commit,
// at the Redis counter restore of the order created last, with the restores
// of the batch not all done (killMidCloseBatch; tried again with new orders
// when that order did not land in a batch). A clean worker then leaves every
// order closed once — one close event, one restore flow, its key recycled
// once, nothing LOCKED — and the stock counter equal to the ledger.
func TestWorkerKilledMidCloseBatchEveryOrderClosesOnce(t *testing.T) {
	t.Parallel()
	const n, attempts = 12, 3
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.OrderTTL = svc.Duration(time.Second)
		// The worker's start-up reconciliation closes orders expired longer
		// than the grace one at a time, racing the close tasks: keep it off
		// these orders, so the close tasks take them, in a batch.
		c.ReconcileGrace = svc.Duration(time.Minute)
	}})
	sh := newShop(t, s, attempts*n+4)
	all, group := untilBatched(t, attempts, "close batch", func() ([]*placed, bool) {
		return killMidCloseBatch(t, s, sh, n)
	})

	// An order whose close task the dead worker had taken but not yet run
	// (waiting for a lead while the armed batch committed, which happens on
	// a loaded box) comes back only through asynq's lease recovery: the lease
	// lapses 30 s after the death and a check once a minute takes back tasks
	// whose lease lapsed 30 s before — up to two minutes. The sweep leaves it
	// to asynq: its task is live.
	s.StartWorker(t)
	deadline := time.Now().Add(150 * time.Second)
	for _, p := range all {
		waitStatus(t, s, p.order.OrderNo, "closed", time.Until(deadline))
	}
	sellable := func() int64 {
		return s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED')`, sh.card)
	}
	testenv.Eventually(t, time.Until(deadline)+30*time.Second, "the card's stock counter equal to the ledger", func() (bool, error) {
		got, ok, err := stock.NewCounter(s.SC.Redis).Get(context.Background(), sh.card)
		if err != nil {
			return false, err
		}
		want := sellable()
		return ok && got == want, fmt.Errorf("redis %d (present %v), ledger %d", got, ok, want)
	})
	for _, p := range all {
		v := adminGetOrder(t, s, p.order.OrderNo)
		if c := v.count("pending", "closed", ""); c != 1 {
			t.Errorf("order %s: %d pending→closed events, want 1; events %+v", p.order.OrderNo, c, v.Events)
		}
		if c := s.Count(t, `SELECT COUNT(*) FROM stock_flows WHERE order_id = ? AND flow_type = ?`, p.orderID, model.FlowCloseRestore); c != 1 {
			t.Errorf("order %s: %d close-restore stock flows, want 1", p.order.OrderNo, c)
		}
		if c := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status IN ('LOCKED', 'SOLD')`, p.orderID); c != 0 {
			t.Errorf("order %s: %d keys still locked or sold to it, want 0", p.order.OrderNo, c)
		}
	}
	// The last attempt's keys stay with their orders, recycled (an earlier
	// attempt's may have been taken again by a later one's orders).
	for _, p := range group {
		if c := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'RECYCLED'`, p.orderID); c != 1 {
			t.Errorf("order %s: %d recycled keys, want 1", p.order.OrderNo, c)
		}
	}
	if c := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'LOCKED'`, sh.card); c != 0 {
		t.Errorf("%d card keys still LOCKED, want 0", c)
	}
	if got, want := sellable(), int64(attempts*n+4); got != want {
		t.Errorf("%d sellable keys after every order closed, want all %d", got, want)
	}
}

// killMidCloseBatch piles up the close tasks of n new orders, starts a real
// worker armed to die at the Redis restore of the order created last, and
// waits for it to die there. batched is false when that order was not closed
// in a batch of two or more (see untilBatched).
func killMidCloseBatch(t *testing.T, s *testenv.Stack, sh shop, n int) (group []*placed, batched bool) {
	t.Helper()
	for range n {
		group = append(group, place(t, s, sh, "card", 1))
	}
	armed := group[n-1].order.OrderNo
	// Every close task due (expire_at rounded up to the second) before the worker starts.
	last := s.OrderRow(t, armed).ExpireAt.Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(last.Add(200 * time.Millisecond)))

	w := testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, failpoint.StockRestore+"=exit@"+armed)
	if code := w.WaitExit(t, 30*time.Second); code != failpoint.ExitCode {
		t.Fatalf("worker exited %d, want %d (died at the failpoint); output:\n%s", code, failpoint.ExitCode, w.Out.String())
	}
	if out := w.Out.String(); !strings.Contains(out, "failpoint "+failpoint.StockRestore+" fired for "+armed) {
		t.Fatalf("worker exited 77 but not at the armed point; output:\n%s", out)
	}
	// The batch committed before the worker died: the armed order is closed,
	// with others at the same instant, and its stock is not yet back in Redis.
	row := s.OrderRow(t, armed)
	if got := row.Status.String(); got != "closed" {
		t.Fatalf("armed order %s is %s right after the crash, want closed (the batch committed)", armed, got)
	}
	together := s.Count(t, `SELECT COUNT(*) FROM orders WHERE id IN (`+idList(group)+`) AND status = ? AND closed_at = ?`,
		model.OrderClosed, row.ClosedAt)
	return group, together >= 2
}
