package groupbuys

import (
	"context"
	"strconv"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// TestTenConcurrentSettleRunsChargeOnce is done-when 3: ten group:settle runs
// for the same group at once — from OPEN past its deadline, and from CLOSED
// (a half-done run) — charge each participant exactly once, and none of them
// fails.
func TestTenConcurrentSettleRunsChargeOnce(t *testing.T) {
	s := setup(t)
	fromOpen := newGroup(t, s, 250, 4*time.Second, 1000, 1000, 250, 600, 900)
	fromClosed := newGroup(t, s, 250, 4*time.Second, 1000, 300, 250, 5000)
	waitPastDeadline(fromOpen, fromClosed)
	ctx := context.Background()

	// A first run dies right after the close.
	fromClosed.closeOnly(t)

	for _, tc := range []struct {
		name string
		g    *group
	}{{"from OPEN", fromOpen}, {"from CLOSED", fromClosed}} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			errs := make([]error, 10)
			testenv.AtOnce(len(errs), func(i int) { errs[i] = s.UC.Groups.Settle(ctx, g.no, false, 0, 5) })
			for i, err := range errs {
				if err != nil {
					t.Errorf("run %d: %v", i, err)
				}
			}
			if r := g.row(t); r.Status != model.GroupSettled {
				t.Fatalf("group is %s after ten runs, want SETTLED", r.Status)
			}
			g.checkChargedOnce(t)
			if n := g.countMove(t, "OPEN→CLOSED"); n != 1 {
				t.Errorf("%d OPEN→CLOSED moves, want 1; history %v", n, g.moves(t))
			}
			if n := g.countMove(t, "CLOSED→SETTLED"); n != 1 {
				t.Errorf("%d CLOSED→SETTLED moves, want 1; history %v", n, g.moves(t))
			}
		})
	}
}

// TestThousandParticipantsSettleInOneQuickTransaction is done-when 7: a group
// of 1,000 participants is charged in one transaction well under the settle
// task's timeout. The participants are inserted with SQL (users +
// group_participants) to keep the setup short; the group itself is created
// through the API. The charge alone (CLOSED→SETTLED) is timed: a first run
// is stopped right after the close, then Settle is timed from CLOSED.
func TestThousandParticipantsSettleInOneQuickTransaction(t *testing.T) {
	t.Parallel()
	const n, price, opening = 1000, 250, 1000
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	g := newGroup(t, s, price, 12*time.Second)
	db := s.SC.DB
	tag := "bulk-" + g.no + "-"

	// One multi-row INSERT of the users, then their memberships.
	q := "INSERT INTO users (name, token_hash, balance_cents, created_at) VALUES "
	args := make([]any, 0, 4*n)
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i := range n {
		if i > 0 {
			q += ","
		}
		q += "(?, SHA2(?, 256), ?, ?)"
		args = append(args, tag+strconv.Itoa(i), tag+strconv.Itoa(i), opening, now)
	}
	if err := db.Exec(q, args...).Error; err != nil {
		t.Fatalf("insert users: %v", err)
	}
	if err := db.Exec("INSERT INTO group_participants (group_id, user_id, joined_at) SELECT ?, id, ? FROM users WHERE name LIKE ?",
		g.row(t).ID, now, tag+"%").Error; err != nil {
		t.Fatalf("insert participants: %v", err)
	}
	var ids []int64
	if err := db.Raw("SELECT id FROM users WHERE name LIKE ? ORDER BY id", tag+"%").Scan(&ids).Error; err != nil || len(ids) != n {
		t.Fatalf("bulk users: %d ids, err %v", len(ids), err)
	}
	for _, id := range ids {
		g.members = append(g.members, member{id: id, balance: opening})
	}
	if time.Now().After(g.deadline) {
		t.Fatalf("setup took past the deadline")
	}
	waitPastDeadline(g)

	ctx := context.Background()
	g.closeOnly(t)

	start := time.Now()
	err := s.UC.Groups.Settle(ctx, g.no, false, 1, 5)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("settle: %v", err)
	}
	timeout := s.SC.Tasks[tasks.TypeGroupSettle].Timeout
	t.Logf("charged %d participants (CLOSED→SETTLED, one transaction) in %v; settle task timeout %v", n, took, timeout)
	if took > 5*time.Second || took > timeout/10 {
		t.Errorf("charging %d participants took %v, want well under the %v task timeout (< 5 s)", n, took, timeout)
	}

	if r := g.row(t); r.Status != model.GroupSettled {
		t.Fatalf("group is %s, want SETTLED", r.Status)
	}
	if got := s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE ref LIKE ? AND kind = 'charge' AND amount_cents = ?`, "group:"+g.no+":%", -price); got != n {
		t.Errorf("%d charge entries of %d, want %d", got, -price, n)
	}
	if got := s.Count(t, `SELECT COUNT(DISTINCT user_id) FROM wallet_entries WHERE ref LIKE ?`, "group:"+g.no+":%"); got != n {
		t.Errorf("charge entries for %d distinct users, want %d", got, n)
	}
	if got := s.Count(t, `SELECT COALESCE(SUM(balance_cents), 0) FROM users WHERE name LIKE ?`, tag+"%"); got != n*(opening-price) {
		t.Errorf("participants hold %d cents in all, want %d", got, n*(opening-price))
	}
	// One transaction: every participant carries the same charge time.
	if got := s.Count(t, "SELECT COUNT(DISTINCT p.charged_at) FROM group_participants p JOIN `groups` g ON g.id = p.group_id WHERE g.group_no = ?", g.no); got != 1 {
		t.Errorf("%d distinct charged_at values, want 1 (one transaction)", got)
	}
	if got := s.Count(t, "SELECT COUNT(*) FROM group_participants p JOIN `groups` g ON g.id = p.group_id WHERE g.group_no = ? AND p.charged_at IS NULL", g.no); got != 0 {
		t.Errorf("%d participants not charged", got)
	}
	if c := g.countMove(t, "CLOSED→SETTLED"); c != 1 {
		t.Errorf("%d CLOSED→SETTLED moves, want 1", c)
	}
}
