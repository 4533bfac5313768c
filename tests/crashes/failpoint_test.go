package crashes

import (
	"context"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/svc"

	"github.com/hibiken/asynq"
)

// TestWorkerKilledAtFailpointOrderStillFinishesOnce kills a real worker
// process at each activation failpoint, for each product kind, and shows a
// clean worker finishing every order through the stuck-claim recovery with
// each effect applied exactly once.
//
// The crashes run one after another (only one worker process alive at a
// time, so the armed one is the one that takes its order), then one clean
// worker recovers all nine: their claim timeouts run down together.
func TestWorkerKilledAtFailpointOrderStillFinishesOnce(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	sh := newShop(t, s, 10)

	type crash struct {
		point string
		*placed
	}
	var crashes []crash
	for _, point := range []string{failpoint.ActivateAfterClaim, failpoint.ActivateAfterEffect, failpoint.ActivateBeforeFinalize} {
		for _, kind := range []string{"card", "recharge", "subscription"} {
			crashes = append(crashes, crash{point, place(t, s, sh, kind, 2)})
		}
	}

	for _, c := range crashes {
		no := c.order.OrderNo
		w := testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, c.point+"=exit@"+no)
		c.paidAt = time.Now()
		s.PayOrder(t, c.order, "")
		if code := w.WaitExit(t, 30*time.Second); code != failpoint.ExitCode {
			t.Fatalf("%s/%s: worker exited %d, want %d (died at the failpoint); output:\n%s",
				c.point, c.kind, code, failpoint.ExitCode, w.Out.String())
		}
		if out := w.Out.String(); !strings.Contains(out, "failpoint "+c.point+" fired for "+no) {
			t.Fatalf("%s/%s: worker exited 77 but not at the armed point; output:\n%s", c.point, c.kind, out)
		}
		// Nothing runs now: the ledger shows exactly where the worker died.
		o := s.OrderRow(t, no)
		if got := o.Status.String(); got != "claimed" {
			t.Fatalf("%s/%s: order %s is %s right after the crash, want claimed", c.point, c.kind, no, got)
		}
		// The effect and the finalize commit in one transaction, and the
		// after-effect and before-finalize points are inside it: a death at
		// any point leaves no effect behind, only the claim.
		if n := effectRows(t, s, c.orderID); n != 0 {
			t.Fatalf("%s/%s: %d effect rows right after the crash, want 0 (rolled back with the delivery)", c.point, c.kind, n)
		}
	}

	s.StartWorker(t)
	finishedBy := waitAllFinished(t, s, 45*time.Second, crashes)

	for _, c := range crashes {
		t.Run(strings.TrimPrefix(c.point, "activate/")+"/"+c.kind, func(t *testing.T) {
			no := c.order.OrderNo
			v := adminGetOrder(t, s, no)
			if v.Status != "finished" {
				t.Fatalf("order %s is %s, want finished", no, v.Status)
			}
			if n := v.count("claimed", "paid", "stuck claim recovered"); n < 1 {
				t.Errorf("order %s: no claimed→paid \"stuck claim recovered\" event; events %+v", no, v.Events)
			}
			if v.ActivateGen < 2 {
				t.Errorf("order %s: activate_gen %d, want ≥ 2 (re-queued under a new generation)", no, v.ActivateGen)
			}
			if n := v.count("claimed", "finished", ""); n != 1 {
				t.Errorf("order %s: %d claimed→finished events, want 1; events %+v", no, n, v.Events)
			}
			if v.Attempts < 2 {
				t.Errorf("order %s: attempts %d, want ≥ 2 (the crashed one and the one that finished)", no, v.Attempts)
			}
			checkDeliveredOnce(t, s, c.placed, finishedBy)
		})
	}
	// Every key of the card product is accounted for: the three orders' six
	// sold, the rest untouched.
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'SOLD'`, sh.card); n != 6 {
		t.Errorf("card product: %d keys SOLD, want 6", n)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'UNSOLD'`, sh.card); n != 4 {
		t.Errorf("card product: %d keys UNSOLD, want 4", n)
	}
}

