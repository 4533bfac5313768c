package groupbuys

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/hibiken/asynq"
)

// TestJoinRules: a second join by the same user is 409 already_joined; a join
// after the deadline is 409 group_closed even while no worker has closed the
// group yet (the deadline is checked in the joining transaction), and so is a
// join once the group is settled; an unknown group is 404.
func TestJoinRules(t *testing.T) {
	s := setup(t)
	g := newGroup(t, s, 300, 4*time.Second, 1000)
	_, late := s.NewUser(t, "late", 1000)

	if st, code := join(t, g.members[0].c, g.no); st != 409 || code != "already_joined" {
		t.Errorf("joining twice: %d %q, want 409 already_joined", st, code)
	}
	waitPastDeadline(g)
	if r := g.row(t); r.Status != model.GroupOpen {
		t.Fatalf("group is %s; this test needs it still OPEN past its deadline", r.Status)
	}
	if st, code := join(t, late, g.no); st != 409 || code != "group_closed" {
		t.Errorf("joining after the deadline: %d %q, want 409 group_closed", st, code)
	}
	if err := s.UC.Groups.Settle(context.Background(), g.no, false, 0, 5); err != nil {
		t.Fatalf("settle: %v", err)
	}
	if st, code := join(t, late, g.no); st != 409 || code != "group_closed" {
		t.Errorf("joining a settled group: %d %q, want 409 group_closed", st, code)
	}
	if st, code := join(t, late, "G000000nosuchgroup"); st != 404 || code != "group_not_found" {
		t.Errorf("joining an unknown group: %d %q, want 404 group_not_found", st, code)
	}
	if n := s.Count(t, "SELECT COUNT(*) FROM group_participants p JOIN `groups` g ON g.id = p.group_id WHERE g.group_no = ?", g.no); n != 1 {
		t.Errorf("%d participants, want 1", n)
	}
	g.checkChargedOnce(t)
}

// TestShortParticipantFailsAtOnceThenOperatorRetrySettles: members short of
// balance make the group FAILED at its first attempt — no automatic retry, no
// one charged — and the owner and admin notifications name them. Once their
// balances are topped up (SQL), the admin's retry settles it, charging
// everyone once; retrying a group that is not FAILED is refused.
func TestShortParticipantFailsAtOnceThenOperatorRetrySettles(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{})
	g := newGroup(t, s, 500, 4*time.Second, 1000, 100, 500, 499)
	short := []int64{g.members[1].id, g.members[3].id}

	r := g.waitStatus(t, model.GroupFailed, 15*time.Second)
	if late := time.Since(g.deadline); late > 5*time.Second {
		t.Errorf("FAILED %v after the deadline, want at once", late)
	}
	// The ledger moves before the handler returns; asynq archives right after.
	var info *asynq.TaskInfo
	testenv.Eventually(t, 5*time.Second, "settle task archived", func() (bool, error) {
		info = settleTask(t, s, g.no, 1)
		return info != nil && info.State == asynq.TaskStateArchived, nil
	})
	if info.Retried != 0 {
		t.Errorf("settle task %+v, want archived without a single retry", info)
	}
	names := fmt.Sprintf("%d,%d", short[0], short[1])
	if !strings.Contains(r.FailureReason, names) {
		t.Errorf("failure_reason %q, want it to name %s", r.FailureReason, names)
	}
	g.checkUntouched(t)
	g.checkFailedNotices(t, true, g.no, "short of balance", names)
	if got := strings.Join(g.moves(t), " "); got != "-→OPEN OPEN→CLOSED CLOSED→FAILED" {
		t.Errorf("history %s, want -→OPEN OPEN→CLOSED CLOSED→FAILED", got)
	}

	// Top up the short members and retry as the operator.
	for i := range g.members {
		if m := &g.members[i]; m.balance < g.price {
			if err := s.SC.DB.Exec(`UPDATE users SET balance_cents = balance_cents + 1000 WHERE id = ?`, m.id).Error; err != nil {
				t.Fatal(err)
			}
			m.balance += 1000
		}
	}
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if st := g.owner.Do(t, "POST", "/api/v1/admin/groups/"+g.no+"/retry", nil, &e); st != 401 {
		t.Errorf("retry with a user's token: %d, want 401", st)
	}
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/groups/"+g.no+"/retry", nil, nil); st != 200 {
		t.Fatalf("admin retry: %d, want 200", st)
	}
	r = g.waitStatus(t, model.GroupSettled, 15*time.Second)
	g.checkChargedOnce(t)
	if r.SettleGen != 2 {
		t.Errorf("settle_gen %d, want 2 (the operator's retry)", r.SettleGen)
	}
	if got := strings.Join(g.moves(t), " "); got != "-→OPEN OPEN→CLOSED CLOSED→FAILED FAILED→SETTLED" {
		t.Errorf("history %s, want … CLOSED→FAILED FAILED→SETTLED", got)
	}
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/groups/"+g.no+"/retry", nil, &e); st != 409 || e.Error.Code != "invalid_status" {
		t.Errorf("retrying a SETTLED group: %d %q, want 409 invalid_status", st, e.Error.Code)
	}
	// The first failure's notifications stay the only ones.
	g.checkFailedNotices(t, true, names)
}

