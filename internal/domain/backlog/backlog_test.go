package backlog_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"orderflow/internal/domain/backlog"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// seeded is a ledger holding one of each thing that needs a hand and one
// of each that does not, each written a minute after the one before, so
// "newest first" has one answer.
type seeded struct {
	db    *gorm.DB
	store *model.Store
	now   time.Time
	at    func() time.Time // the next row's time
}

func seed(t *testing.T) *seeded {
	t.Helper()
	db := testenv.Ledger(t)
	s := &seeded{db: db, store: model.NewStore(db), now: time.Now().UTC().Truncate(time.Millisecond)}
	next := s.now.Add(-time.Hour)
	s.at = func() time.Time { next = next.Add(time.Minute); return next }
	order := func(no string, status model.OrderStatus) {
		at := s.at()
		testenv.Exec(t, db, `INSERT INTO orders (order_no, user_id, product_id, kind, quantity, amount_cents, status, activate_gen, close_gen, created_at, updated_at, expire_at)
			VALUES (?, 1, 1, 'card', 1, 100, ?, 1, 1, ?, ?, ?)`, no, status, at, at, at.Add(15*time.Minute))
	}
	refund := func(no, base string, status model.RefundStatus) {
		at := s.at()
		testenv.Exec(t, db, `INSERT INTO refunds (refund_no, base_no, order_id, order_no, trade_no, amount_cents, reason, status, task_gen, created_at, updated_at)
			VALUES (?, ?, 1, ?, ?, 100, ?, ?, 1, ?, ?)`, no, base, "O"+no, "T"+no, model.RefundReasonLate, status, at, at)
	}
	group := func(no string, status model.GroupStatus) {
		at := s.at()
		testenv.Exec(t, db, "INSERT INTO `groups` (group_no, owner_user_id, title, price_cents, deadline, status, settle_gen, created_at, updated_at) VALUES (?, 1, 'g', 100, ?, ?, 1, ?, ?)",
			no, at, status, at, at)
	}
	event := func(typ, no, reason string) {
		testenv.Exec(t, db, `INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at) VALUES (?, ?, 'a', 'b', ?, ?)`, typ, no, reason, s.at())
	}
	notification := func(id string, attempts int, delivered bool) {
		at := s.at()
		var deliveredAt *time.Time
		if delivered {
			deliveredAt = &at
		}
		testenv.Exec(t, db, `INSERT INTO notifications (notify_id, kind, subject, recipient, message, attempts, created_at, delivered_at) VALUES (?, 'k', 's', 'admin', 'm', ?, ?, ?)`,
			id, attempts, at, deliveredAt)
	}
	held := func(trade string) {
		testenv.Exec(t, db, `INSERT INTO held_payments (provider, trade_no, order_id, order_no, amount_cents, paid_order_id, paid_order_no, created_at) VALUES ('paysim', ?, 2, 'O2', 100, 1, 'O1', ?)`,
			trade, s.at())
	}
	dispute := func(id string, status model.DisputeStatus, closed bool) {
		at := s.at()
		var closedAt *time.Time
		if closed {
			closedAt = &at
		}
		testenv.Exec(t, db, `INSERT INTO disputes (dispute_id, provider, trade_no, order_id, order_no, status, reason, amount_cents, created_at, updated_at, closed_at)
			VALUES (?, 'stripe', 'T1', 1, 'O1', ?, 'fraudulent', 100, ?, ?, ?)`, id, status, at, at, closedAt)
	}
	outbox := func(id string, age time.Duration) {
		testenv.Exec(t, db, `INSERT INTO outbox (task_id, task_type, payload, process_at, created_at) VALUES (?, 'order:activate', '{}', ?, ?)`,
			id, s.now.Add(-age), s.now.Add(-age))
	}

	order("O-failed-old", model.OrderFailed)
	event("order", "O-failed-old", "card provider down")
	order("O-finished", model.OrderFinished)
	order("O-paid", model.OrderPaid)
	order("O-closed", model.OrderClosed)
	order("O-refunded", model.OrderRefunded)
	order("O-failed-new", model.OrderFailed)
	event("order", "O-failed-new", "paid")
	event("order", "O-failed-new", "out of stock")

	refund("R-manual-old", "B-old", model.RefundManual)
	event("refund", "B-old", "provider refused")
	refund("R-processing", "B-processing", model.RefundProcessing)
	refund("R-succeeded", "B-succeeded", model.RefundSucceeded)
	refund("R-manual-new-2", "B-new", model.RefundManual) // a re-numbered refund: its events are kept under the base
	event("refund", "B-new", "account closed")

	group("G-failed-old", model.GroupFailed)
	group("G-open", model.GroupOpen)
	group("G-closed", model.GroupClosed)
	group("G-settled", model.GroupSettled)
	group("G-failed-new", model.GroupFailed)

	notification("N-failing-old", 3, false)
	notification("N-waiting", 0, false)
	notification("N-delivered-after-failing", 2, true)
	notification("N-failing-new", 1, false)

	held("T-held-old")
	held("T-held-new")

	dispute("du_needs_response", model.DisputeNeedsResponse, false)
	dispute("du_won", model.DisputeWon, true)
	dispute("du_lost", model.DisputeLost, true)
	dispute("du_under_review", model.DisputeUnderReview, false)

	outbox("task-old", 90*time.Second)
	outbox("task-new", 30*time.Second)
	return s
}

