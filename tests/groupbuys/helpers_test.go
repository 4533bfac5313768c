package groupbuys

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"

	"github.com/go-sql-driver/mysql"
	"github.com/hibiken/asynq"
)

// group is one group-buy under test: its owner, price, deadline and members.
type group struct {
	s        *testenv.Stack
	no       string
	ownerID  int64
	owner    *testenv.Client
	price    int64
	deadline time.Time
	members  []member
}

// member is a participant with the balance they opened with.
type member struct {
	id      int64
	c       *testenv.Client
	balance int64
}

// setup starts a test's stack: in parallel with the others (they wait on
// wall-clock schedules, see TestMain), with no in-process worker, so each
// test runs the settle steps or the worker process it means to.
func setup(t *testing.T) *testenv.Stack {
	t.Helper()
	t.Parallel()
	return testenv.Start(t, testenv.Options{NoWorker: true})
}

// newGroup creates a group closing `in` from now through the API, owned by a
// new user, and has one new user per balance join it.
func newGroup(t *testing.T, s *testenv.Stack, price int64, in time.Duration, balances ...int64) *group {
	t.Helper()
	owner, oc := s.NewUser(t, "owner", 0)
	deadline := time.Now().Add(in).UTC().Truncate(time.Millisecond)
	var out struct {
		GroupNo string `json:"group_no"`
		Status  string `json:"status"`
	}
	body := map[string]any{"title": "group of " + t.Name(), "price_cents": price, "deadline": deadline.Format(time.RFC3339Nano)}
	if st := oc.Do(t, "POST", "/api/v1/groups", body, &out); st != 201 || out.GroupNo == "" || out.Status != "open" {
		t.Fatalf("create group: status %d, answer %+v; want 201 open", st, out)
	}
	g := &group{s: s, no: out.GroupNo, ownerID: owner.ID, owner: oc, price: price, deadline: deadline}
	for i, b := range balances {
		u, c := s.NewUser(t, fmt.Sprintf("member-%d", i), b)
		if st, code := join(t, c, g.no); st != 200 {
			t.Fatalf("member %d joins %s: status %d (%s)", i, g.no, st, code)
		}
		g.members = append(g.members, member{id: u.ID, c: c, balance: b})
	}
	return g
}

// join asks to join a group as the client's user and returns the status and
// the error code, if any.
func join(t *testing.T, c *testenv.Client, groupNo string) (int, string) {
	t.Helper()
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	st := c.Do(t, "POST", "/api/v1/groups/"+groupNo+"/join", nil, &e)
	return st, e.Error.Code
}

// waitPastDeadline sleeps until every group's deadline (and a little) passed.
func waitPastDeadline(gs ...*group) {
	var last time.Time
	for _, g := range gs {
		if g.deadline.After(last) {
			last = g.deadline
		}
	}
	time.Sleep(time.Until(last.Add(100 * time.Millisecond)))
}

// view is the API's group view.
type view struct {
	GroupNo      string `json:"group_no"`
	OwnerUserID  int64  `json:"owner_user_id"`
	Status       string `json:"status"`
	PriceCents   int64  `json:"price_cents"`
	Participants []struct {
		UserID  int64 `json:"user_id"`
		Charged bool  `json:"charged"`
	} `json:"participants"`
}

func (g *group) view(t *testing.T) view {
	t.Helper()
	var v view
	if st := g.s.Admin.Do(t, "GET", "/api/v1/groups/"+g.no, nil, &v); st != 200 {
		t.Fatalf("get group %s: status %d", g.no, st)
	}
	return v
}

// row reads the group straight from the ledger.
func (g *group) row(t *testing.T) *model.Group {
	t.Helper()
	r, err := g.s.SC.Store.GroupByNo(context.Background(), g.no)
	if err != nil {
		t.Fatalf("ledger: group %s: %v", g.no, err)
	}
	return r
}

