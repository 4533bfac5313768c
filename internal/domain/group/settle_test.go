package group_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/group"
	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/operators"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// state is a group's status and what its members hold.
type state struct {
	Status   model.GroupStatus
	Balances []int64
	Charges  int64 // wallet entries of the group's charges
	Notices  int64 // group_failed notifications
}

func (f *fixture) state(t *testing.T, g *model.Group, members ...int64) state {
	t.Helper()
	s := state{Status: f.row(t, g.GroupNo).Status,
		Charges: testenv.Count(t, f.DB, "SELECT COUNT(*) FROM wallet_entries WHERE kind = 'charge' AND ref LIKE ?", "group:"+g.GroupNo+":%"),
		Notices: testenv.Count(t, f.DB, "SELECT COUNT(*) FROM notifications WHERE kind = 'group_failed' AND notify_id LIKE ?", "group-failed:"+g.GroupNo+":%")}
	for _, m := range members {
		s.Balances = append(s.Balances, f.balance(t, m))
	}
	return s
}

// A settle task runs at the deadline, not before; then it charges every
// member the price exactly once, however often the task repeats.
func TestSettleAtTheDeadlineChargesEveryoneOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ann, bob := f.user(t, "ann", 500), f.user(t, "bob", 200)
	g := f.group(t, 200, ann, bob)
	for _, tc := range []struct {
		name string
		at   time.Duration // after the group's creation
		due  bool
		want state
	}{
		{"before the deadline: not due, nothing moves", time.Hour - time.Millisecond, false, state{model.GroupOpen, []int64{500, 200}, 0, 0}},
		{"at the deadline: settled, each charged", time.Hour, true, state{model.GroupSettled, []int64{300, 0}, 2, 0}},
		{"the task again: nothing more", time.Hour + time.Minute, true, state{model.GroupSettled, []int64{300, 0}, 2, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.Clock.Set(g.CreatedAt.Add(tc.at))
			err := f.svc.Settle(f.ctx, g.GroupNo, false, 0, 3)
			if due := !errors.Is(err, group.ErrNotDue); due != tc.due || (due && err != nil) {
				t.Fatalf("Settle = %v, want due: %v", err, tc.due)
			}
			if diff := cmp.Diff(tc.want, f.state(t, g, ann, bob)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A member short of the price fails the group at once (no retry changes a
// balance): nobody is charged, the owner and the admin are told who. Only
// an operator's retry settles a FAILED group; the task on its own does not.
func TestShortMemberFailsTheGroupUntilAnOperatorRetries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ann, bob := f.user(t, "ann", 500), f.user(t, "bob", 100)
	g := f.group(t, 200, ann, bob)
	f.Clock.Set(g.Deadline)

	err := f.svc.Settle(f.ctx, g.GroupNo, false, 0, 3)
	if !apperr.IsFinal(err) {
		t.Fatalf("Settle with a short member = %v, want a final error (no retry can help)", err)
	}
	if diff := cmp.Diff(state{model.GroupFailed, []int64{500, 100}, 0, 2}, f.state(t, g, ann, bob)); diff != "" {
		t.Errorf("after the short member (-want +got):\n%s", diff)
	}
	if why := f.row(t, g.GroupNo).FailureReason; !strings.Contains(why, strconv.FormatInt(bob, 10)) || strings.Contains(why, strconv.FormatInt(ann, 10)+",") {
		t.Errorf("failure reason %q, want it to name bob (%d) only", why, bob)
	}

	if err := f.DB.Exec("UPDATE users SET balance_cents = 200 WHERE id = ?", bob).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Settle(f.ctx, g.GroupNo, false, 0, 3); err != nil {
		t.Fatalf("the task again on a FAILED group = %v", err)
	}
	if got := f.state(t, g, ann, bob); got.Status != model.GroupFailed || got.Charges != 0 {
		t.Errorf("the task on its own moved a FAILED group: %+v", got)
	}
	open := f.group(t, 100)
	if err := f.svc.Retry(f.ctx, open.GroupNo); !errors.Is(err, group.ErrNotFailed) {
		t.Errorf("Retry of an OPEN group = %v, want group.ErrNotFailed", err)
	}

	gen := f.row(t, g.GroupNo).SettleGen
	ctx := operators.WithOperator(f.ctx, operators.Operator{Name: "ann-op", Role: operators.RoleOperator})
	if err := f.svc.Retry(ctx, g.GroupNo); err != nil {
		t.Fatalf("Retry = %v", err)
	}
	if got := f.row(t, g.GroupNo).SettleGen; got != gen+1 {
		t.Errorf("settle generation %d after the retry, want %d", got, gen+1)
	}
	audit, err := f.Store.AuditFor(f.ctx, g.GroupNo)
	if err != nil || len(audit) != 1 || audit[0].Action != trail.GroupRetry || audit[0].Actor != "ann-op" {
		t.Errorf("audit trail after the retry: %+v, %v; want one group_retry by ann-op", audit, err)
	}
	if err := f.svc.Settle(f.ctx, g.GroupNo, true, 0, 3); err != nil {
		t.Fatalf("the retry's settle = %v", err)
	}
	if diff := cmp.Diff(state{model.GroupSettled, []int64{300, 0}, 2, 2}, f.state(t, g, ann, bob)); diff != "" {
		t.Errorf("after the operator's retry (-want +got):\n%s", diff)
	}
}

// A settlement that fails for a passing reason is retried (the group
// stays CLOSED, nobody charged) until the task's budget is spent; the
// last attempt fails the group and tells the owner and the admin.
func TestRetryBudgetThenFailed(t *testing.T) {
	t.Parallel()
	testenv.LockFailpoints(t)
	f := newFixture(t)
	ann := f.user(t, "ann", 500)
	g := f.group(t, 200, ann)
	f.Clock.Set(g.Deadline)
	if err := failpoint.Enable(failpoint.GroupCharge, "error@"+g.GroupNo); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { failpoint.Disable(failpoint.GroupCharge) })
	const maxRetry = 2
	for retried := 0; retried <= maxRetry; retried++ {
		err := f.svc.Settle(f.ctx, g.GroupNo, false, retried, maxRetry)
		last := retried == maxRetry
		if !errors.Is(err, failpoint.ErrInjected) || apperr.IsFinal(err) != last {
			t.Fatalf("attempt after %d retries = %v, want the injected error, final only on the last", retried, err)
		}
		want := state{model.GroupClosed, []int64{500}, 0, 0}
		if last {
			want = state{model.GroupFailed, []int64{500}, 0, 2}
		}
		if diff := cmp.Diff(want, f.state(t, g, ann)); diff != "" {
			t.Errorf("after %d retries (-want +got):\n%s", retried, diff)
		}
	}
	if why := f.row(t, g.GroupNo).FailureReason; !strings.HasPrefix(why, "settlement retries exhausted") {
		t.Errorf("failure reason %q", why)
	}
}

// A group whose budget ran out while the ledger was unreachable waits in
// Redis; once the ledger is back it is written FAILED (through CLOSED)
// with its notifications, and leaves the pending set. A group that
// settled meanwhile is left as it is.
func TestFlushExhausted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ann := f.user(t, "ann", 500)
	pending, settled := f.group(t, 200, ann), f.group(t, 100, ann)
	f.Clock.Set(settled.Deadline)
	if err := f.svc.Settle(f.ctx, settled.GroupNo, false, 0, 3); err != nil {
		t.Fatal(err)
	}
	for _, no := range []string{pending.GroupNo, settled.GroupNo} {
		if err := f.rdb.HSet(f.ctx, group.ExhaustedKey, no, "settlement retries exhausted: ledger down").Err(); err != nil {
			t.Fatal(err)
		}
	}
	n, err := f.svc.FlushExhausted(f.ctx)
	if err != nil || n != 2 {
		t.Fatalf("FlushExhausted = %d, %v; want 2, nil", n, err)
	}
	if diff := cmp.Diff(state{model.GroupFailed, []int64{400}, 0, 2}, f.state(t, pending, ann)); diff != "" {
		t.Errorf("the pending group (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(state{model.GroupSettled, []int64{400}, 1, 0}, f.state(t, settled, ann)); diff != "" {
		t.Errorf("the settled group (-want +got):\n%s", diff)
	}
	if left, err := f.rdb.HLen(f.ctx, group.ExhaustedKey).Result(); err != nil || left != 0 {
		t.Errorf("pending set holds %d, %v; want empty", left, err)
	}
}
