package crashes

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/sign"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/svc"

	"github.com/hibiken/asynq"
)

// notifyPayment sends a signed payment notification straight to the API
// (not through the simulator) and returns the status and how long the API
// took to answer.
func notifyPayment(t *testing.T, s *testenv.Stack, o testenv.OrderView, tradeNo string) (int, time.Duration) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"order_no": o.OrderNo, "trade_no": tradeNo, "amount_cents": o.AmountCents})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st, raw, err := s.Notify(body, sign.Sum(s.Config.PaySecret, body))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("notify %s: %v (after %v)", o.OrderNo, err, took)
	}
	if st != 200 {
		t.Logf("notify %s answered %d: %s", o.OrderNo, st, raw)
	}
	return st, took
}

// TestRedisDownAtPaymentOrderActivatesWhenRedisReturns loses Redis (the
// test's own redis-server, killed) while payment notifications arrive: the
// API must still answer 200 at once after the ledger write, and once a fresh,
// empty Redis is back the outbox poller delivers the activation with no
// manual step and each effect is applied once.
func TestRedisDownAtPaymentOrderActivatesWhenRedisReturns(t *testing.T) {
	t.Parallel()
	rs := testenv.StartRedisServer(t)
	cfg := testenv.Config(t)
	cfg.RedisAddr, cfg.RedisDB = rs.Addr(), 0
	// A claim timeout longer than the test keeps the periodic lost-task
	// sweep away from these orders.
	cfg.ClaimTimeout = svc.Duration(time.Minute)
	s := testenv.StartWith(t, cfg, testenv.Options{})
	sh := newShop(t, s, 4)
	orders := []*placed{place(t, s, sh, "card", 2), place(t, s, sh, "recharge", 3)}

	rs.Kill(t)
	for _, p := range orders {
		p.paidAt = time.Now()
		st, took := notifyPayment(t, s, p.order, "T-RD-"+p.order.OrderNo)
		if st != 200 {
			t.Fatalf("%s order: notify with Redis down answered %d, want 200", p.kind, st)
		}
		if took >= 3*time.Second {
			t.Errorf("%s order: notify with Redis down took %v, want < 3s", p.kind, took)
		}
		o := s.OrderRow(t, p.order.OrderNo)
		if got := o.Status.String(); got != "paid" {
			t.Fatalf("%s order: %s in the ledger after the notify, want paid", p.kind, got)
		}
		taskID := tasks.ID(tasks.TypeOrderActivate, p.order.OrderNo, 1)
		if n := s.Count(t, `SELECT COUNT(*) FROM outbox WHERE task_id = ?`, taskID); n != 1 {
			t.Fatalf("%s order: %d outbox rows for %s, want 1 (committed with the payment)", p.kind, n, taskID)
		}
	}
	// Redis stays down a while: the poller keeps failing and the rows wait.
	time.Sleep(time.Second)
	for _, p := range orders {
		if got := s.OrderRow(t, p.order.OrderNo).Status.String(); got != "paid" {
			t.Fatalf("%s order: %s while Redis is down, want still paid", p.kind, got)
		}
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM outbox`); n != int64(len(orders)) {
		t.Fatalf("%d outbox rows while Redis is down, want %d", n, len(orders))
	}

	rs.Start(t) // the same port, fresh and empty: nothing of the old queue survives
	finishedBy := waitAllFinished(t, s, 30*time.Second, orders)
	for _, p := range orders {
		o := s.OrderRow(t, p.order.OrderNo)
		// The poller moves the gen-1 row out of the outbox as soon as Redis
		// answers. Reconciliation (Redis came back without its epoch marker)
		// may re-queue gen 2 beside it; either may win, once.
		gen1, gen2 := tasks.ID(tasks.TypeOrderActivate, p.order.OrderNo, 1), tasks.ID(tasks.TypeOrderActivate, p.order.OrderNo, 2)
		if o.ClaimTaskID == nil || (*o.ClaimTaskID != gen1 && *o.ClaimTaskID != gen2) {
			t.Errorf("%s order: claimed by task %v, want %s (outbox poller) or %s (reconciliation)", p.kind, o.ClaimTaskID, gen1, gen2)
		}
		if s.MoveCount(t, p.order.OrderNo, "claimed→finished") != 1 {
			t.Errorf("%s order: moves %v, want exactly one claimed→finished", p.kind, s.Moves(t, p.order.OrderNo))
		}
		checkDeliveredOnce(t, s, p, finishedBy)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM outbox`); n != 0 {
		t.Errorf("%d outbox rows left after Redis returned, want 0", n)
	}
}