// closeOnly runs a settle that dies right after the close (an injected
// error, not an exit: this is the test process), leaving the group CLOSED
// as a crashed run would.
func (g *group) closeOnly(t *testing.T) {
	t.Helper()
	testenv.LockFailpoints(t)
	if err := failpoint.Enable(failpoint.GroupAfterClose, "1*error@"+g.no); err != nil {
		t.Fatal(err)
	}
	err := g.s.UC.Groups.Settle(context.Background(), g.no, false, 0, 5)
	failpoint.Disable(failpoint.GroupAfterClose)
	if !errors.Is(err, failpoint.ErrInjected) {
		t.Fatalf("closing run: %v, want the injected error", err)
	}
	if r := g.row(t); r.Status != model.GroupClosed {
		t.Fatalf("after the closing run the group is %s, want CLOSED", r.Status)
	}
}

// waitStatus polls the ledger until the group is in status.
func (g *group) waitStatus(t *testing.T, status model.GroupStatus, within time.Duration) *model.Group {
	t.Helper()
	var last *model.Group
	testenv.Eventually(t, within, "group "+g.no+" "+status.String(), func() (bool, error) {
		r, err := g.s.SC.Store.GroupByNo(context.Background(), g.no)
		if err != nil {
			return false, err
		}
		last = r
		return r.Status == status, fmt.Errorf("status %s, gen %d, failure %q", r.Status, r.SettleGen, r.FailureReason)
	})
	return last
}

// moves is the group's event history as "from→to" strings, oldest first.
func (g *group) moves(t *testing.T) []string {
	t.Helper()
	events, err := g.s.SC.Store.EventsFor(context.Background(), "group", g.no)
	if err != nil {
		t.Fatalf("ledger: events of %s: %v", g.no, err)
	}
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.FromStatus + "→" + e.ToStatus
	}
	return out
}

// countMove is how often a move appears in the group's history.
func (g *group) countMove(t *testing.T, move string) int {
	t.Helper()
	n := 0
	for _, m := range g.moves(t) {
		if m == move {
			n++
		}
	}
	return n
}

func balance(t *testing.T, s *testenv.Stack, userID int64) int64 {
	t.Helper()
	return s.Count(t, `SELECT balance_cents FROM users WHERE id = ?`, userID)
}

func (g *group) chargeRef(userID int64) string {
	return fmt.Sprintf("group:%s:user:%d", g.no, userID)
}

// checkChargedOnce asserts every member paid the price exactly once: one
// `charge` wallet entry of -price each, the balance down by the price, the
// participant marked charged, and no other wallet entry for the group.
func (g *group) checkChargedOnce(t *testing.T) {
	t.Helper()
	s := g.s
	for _, m := range g.members {
		ref := g.chargeRef(m.id)
		if n := s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE ref = ? AND kind = 'charge' AND user_id = ?`, ref, m.id); n != 1 {
			t.Errorf("group %s member %d: %d charge entries, want 1", g.no, m.id, n)
		}
		if sum := s.Count(t, `SELECT COALESCE(SUM(amount_cents), 0) FROM wallet_entries WHERE ref = ?`, ref); sum != -g.price {
			t.Errorf("group %s member %d: charged %d cents in all, want %d", g.no, m.id, sum, -g.price)
		}
		if got, want := balance(t, s, m.id), m.balance-g.price; got != want {
			t.Errorf("group %s member %d: balance %d, want %d (opening %d - price %d)", g.no, m.id, got, want, m.balance, g.price)
		}
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE ref LIKE ?`, "group:"+g.no+":%"); n != int64(len(g.members)) {
		t.Errorf("group %s: %d wallet entries, want %d (one per member)", g.no, n, len(g.members))
	}
	v := g.view(t)
	if len(v.Participants) != len(g.members) {
		t.Errorf("group %s view: %d participants, want %d", g.no, len(v.Participants), len(g.members))
	}
	for _, p := range v.Participants {
		if !p.Charged {
			t.Errorf("group %s view: participant %d not charged", g.no, p.UserID)
		}
	}
}

