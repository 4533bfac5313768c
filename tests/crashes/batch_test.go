package crashes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

// The batched activation path (ORDERFLOW_ACTIVATE_BATCH, on by default):
// a worker that holds several activate tasks at once claims their orders in
// one statement and delivers them in one transaction. These tests pile the
// tasks up before a worker starts, so it takes them together: asynq hands
// them out oldest first, the first two run alone (nothing waits yet) and the
// rest queue behind them and go as one batch — the order paid last is in it.

// payAll pays every order of a group, oldest first, with no worker running.
func payAll(t *testing.T, s *testenv.Stack, group []*placed) {
	t.Helper()
	for _, p := range group {
		p.paidAt = time.Now()
		s.PayOrder(t, p.order, "")
	}
}

// sharedClaims is how many of the orders were claimed in the same statement
// as another: a batch claim gives all its orders one claimed_at, and an
// order claimed alone gets its own.
func sharedClaims(t *testing.T, s *testenv.Stack, group []*placed) int64 {
	t.Helper()
	return s.Count(t, `SELECT COALESCE(SUM(n), 0) FROM (SELECT COUNT(*) AS n FROM orders
		WHERE id IN (`+idList(group)+`) AND claimed_at IS NOT NULL GROUP BY claimed_at HAVING COUNT(*) > 1) AS batches`)
}