// TestPoisonOrderFailsAtCapThenOperatorRetryFinishes makes delivery of one
// order always fail: it must end failed after exactly the configured number
// of attempts with one admin notification and no effect, and an operator
// retry (once the fault is gone) must finish it under a new generation even
// though the run that gave up left its task archived.
func TestPoisonOrderFailsAtCapThenOperatorRetryFinishes(t *testing.T) {
	t.Parallel()
	testenv.LockFailpoints(t)
	const maxAttempts = 4
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.MaxAttempts = maxAttempts
		c.ActivateRetryDelay = svc.Duration(20 * time.Millisecond)
	}})
	sh := newShop(t, s, 3)
	p := place(t, s, sh, "card", 2)
	no := p.order.OrderNo

	if err := failpoint.Enable(failpoint.ActivateDeliver, "error@"+no); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { failpoint.Disable(failpoint.ActivateDeliver) })
	p.paidAt = time.Now()
	s.PayOrder(t, p.order, "")

	v := waitStatus(t, s, no, "failed", 30*time.Second)
	if v.Attempts != maxAttempts {
		t.Errorf("failed after %d attempts, want exactly the cap %d", v.Attempts, maxAttempts)
	}
	if n := v.count("paid", "claimed", "claim"); n != maxAttempts {
		t.Errorf("%d claims, want %d; events %+v", n, maxAttempts, v.Events)
	}
	if n := v.count("claimed", "failed", "attempts exhausted"); n != 1 {
		t.Errorf("%d claimed→failed events, want 1; events %+v", n, v.Events)
	}
	notes, err := s.SC.Store.NotificationsByKind(context.Background(), "order_failed")
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0].NotifyID, no) || notes[0].Recipient != "admin" {
		t.Errorf("order_failed notifications = %+v, want exactly one, to admin, for %s", notes, no)
	}
	if n := effectRows(t, s, p.orderID); n != 0 {
		t.Errorf("%d effect rows on a poison order, want 0", n)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'LOCKED'`, p.orderID); n != 2 {
		t.Errorf("%d keys still LOCKED to the failed order, want 2 (none sold)", n)
	}

	// The run that gave up left its task archived in asynq.
	gen1 := tasks.ID(tasks.TypeOrderActivate, no, 1)
	testenv.Eventually(t, 10*time.Second, "task "+gen1+" archived", func() (bool, error) {
		info, err := s.SC.Inspector.GetTaskInfo(tasks.QueueCritical, gen1)
		return err == nil && info.State == asynq.TaskStateArchived, err
	})

	failpoint.Disable(failpoint.ActivateDeliver)
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/orders/"+no+"/retry", nil, nil); st != 200 {
		t.Fatalf("admin retry: status %d", st)
	}
	v = waitStatus(t, s, no, "finished", 30*time.Second)
	if v.ActivateGen != 2 {
		t.Errorf("activate_gen %d after the operator retry, want 2", v.ActivateGen)
	}
	if v.Attempts != 1 {
		t.Errorf("attempts %d after the retry, want 1 (a fresh budget, one successful run)", v.Attempts)
	}
	if n := v.count("failed", "paid", "operator retry"); n != 1 {
		t.Errorf("%d failed→paid \"operator retry\" events, want 1; events %+v", n, v.Events)
	}
	checkDeliveredOnce(t, s, p, time.Now())
	if notes, _ := s.SC.Store.NotificationsByKind(context.Background(), "order_failed"); len(notes) != 1 {
		t.Errorf("%d order_failed notifications after the retry, want still 1", len(notes))
	}
	if info, err := s.SC.Inspector.GetTaskInfo(tasks.QueueCritical, gen1); err != nil || info.State != asynq.TaskStateArchived {
		t.Errorf("old task %s: %+v, %v; want still archived (the retry ran beside it)", gen1, info, err)
	}
}