// listed is what the "needs a hand" page lists, by number.
type listed struct {
	FailedOrders   []string
	OrderReasons   map[string]string
	ManualRefunds  []string
	RefundReasons  map[string]string
	FailedGroups   []string
	FailingNotices []string
	Held           []string
	OpenDisputes   []string
	OutboxBacklog  int64
	OutboxAge      time.Duration
	Sweep          *metrics.SweepPass
}

func listedOf(n *backlog.Needs) listed {
	return listed{
		FailedOrders:   numbersOf(n.FailedOrders, func(o model.Order) string { return o.OrderNo }),
		OrderReasons:   n.OrderReasons,
		ManualRefunds:  numbersOf(n.ManualRefunds, func(r model.Refund) string { return r.RefundNo }),
		RefundReasons:  n.RefundReasons,
		FailedGroups:   numbersOf(n.FailedGroups, func(g model.Group) string { return g.GroupNo }),
		FailingNotices: numbersOf(n.FailingNotices, func(x model.Notification) string { return x.NotifyID }),
		Held:           numbersOf(n.Held, func(h model.HeldPayment) string { return h.TradeNo }),
		OpenDisputes:   numbersOf(n.OpenDisputes, func(d model.Dispute) string { return d.DisputeID }),
		OutboxBacklog:  n.OutboxBacklog,
		OutboxAge:      n.OutboxAge,
		Sweep:          n.Sweep,
	}
}

// numbersOf lists each row's number in order; nil for no rows, as the
// wanted lists leave it.
func numbersOf[T any](rows []T, number func(T) string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, number(r))
	}
	return out
}

func redisClient(t *testing.T, addr string, db int) redis.UniversalClient {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// What needs a hand: failed orders, refunds left to an operator, failed
// groups, notifications whose delivery failed, held payments and open
// disputes, newest first, at most limit of each, each order and refund
// with the reason of its newest event; the outbox's backlog and oldest
// row's age; the sweep's last pass once one is recorded. Finished,
// refunded, settled, delivered, closed things are not listed.
func TestNeeds(t *testing.T) {
	t.Parallel()
	s := seed(t)
	rdb := redisClient(t, testenv.RedisAddr(), testenv.RedisDB(t))
	svc := &backlog.Service{Store: s.store, Redis: rdb, Clock: clock.NewFake(s.now)}
	ctx := context.Background()
	all := listed{
		FailedOrders:   []string{"O-failed-new", "O-failed-old"},
		OrderReasons:   map[string]string{"O-failed-new": "out of stock", "O-failed-old": "card provider down"},
		ManualRefunds:  []string{"R-manual-new-2", "R-manual-old"},
		RefundReasons:  map[string]string{"B-new": "account closed", "B-old": "provider refused"},
		FailedGroups:   []string{"G-failed-new", "G-failed-old"},
		FailingNotices: []string{"N-failing-old", "N-failing-new"}, // oldest first: the longest failing
		Held:           []string{"T-held-new", "T-held-old"},
		OpenDisputes:   []string{"du_under_review", "du_needs_response"},
		OutboxBacklog:  2,
		OutboxAge:      90 * time.Second,
	}
	pass := &metrics.SweepPass{StartedAt: s.now.Add(-time.Minute), Seconds: 1.5, Complete: true, Kinds: map[string]metrics.SweepKind{}}
	for _, tc := range []struct {
		name  string
		limit int
		sweep *metrics.SweepPass // recorded before the read
		want  listed
	}{
		{"everything, no sweep pass yet", 10, nil, all},
		{"at most limit of each, the newest", 1, nil, listed{
			FailedOrders:   []string{"O-failed-new"},
			OrderReasons:   map[string]string{"O-failed-new": "out of stock"},
			ManualRefunds:  []string{"R-manual-new-2"},
			RefundReasons:  map[string]string{"B-new": "account closed"},
			FailedGroups:   []string{"G-failed-new"},
			FailingNotices: []string{"N-failing-old"},
			Held:           []string{"T-held-new"},
			OpenDisputes:   []string{"du_under_review"},
			OutboxBacklog:  2,
			OutboxAge:      90 * time.Second,
		}},
		{"with the sweep's last pass", 10, pass, func() listed { l := all; l.Sweep = pass; return l }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.sweep != nil {
				b, err := json.Marshal(tc.sweep)
				if err != nil {
					t.Fatal(err)
				}
				if err := rdb.Set(ctx, metrics.SweepKey, b, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			n, err := svc.Needs(ctx, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, listedOf(n)); diff != "" {
				t.Errorf("needs (-want +got):\n%s", diff)
			}
		})
	}
}

// The sweep's record lives in Redis: with Redis unreachable the page still
// answers from the ledger, showing no pass.
func TestNeedsWithoutRedis(t *testing.T) {
	t.Parallel()
	s := seed(t)
	svc := &backlog.Service{Store: s.store, Redis: redisClient(t, "127.0.0.1:1", 0), Clock: clock.NewFake(s.now)}
	n, err := svc.Needs(context.Background(), 10)
	if err != nil {
		t.Fatalf("Needs with Redis down: %v", err)
	}
	if got := listedOf(n); got.Sweep != nil || len(got.FailedOrders) != 2 {
		t.Errorf("Needs with Redis down: sweep %v, failed orders %v; want no pass and both orders", got.Sweep, got.FailedOrders)
	}
}