// TestWorkerKilledMidBatchEveryOrderFinishesOnce kills a real worker process
// in the middle of a batch — after the batch's claim committed, inside its
// delivery transaction after the effects, and just before its finalize —
// with the three product kinds in every batch, and shows a clean worker
// finishing every order of every batch exactly once.
func TestWorkerKilledMidBatchEveryOrderFinishesOnce(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	points := []string{failpoint.ActivateAfterClaim, failpoint.ActivateAfterEffect, failpoint.ActivateBeforeFinalize}
	const perBatch, attempts = 9, 3
	// Card keys for every attempt: a third of each group is card orders of 2.
	sh := newShop(t, s, attempts*len(points)*perBatch*2/len(batchKinds)+4)

	var all []*placed
	for i, point := range points {
		placed, _ := untilBatched(t, attempts, point, func() ([]*placed, bool) {
			return killMidBatch(t, s, sh, point, i, perBatch)
		})
		all = append(all, placed...)
	}

	s.StartWorker(t)
	finishedBy := waitAllFinished(t, s, 60*time.Second, all)
	for _, p := range all {
		v := adminGetOrder(t, s, p.order.OrderNo)
		if n := v.count("claimed", "finished", ""); n != 1 {
			t.Errorf("order %s: %d claimed→finished events, want 1; events %+v", p.order.OrderNo, n, v.Events)
		}
		checkDeliveredOnce(t, s, p, finishedBy)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'LOCKED'`, sh.card); n != 0 {
		t.Errorf("%d card keys still LOCKED, want 0", n)
	}
}

// batchKinds are the product kinds a batch of killMidBatch mixes.
var batchKinds = []string{"card", "recharge", "subscription"}

// untilBatched runs kill — which places new orders and kills a worker at
// the armed one — until the armed order died inside a batch, at most
// attempts times: on a loaded box the batches can finish faster than asynq
// hands out the tasks, and the armed order then runs alone. It returns
// every order placed (the clean worker must finish them all) and the last
// attempt's.
func untilBatched(t *testing.T, attempts int, what string, kill func() ([]*placed, bool)) (all, last []*placed) {
	t.Helper()
	for range attempts {
		group, batched := kill()
		all = append(all, group...)
		if batched {
			return all, group
		}
		t.Logf("%s: the armed order ran alone; trying again with new orders", what)
	}
	t.Fatalf("%s: the armed order ran alone in all %d attempts, want it in a batch of ≥ 2", what, attempts)
	return nil, nil
}

// idList is the orders' IDs for an SQL IN list.
func idList(group []*placed) string {
	ids := make([]string, len(group))
	for i, p := range group {
		ids[i] = fmt.Sprint(p.orderID)
	}
	return strings.Join(ids, ",")
}

// killMidBatch places n orders (the one paid last, the armed one, of the
// kind after batchKinds[rot]), pays them with no worker running, and runs a
// worker armed to die at point for the armed order. The worker died holding
// what it had claimed: the armed order is claimed and no claimed order has
// an effect. It reports whether the armed order was claimed in a batch.
func killMidBatch(t *testing.T, s *testenv.Stack, sh shop, point string, rot, n int) (group []*placed, batched bool) {
	t.Helper()
	for j := range n {
		group = append(group, place(t, s, sh, batchKinds[(rot+j+1)%len(batchKinds)], 2))
	}
	no := group[n-1].order.OrderNo
	payAll(t, s, group)
	w := testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, point+"=exit@"+no)
	if code := w.WaitExit(t, 30*time.Second); code != failpoint.ExitCode {
		t.Fatalf("%s: worker exited %d, want %d (died at the failpoint); output:\n%s", point, code, failpoint.ExitCode, w.Out.String())
	}
	if out := w.Out.String(); !strings.Contains(out, "failpoint "+point+" fired for "+no) {
		t.Fatalf("%s: worker exited 77 but not at the armed point; output:\n%s", point, out)
	}
	armed := s.OrderRow(t, no)
	if got := armed.Status.String(); got != "claimed" || armed.ClaimedAt == nil {
		t.Fatalf("%s: armed order %s is %s right after the crash, want claimed", point, no, got)
	}
	for _, p := range group {
		if o := s.OrderRow(t, p.order.OrderNo); o.Status.String() == "claimed" && effectRows(t, s, p.orderID) != 0 {
			t.Fatalf("%s: claimed order %s has an effect right after the crash, want none (rolled back)", point, p.order.OrderNo)
		}
	}
	// A batch claim gives all its orders one claimed_at.
	together := s.Count(t, `SELECT COUNT(*) FROM orders WHERE id IN (`+idList(group)+`) AND claimed_at = ?`, armed.ClaimedAt)
	return group, together >= 2
}

// TestPoisonOrderInBatchFailsAloneOthersFinish puts an order whose delivery
// cannot succeed (its locked keys are gone) in a batch: the batch's delivery
// is rolled back and its orders go one by one, so the poison order fails at
// the attempt cap with nothing applied and every other order finishes once,
// in time.
func TestPoisonOrderInBatchFailsAloneOthersFinish(t *testing.T) {
	t.Parallel()
	const maxAttempts = 3
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.MaxAttempts = maxAttempts
		c.ActivateRetryDelay = svc.Duration(20 * time.Millisecond)
	}})
	sh := newShop(t, s, 12)
	var group []*placed
	for i := range 10 {
		group = append(group, place(t, s, sh, []string{"card", "card", "recharge", "subscription"}[i%4], 1))
	}
	poison := place(t, s, sh, "card", 1)
	group = append(group, poison)
	// The keys locked to the poison order vanish: no delivery can sell them.
	if err := s.SC.DB.Exec(`UPDATE card_keys SET status = 'UNSOLD', order_id = NULL WHERE order_id = ?`, poison.orderID).Error; err != nil {
		t.Fatal(err)
	}
	payAll(t, s, group)
	s.StartWorker(t)

	v := waitStatus(t, s, poison.order.OrderNo, "failed", 30*time.Second)
	if v.Attempts != maxAttempts {
		t.Errorf("poison order failed after %d attempts, want the cap %d", v.Attempts, maxAttempts)
	}
	if n := effectRows(t, s, poison.orderID); n != 0 {
		t.Errorf("poison order: %d effect rows, want 0", n)
	}
	finishedBy := time.Now()
	for _, p := range group[:len(group)-1] {
		waitStatus(t, s, p.order.OrderNo, "finished", 10*time.Second)
		checkDeliveredOnce(t, s, p, finishedBy.Add(10*time.Second))
	}
	if n := sharedClaims(t, s, group); n < 2 {
		t.Errorf("%d orders claimed together, want a batch of ≥ 2 (the test did not exercise the batch path)", n)
	}
	ctx := context.Background()
	if notes, err := s.SC.Store.NotificationsByKind(ctx, "order_failed"); err != nil || len(notes) != 1 {
		t.Errorf("order_failed notifications = %d (err %v), want 1 (the poison order only)", len(notes), err)
	}
}
