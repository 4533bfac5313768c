package console

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
)

// benchOrders is the ledger size the console must stay fast at.
const benchOrders = 100_000

// BenchmarkConsolePages times each console page over HTTP with 100,000
// orders (and their events) in the ledger: every page must answer in under
// 200 ms. `make bench-console` runs it; it prints one line per page.
func BenchmarkConsolePages(b *testing.B) {
	s := testenv.Start(b, testenv.Options{NoWorker: true})
	start := time.Now()
	failed := seedLedger(b, s, benchOrders)
	fmt.Printf("console bench: seeded %d orders, %d events in %s\n", s.Count(b, `SELECT COUNT(*) FROM orders`), s.Count(b, `SELECT COUNT(*) FROM events`), time.Since(start).Round(time.Millisecond))
	explainLists(b, s)
	op := newBrowser(b, s.APIURL)
	op.login(b, s.Config.AdminToken)

	pages := []struct {
		name, path string
		as         *browser
	}{
		{"needs-a-hand", "/console/", op},
		{"story", "/console/story?no=" + failed, op},
		{"glance", "/console/glance", op},
		{"login", "/console/login", newBrowser(b, s.APIURL)},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				a := p.as.do(b, "GET", p.path, nil)
				took = append(took, time.Since(t0))
				if a.status != http.StatusOK {
					b.Fatalf("GET %s: %d", p.path, a.status)
				}
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			p50, worst := took[len(took)/2], took[len(took)-1]
			b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
			fmt.Printf("console page %-13s %d orders: p50 %6.1f ms, max %6.1f ms over %d requests\n",
				p.name, benchOrders, float64(p50.Microseconds())/1000, float64(worst.Microseconds())/1000, len(took))
			if worst > 200*time.Millisecond {
				b.Errorf("%s took %s at worst, want under 200 ms", p.path, worst)
			}
		})
	}
}

// seedLedger bulk-inserts n orders over the last 30 days with multi-row
// INSERTs — most finished, 5% closed, 2% refunded, 1% failed — each with
// its event history. It returns a failed order's number.
func seedLedger(tb testing.TB, s *testenv.Stack, n int) string {
	tb.Helper()
	db := s.SC.DB
	now := time.Now().UTC().Truncate(time.Millisecond)
	exec := func(q string, args ...any) {
		if err := db.Exec(q, args...).Error; err != nil {
			tb.Fatalf("seed: %v", err)
		}
	}
	exec(`INSERT INTO products (sku, kind, price_cents, created_at) VALUES ('bench-sub', 'subscription', 500, ?)`, now)
	var pid int64
	if err := db.Raw(`SELECT id FROM products WHERE sku = 'bench-sub'`).Scan(&pid).Error; err != nil {
		tb.Fatal(err)
	}
	const batch = 1000
	type ev struct{ from, to, why string }
	var failedNo string
	for lo := 0; lo < n; lo += batch {
		var ords, evs []string
		var oa, ea []any
		for i := lo; i < min(lo+batch, n); i++ {
			no := fmt.Sprintf("OB%020d", i)
			created := now.Add(-time.Duration(n-i) * (30 * 24 * time.Hour / time.Duration(n)))
			paid, finished := created.Add(time.Second), created.Add(3*time.Second)
			st, updated := model.OrderFinished, finished
			var paidAt, finishedAt, closedAt any = paid, finished, nil
			hist := []ev{{"-", "pending", "created"}, {"pending", "paid", "payment"}, {"paid", "claimed", "claim"}, {"claimed", "finished", "delivered"}}
			switch {
			case i%100 == 7:
				st, finishedAt = model.OrderFailed, nil
				hist = append(hist[:3], ev{"claimed", "failed", "attempts exhausted"})
				failedNo = no
			case i%20 == 3:
				st, paidAt, finishedAt, closedAt = model.OrderClosed, nil, nil, created.Add(15*time.Minute)
				updated = created.Add(15 * time.Minute)
				hist = []ev{{"-", "pending", "created"}, {"pending", "closed", "expired"}}
			case i%50 == 11:
				st, finishedAt = model.OrderRefunded, nil
				hist = []ev{{"-", "pending", "created"}, {"pending", "closed", "expired"}, {"closed", "refunding", "late payment"}, {"refunding", "refunded", "all refunds succeeded"}}
			}
			ords = append(ords, "(?, 1, ?, 'subscription', 1, 500, ?, ?, ?, ?, ?, ?, ?, ?)")
			oa = append(oa, no, pid, st, "T"+no, created, updated, created.Add(15*time.Minute), paidAt, finishedAt, closedAt)
			for k, e := range hist {
				evs = append(evs, "('order', ?, ?, ?, ?, ?)")
				ea = append(ea, no, e.from, e.to, e.why, created.Add(time.Duration(k)*time.Second))
			}
		}
		exec(`INSERT INTO orders (order_no, user_id, product_id, kind, quantity, amount_cents, status, trade_no, created_at, updated_at, expire_at, paid_at, finished_at, closed_at) VALUES `+strings.Join(ords, ","), oa...)
		exec(`INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at) VALUES `+strings.Join(evs, ","), ea...)
	}
	return failedNo
}

// explainLists checks that the console's list queries (model/console.go)
// walk an index, not the table: the same SQL, asked to EXPLAIN itself.
func explainLists(tb testing.TB, s *testenv.Stack) {
	tb.Helper()
	queries := []struct {
		sql  string
		arg  any
		want string
	}{
		{`SELECT * FROM orders WHERE status = ? ORDER BY updated_at DESC LIMIT 50`, model.OrderFailed, "idx_orders_status_updated"},
		{`SELECT * FROM refunds WHERE status = ? ORDER BY updated_at DESC LIMIT 50`, model.RefundManual, "idx_refunds_status_updated"},
		{"SELECT * FROM `groups` WHERE status = ? ORDER BY deadline DESC LIMIT 50", model.GroupFailed, "idx_groups_status_deadline"},
		{`SELECT paid_at, finished_at FROM orders WHERE status = ? AND updated_at >= NOW() - INTERVAL 1 HOUR LIMIT 20000`, model.OrderFinished, "idx_orders_status_updated"},
		{`SELECT * FROM events WHERE object_type = 'order' AND object_no IN (?) ORDER BY id`, "OB00000000000000000007", "idx_events_object"},
	}
	for _, q := range queries {
		var plan []struct {
			Table string
			Key   *string
			Rows  int64
		}
		if err := s.SC.DB.Raw("EXPLAIN "+q.sql, q.arg).Scan(&plan).Error; err != nil {
			tb.Fatalf("explain %s: %v", q.sql, err)
		}
		if len(plan) == 0 || plan[0].Key == nil || *plan[0].Key != q.want {
			tb.Errorf("%s: plan %+v, want index %s", q.sql, plan, q.want)
			continue
		}
		fmt.Printf("console bench: %-60.60s uses %s (~%d rows)\n", q.sql, *plan[0].Key, plan[0].Rows)
	}
}
