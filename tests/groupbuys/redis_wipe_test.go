package groupbuys

import (
	"context"
	"fmt"
	"testing"
	"time"

	"orderflow/internal/domain/reconcile"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// wipeRedis empties the stack's own Redis DB (never the shared server's
// other DBs) and checks the epoch marker went with it.
func wipeRedis(t *testing.T, s *testenv.Stack) {
	t.Helper()
	ctx := context.Background()
	if err := s.SC.Redis.FlushDB(ctx).Err(); err != nil {
		t.Fatalf("FLUSHDB: %v", err)
	}
	if n, err := s.SC.Redis.Exists(ctx, reconcile.EpochKey).Result(); err != nil || n != 0 {
		t.Fatalf("epoch marker still there after the wipe (%d, %v)", n, err)
	}
}

// TestRedisWipedDueGroupsStillEnd is done-when 6: Redis is wiped while no
// worker runs and three groups are past their deadline — A OPEN, B CLOSED (its
// worker died right after the close), C OPEN with a member short of balance.
// Their settle tasks are gone with Redis. The next worker finds the epoch
// marker missing, reconciles at once and re-queues them: A and B end SETTLED
// (charged once), C FAILED with the owner and admin told who is short.
func TestRedisWipedDueGroupsStillEnd(t *testing.T) {
	s := setup(t)

	b := newGroup(t, s, 300, 5*time.Second, 1000, 300)
	w := testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, failpoint.GroupAfterClose+"=exit@"+b.no)
	if code := w.WaitExit(t, 30*time.Second); code != failpoint.ExitCode {
		t.Fatalf("worker exited %d, want %d; output:\n%s", code, failpoint.ExitCode, w.Out.String())
	}
	// No worker runs from here on until the wipe.
	a := newGroup(t, s, 300, 5*time.Second, 1000, 2000)
	c := newGroup(t, s, 300, 5*time.Second, 1000, 299, 5000)
	short := c.members[1].id
	waitPastDeadline(a, c)
	for _, x := range []struct {
		g    *group
		want model.GroupStatus
	}{{a, model.GroupOpen}, {b, model.GroupClosed}, {c, model.GroupOpen}} {
		if r := x.g.row(t); r.Status != x.want {
			t.Fatalf("before the wipe group %s is %s, want %s", x.g.no, r.Status, x.want)
		}
	}

	wipeRedis(t, s)
	for _, g := range []*group{a, b, c} {
		if info := settleTask(t, s, g.no, 1); info != nil {
			t.Fatalf("group %s still has its settle task after the wipe: %+v", g.no, info)
		}
	}

	started := time.Now()
	s.StartWorker(t) // the reconcile schedule is daily: only the missing epoch marker triggers it now
	ra := a.waitStatus(t, model.GroupSettled, 20*time.Second)
	rb := b.waitStatus(t, model.GroupSettled, 20*time.Second)
	rc := c.waitStatus(t, model.GroupFailed, 20*time.Second)
	t.Logf("all three ended %.1fs after the new worker started", time.Since(started).Seconds())

	a.checkChargedOnce(t)
	b.checkChargedOnce(t)
	c.checkUntouched(t)
	c.checkFailedNotices(t, true, fmt.Sprint(short))
	for _, x := range []struct {
		g *group
		r *model.Group
	}{{a, ra}, {b, rb}, {c, rc}} {
		if x.r.SettleGen != 2 {
			t.Errorf("group %s settle_gen %d, want 2 (re-queued once by reconciliation)", x.g.no, x.r.SettleGen)
		}
		if n := x.g.countMove(t, "OPEN→CLOSED"); n != 1 {
			t.Errorf("group %s: %d OPEN→CLOSED moves, want 1; history %v", x.g.no, n, x.g.moves(t))
		}
	}
	if n := b.countMove(t, "CLOSED→SETTLED"); n != 1 {
		t.Errorf("group %s: %d CLOSED→SETTLED moves, want 1", b.no, n)
	}
}

// TestRedisWipedBeforeDeadlineGroupSettlesAtDeadline: Redis is wiped while a
// group is OPEN and its deadline is still ahead. Its settle task is gone, and
// the reconciliation that runs at once (epoch marker missing) must give it a
// task for its deadline — as it does for pending orders' close tasks — or it
// sits OPEN past its deadline until the next scheduled reconciliation (daily
// by default). SPEC: "No object may sit in a non-terminal status without a
// live task that will move it: whatever crashes or whatever Redis forgets, a
// sweeper finds it and re-queues it."
func TestRedisWipedBeforeDeadlineGroupSettlesAtDeadline(t *testing.T) {
	s := setup(t)
	g := newGroup(t, s, 300, 6*time.Second, 1000, 1000)
	wipeRedis(t, s)
	s.StartWorker(t)
	// Reconciliation ran at start (the marker was missing) while the group
	// was not yet due.
	testenv.Eventually(t, 10*time.Second, "the epoch marker re-set by the new worker", func() (bool, error) {
		n, err := s.SC.Redis.Exists(context.Background(), reconcile.EpochKey).Result()
		return n == 1, err
	})
	if time.Now().After(g.deadline) {
		t.Fatalf("setup took past the deadline; the test needs the wipe before it")
	}
	waitPastDeadline(g)
	g.waitStatus(t, model.GroupSettled, 10*time.Second)
	g.checkChargedOnce(t)
}