// TestArchivedTaskDoesNotBlockRequeue gets an order's activation task
// archived the natural way — delivery fails until asynq's retries run out,
// below the database's attempt cap — then removes the fault: the lost-task
// sweep (the periodic recovery, or reconciliation's pass, whichever comes
// first: both run order.recover) must re-queue the still-paid order under the
// next generation and it must finish, the archived task of the old
// generation notwithstanding.
func TestArchivedTaskDoesNotBlockRequeue(t *testing.T) {
	t.Parallel()
	testenv.LockFailpoints(t)
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.MaxAttempts = 50 // far above asynq's MaxRetry: asynq gives up first
		c.ActivateRetryDelay = svc.Duration(20 * time.Millisecond)
	}})
	sh := newShop(t, s, 0)
	p := place(t, s, sh, "recharge", 2)
	no := p.order.OrderNo

	// Delivery fails exactly as many times as asynq runs the task (the first
	// run and MaxRetry retries), then the point disarms itself: nothing has
	// to race asynq's archiving to remove the fault.
	runs := s.SC.Tasks[tasks.TypeOrderActivate].MaxRetry + 1
	if err := failpoint.Enable(failpoint.ActivateDeliver, fmt.Sprintf("%d*error@%s", runs, no)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { failpoint.Disable(failpoint.ActivateDeliver) })
	p.paidAt = time.Now()
	s.PayOrder(t, p.order, "")

	gen1 := tasks.ID(tasks.TypeOrderActivate, no, 1)
	testenv.Eventually(t, 20*time.Second, "task "+gen1+" archived", func() (bool, error) {
		info, err := s.SC.Inspector.GetTaskInfo(tasks.QueueCritical, gen1)
		return err == nil && info.State == asynq.TaskStateArchived, err
	})
	if st := s.OrderRow(t, no).Status.String(); st == "failed" {
		t.Fatalf("order failed when asynq gave up; want it left paid (the attempt cap %d was not reached)", s.Config.MaxAttempts)
	}

	v := waitStatus(t, s, no, "finished", 30*time.Second)
	if v.ActivateGen != 2 {
		t.Errorf("activate_gen %d, want 2 (re-queued once by the lost-task sweep)", v.ActivateGen)
	}
	if v.Attempts != runs+1 {
		t.Errorf("attempts %d, want %d (%d failed runs of gen 1, one run of gen 2)", v.Attempts, runs+1, runs)
	}
	if n := s.MoveCount(t, no, "claimed→finished"); n != 1 {
		t.Errorf("%d claimed→finished moves, want 1", n)
	}
	o := s.OrderRow(t, no)
	if want := tasks.ID(tasks.TypeOrderActivate, no, 2); o.ClaimTaskID == nil || *o.ClaimTaskID != want {
		t.Errorf("finished by task %v, want %s", o.ClaimTaskID, want)
	}
	if info, err := s.SC.Inspector.GetTaskInfo(tasks.QueueCritical, gen1); err != nil || info.State != asynq.TaskStateArchived {
		t.Errorf("old task %s: %+v, %v; want still archived", gen1, info, err)
	}
	checkDeliveredOnce(t, s, p, time.Now())
}