// TestJoinRacingCloseEveryAcceptedMemberCharged: joins land just before and
// just after the deadline while settle runs hammer the group from the
// deadline on. The join is decided in its transaction, so the outcome is
// all-or-nothing per user: every join answered 200 is a participant charged
// exactly once, every refused one (409 group_closed) is neither.
func TestJoinRacingCloseEveryAcceptedMemberCharged(t *testing.T) {
	t.Parallel()
	const joiners = 40
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	type joiner struct {
		id     int64
		c      *testenv.Client
		status int
		body   string
	}
	js := make([]*joiner, joiners)
	for i := range js {
		u, c := s.NewUser(t, fmt.Sprintf("racer-%d", i), 1000)
		js[i] = &joiner{id: u.ID, c: c}
	}
	g := newGroup(t, s, 100, 3*time.Second)
	if time.Until(g.deadline) < 1100*time.Millisecond {
		t.Fatalf("setup too slow: the deadline is too close to race it")
	}

	var wg sync.WaitGroup
	for i, j := range js {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Sent from 1 s before to 170 ms after the deadline, 30 ms
			// apart: the first ones arrive in time even on a loaded
			// machine, the last ones cannot, and a few race the close.
			time.Sleep(time.Until(g.deadline.Add(-time.Second + time.Duration(i)*30*time.Millisecond)))
			st, body, err := j.c.Send("POST", "/api/v1/groups/"+g.no+"/join", nil)
			j.status, j.body = st, string(body)
			if err != nil {
				j.body = err.Error()
			}
		}()
	}
	settleErrs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(g.deadline))
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				err := s.UC.Groups.Settle(context.Background(), g.no, false, 0, 5)
				if err == nil {
					return
				}
				if !strings.Contains(err.Error(), "deadline not reached") {
					settleErrs <- err
					return
				}
			}
			settleErrs <- fmt.Errorf("settle never ran")
		}()
	}
	wg.Wait()
	close(settleErrs)
	for err := range settleErrs {
		t.Errorf("settle run: %v", err)
	}
	g.waitStatus(t, model.GroupSettled, 5*time.Second)

	accepted, refused := 0, 0
	for _, j := range js {
		switch {
		case j.status == 200:
			accepted++
			g.members = append(g.members, member{id: j.id, c: j.c, balance: 1000})
		case j.status == 409 && strings.Contains(j.body, `"group_closed"`):
			refused++
			if n := s.Count(t, "SELECT COUNT(*) FROM group_participants p JOIN `groups` g ON g.id = p.group_id WHERE g.group_no = ? AND p.user_id = ?", g.no, j.id); n != 0 {
				t.Errorf("user %d was refused but is a participant", j.id)
			}
			if b := balance(t, s, j.id); b != 1000 {
				t.Errorf("user %d was refused but has balance %d, want 1000", j.id, b)
			}
		default:
			t.Errorf("user %d join: %d %s, want 200 or 409 group_closed", j.id, j.status, j.body)
		}
	}
	t.Logf("%d joins accepted, %d refused around the deadline", accepted, refused)
	if accepted == 0 || refused == 0 {
		t.Errorf("the joins did not straddle the deadline (%d accepted, %d refused); the race was not exercised", accepted, refused)
	}
	g.checkChargedOnce(t)
}
