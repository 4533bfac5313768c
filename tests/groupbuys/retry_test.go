package groupbuys

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	groupsvc "orderflow/internal/domain/group"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/hibiken/asynq"
)

// attemptClock watches one settle task in Redis and timestamps the end of
// each attempt: asynq bumps the task's retry count when an attempt fails and
// is rescheduled, and archives it when the last one gives up.
type attemptClock struct {
	ends []time.Time // ends[i] is when attempt i+1 ended
}

// poll watches the task until it is archived or within passes; onFail is
// called after each recorded failure that will be retried, with the count.
func (a *attemptClock) poll(t *testing.T, s *testenv.Stack, groupNo string, within time.Duration, onFail func(retried int)) {
	t.Helper()
	deadline := time.Now().Add(within)
	seen := 0
	for time.Now().Before(deadline) {
		before := time.Now()
		info := settleTask(t, s, groupNo, 1)
		at := before.Add(time.Since(before) / 2)
		if info != nil {
			for seen < info.Retried {
				seen++
				a.ends = append(a.ends, at)
				if onFail != nil {
					onFail(seen)
				}
			}
			if info.State == asynq.TaskStateArchived {
				a.ends = append(a.ends, at)
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("settle task of %s not archived within %v; attempts ended at %v", groupNo, within, a.ends)
}

// TestChargeAlwaysFailingBacksOff1248_16ThenFails is done-when 4: the charge
// step fails every time; the attempts are spaced 1, 2, 4, 8, 16 s apart
// (±500 ms), and then the group is FAILED with exactly one pending
// notification for its owner and one for the admin. The worker is killed
// (SIGKILL) after the 3rd failure and a new worker process takes over: the
// count lives with the task in Redis, so the schedule and the budget carry on.
// (After the 3rd, so the new process starts inside the 4 s gap: starting it
// inside the 2 s gap left it too little time on a loaded box.)
//
// Workers are child processes: the kill is real, and the failpoint
// (group/charge=error@<group>) is armed in each child, not in this process.
// Attempt times come from the task itself: its retry count in Redis, polled
// every few milliseconds.
func TestChargeAlwaysFailingBacksOff1248_16ThenFails(t *testing.T) {
	s := setup(t)
	g := newGroup(t, s, 500, 3*time.Second, 1000, 2000)
	fp := failpoint.GroupCharge + "=error@" + g.no
	delays := "ORDERFLOW_SETTLE_RETRY_DELAYS=1s,2s,4s,8s,16s"

	first := testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, fp, delays)
	var second *testenv.ChildWorker
	var clock attemptClock
	clock.poll(t, s, g.no, 60*time.Second, func(retried int) {
		if retried != 3 {
			return
		}
		first.Kill()
		if info := settleTask(t, s, g.no, 1); info == nil || info.Retried != 3 || info.State != asynq.TaskStateRetry {
			t.Errorf("after the kill the task is %+v, want waiting for retry with its count (3) kept", info)
		}
		second = testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, fp, delays)
	})
	if second == nil {
		t.Fatal("the first worker was never replaced")
	}

	if len(clock.ends) != 6 {
		t.Fatalf("%d attempts, want 6 (the first and 5 retries); ends %v", len(clock.ends), clock.ends)
	}
	if late := clock.ends[0].Sub(g.deadline); late < 0 || late > 2*time.Second {
		t.Errorf("first attempt ended %v after the deadline, want within 2 s", late)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	var report []string
	for i, w := range want {
		gap := clock.ends[i+1].Sub(clock.ends[i])
		report = append(report, fmt.Sprintf("%d→%d: %dms", i+1, i+2, gap.Milliseconds()))
		if d := gap - w; d < -500*time.Millisecond || d > 500*time.Millisecond {
			t.Errorf("gap between attempts %d and %d is %v, want %v ±500ms", i+1, i+2, gap, w)
		}
	}
	t.Logf("attempt gaps (worker killed and replaced after attempt 3): %s", strings.Join(report, ", "))

	r := g.waitStatus(t, model.GroupFailed, 5*time.Second)
	if !strings.Contains(r.FailureReason, "retries exhausted") {
		t.Errorf("failure_reason %q, want it to say the retries were exhausted", r.FailureReason)
	}
	g.checkUntouched(t)
	g.checkFailedNotices(t, true, g.no)
	if got := strings.Join(g.moves(t), " "); got != "-→OPEN OPEN→CLOSED CLOSED→FAILED" {
		t.Errorf("history %s, want -→OPEN OPEN→CLOSED CLOSED→FAILED", got)
	}
	// FAILED is terminal for automatic settlement: nothing runs it again.
	time.Sleep(1500 * time.Millisecond)
	if r := g.row(t); r.Status != model.GroupFailed || r.SettleGen != 1 {
		t.Errorf("after giving up the group is %s gen %d, want FAILED gen 1", r.Status, r.SettleGen)
	}
	if !strings.Contains(second.Out.String(), "group settlement FAILED") {
		t.Errorf("the replacement worker did not log the FAILED settlement; output:\n%s", second.Out.String())
	}
}

// TestExhaustedWhileDatabaseDownKeptInRedisThenWritten: the retry budget runs
// out while the database is unreachable. The exhaustion is kept in the
// Redis pending set (the seed's pending set) and, once the database is
// back, written to the ledger: FAILED plus the owner and admin notifications.
func TestExhaustedWhileDatabaseDownKeptInRedisThenWritten(t *testing.T) {
	s := setup(t)
	g := newGroup(t, s, 500, 2*time.Second, 1000, 1000)
	cfg, proxy := behindProxy(t, s.Config)
	w := testenv.StartChildWorker(t, testenv.Binary("queue"), cfg, failpoint.GroupCharge+"=error@"+g.no,
		"ORDERFLOW_SETTLE_RETRY_DELAYS=3s,1s,1s,1s,1s", "ORDERFLOW_NOTIFY_INTERVAL=200ms")

	// The first attempt closes the group and fails at the charge (the worker
	// logs it); then, inside the 3 s before the second, the database goes
	// away for every remaining attempt.
	testenv.Eventually(t, 15*time.Second, "the first attempt failed at the charge", func() (bool, error) {
		return strings.Contains(w.Out.String(), "settlement attempt failed"), nil
	})
	if r := g.row(t); r.Status != model.GroupClosed {
		t.Fatalf("after the first attempt the group is %s, want CLOSED", r.Status)
	}
	proxy.Cut(t)

	ctx := context.Background()
	testenv.Eventually(t, 20*time.Second, "the exhaustion kept in the Redis pending set", func() (bool, error) {
		return s.SC.Redis.HExists(ctx, groupsvc.ExhaustedKey, g.no).Result()
	})
	// The last attempt writes the pending set, then returns its error, then
	// asynq archives the task: poll for the archive.
	testenv.Eventually(t, 10*time.Second, "the settle task archived after 5 retries", func() (bool, error) {
		info := settleTask(t, s, g.no, 1)
		return info != nil && info.State == asynq.TaskStateArchived && info.Retried == 5, fmt.Errorf("task %+v", info)
	})
	if r := g.row(t); r.Status != model.GroupClosed {
		t.Errorf("with the database down the group is %s, want still CLOSED", r.Status)
	}
	if got := g.failedNotices(t); len(got) != 0 {
		t.Errorf("notifications written while the database was down? %v", got)
	}
	// It stays in Redis while the database is down, however many rounds pass.
	time.Sleep(time.Second)
	if ok, _ := s.SC.Redis.HExists(ctx, groupsvc.ExhaustedKey, g.no).Result(); !ok {
		t.Fatalf("the pending-set entry vanished while the database was still down; worker output:\n%s", w.Out.String())
	}

	proxy.Restore(t)
	g.waitStatus(t, model.GroupFailed, 15*time.Second)
	testenv.Eventually(t, 5*time.Second, "the pending-set entry removed", func() (bool, error) {
		ok, err := s.SC.Redis.HExists(ctx, groupsvc.ExhaustedKey, g.no).Result()
		return !ok, err
	})
	g.checkUntouched(t)
	g.checkFailedNotices(t, true, g.no)
	if n := g.countMove(t, "CLOSED→FAILED"); n != 1 {
		t.Errorf("%d CLOSED→FAILED moves, want 1; history %v", n, g.moves(t))
	}
}

// TestDatabaseDownFromDeadlineThroughBudgetGroupNotLost is the seed's "the
// database is down for ten minutes" case, shortened: the database goes away
// before the deadline and stays away for the whole retry budget, so no
// attempt even closes the group (it is still OPEN when the budget runs out).
// The exhaustion is kept in the Redis pending set; once the database is
// back, the group must not be forgotten: it has to end FAILED with its owner
// and admin notified (or be settled), not stay OPEN past its deadline with
// an archived task until the next scheduled reconciliation (daily).
func TestDatabaseDownFromDeadlineThroughBudgetGroupNotLost(t *testing.T) {
	s := setup(t)
	g := newGroup(t, s, 500, 3*time.Second, 1000, 1000)
	cfg, proxy := behindProxy(t, s.Config)
	w := testenv.StartChildWorker(t, testenv.Binary("queue"), cfg, "", "ORDERFLOW_SETTLE_RETRY_DELAYS=1s,1s,1s,1s,1s", "ORDERFLOW_NOTIFY_INTERVAL=200ms")
	testenv.Eventually(t, 10*time.Second, "the worker process running", func() (bool, error) {
		return strings.Contains(w.Out.String(), "epoch marker was missing"), nil
	})
	if time.Now().After(g.deadline) {
		t.Fatalf("setup took past the deadline; the database must go away before it")
	}
	proxy.Cut(t)

	ctx := context.Background()
	testenv.Eventually(t, 30*time.Second, "the exhaustion kept in the Redis pending set", func() (bool, error) {
		return s.SC.Redis.HExists(ctx, groupsvc.ExhaustedKey, g.no).Result()
	})
	if r := g.row(t); r.Status != model.GroupOpen {
		t.Fatalf("with the database down all along the group is %s, want still OPEN", r.Status)
	}
	proxy.Restore(t)

	var last *model.Group
	testenv.Eventually(t, 15*time.Second, "the exhausted group to end FAILED (or SETTLED)", func() (bool, error) {
		last = g.row(t)
		inSet, _ := s.SC.Redis.HExists(ctx, groupsvc.ExhaustedKey, g.no).Result()
		task := "none"
		if info := settleTask(t, s, g.no, last.SettleGen); info != nil {
			task = fmt.Sprintf("%s after %d retries", info.State, info.Retried)
		}
		return last.Status == model.GroupFailed || last.Status == model.GroupSettled,
			fmt.Errorf("status %s, gen %d, settle task %s, still in the pending set: %v, group_failed notifications: %d",
				last.Status, last.SettleGen, task, inSet, len(g.failedNotices(t)))
	})
	if last.Status == model.GroupFailed {
		g.checkUntouched(t)
		g.checkFailedNotices(t, false, g.no)
	} else {
		g.checkChargedOnce(t)
	}
}