// checkUntouched asserts no member paid anything for the group.
func (g *group) checkUntouched(t *testing.T) {
	t.Helper()
	s := g.s
	if n := s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE ref LIKE ?`, "group:"+g.no+":%"); n != 0 {
		t.Errorf("group %s: %d wallet entries, want none", g.no, n)
	}
	for _, m := range g.members {
		if got := balance(t, s, m.id); got != m.balance {
			t.Errorf("group %s member %d: balance %d, want the opening %d", g.no, m.id, got, m.balance)
		}
	}
	if n := s.Count(t, "SELECT COUNT(*) FROM group_participants p JOIN `groups` g ON g.id = p.group_id WHERE g.group_no = ? AND p.charged_at IS NOT NULL", g.no); n != 0 {
		t.Errorf("group %s: %d participants marked charged, want none", g.no, n)
	}
}

// failedNotices returns the group's group_failed notifications by recipient.
func (g *group) failedNotices(t *testing.T) map[string][]model.Notification {
	t.Helper()
	all, err := g.s.SC.Store.NotificationsByKind(context.Background(), "group_failed")
	if err != nil {
		t.Fatalf("ledger: notifications: %v", err)
	}
	out := map[string][]model.Notification{}
	for _, n := range all {
		if strings.Contains(n.Subject, g.no) {
			out[n.Recipient] = append(out[n.Recipient], n)
		}
	}
	return out
}

// checkFailedNotices asserts exactly one group_failed notification for the
// owner and one for the admin, each still pending if pending is set, whose
// message contains every string in mention.
func (g *group) checkFailedNotices(t *testing.T, pending bool, mention ...string) {
	t.Helper()
	got := g.failedNotices(t)
	if len(got) != 2 {
		t.Errorf("group %s: group_failed notifications for %d recipients (%v), want 2 (owner and admin)", g.no, len(got), keys(got))
	}
	for _, to := range []string{fmt.Sprintf("user:%d", g.ownerID), "admin"} {
		ns := got[to]
		if len(ns) != 1 {
			t.Errorf("group %s: %d group_failed notifications for %s, want 1", g.no, len(ns), to)
			continue
		}
		n := ns[0]
		if pending && n.DeliveredAt != nil {
			t.Errorf("group %s: notification %s already delivered, want pending", g.no, n.NotifyID)
		}
		for _, s := range mention {
			if !strings.Contains(n.Message, s) {
				t.Errorf("group %s: notification to %s says %q; want it to mention %q", g.no, to, n.Message, s)
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// settleTask is the asynq task of one settle generation, or nil if Redis
// holds none.
func settleTask(t *testing.T, s *testenv.Stack, groupNo string, gen int) *asynq.TaskInfo {
	t.Helper()
	info, err := s.SC.Inspector.GetTaskInfo(s.SC.Tasks[tasks.TypeGroupSettle].Queue, tasks.ID(tasks.TypeGroupSettle, groupNo, gen))
	if errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("asynq: task of %s gen %d: %v", groupNo, gen, err)
	}
	return info
}

// behindProxy returns cfg with its ledger reached through a new proxy (same
// database), and the proxy.
func behindProxy(t *testing.T, cfg svc.Config) (svc.Config, *testenv.TCPProxy) {
	t.Helper()
	dc, err := mysql.ParseDSN(cfg.MySQLDSN)
	if err != nil {
		t.Fatalf("parse dsn: %v", err)
	}
	p := testenv.StartTCPProxy(t, dc.Addr)
	dc.Addr = p.Addr()
	cfg.MySQLDSN = dc.FormatDSN()
	return cfg, p
}

// dbName is the stack's database name.
func dbName(t *testing.T, s *testenv.Stack) string {
	t.Helper()
	dc, err := mysql.ParseDSN(s.Config.MySQLDSN)
	if err != nil {
		t.Fatalf("parse dsn: %v", err)
	}
	return dc.DBName
}

// waitWriteTxs waits until ok holds for the number of transactions that
// changed rows and are still open on the stack's database, whoever holds
// them (read from INNODB_TRX, so no faster than testenv.InnoDBTrxPoll).
func waitWriteTxs(t *testing.T, s *testenv.Stack, within time.Duration, what string, ok func(n int64) bool) {
	t.Helper()
	db := dbName(t, s)
	testenv.EventuallyEvery(t, within, testenv.InnoDBTrxPoll, what, func() (bool, error) {
		n := s.Count(t, `SELECT COUNT(*) FROM information_schema.INNODB_TRX x
			JOIN information_schema.PROCESSLIST p ON p.ID = x.trx_mysql_thread_id
			WHERE p.DB = ? AND x.trx_rows_modified > 0`, db)
		return ok(n), fmt.Errorf("%d open write transactions", n)
	})
}
