package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// seed writes n rows with one multi-row INSERT per 1,000 (fast: no API, no
// tasks — as if Redis had lost every one of them). row(i) returns the
// values of row i in the column order.
func seed(t testing.TB, s *testenv.Stack, table, columns string, n int, row func(i int) []any) {
	t.Helper()
	ncol := len(strings.Split(columns, ","))
	ph := "(" + strings.TrimSuffix(strings.Repeat("?,", ncol), ",") + ")"
	for from := 0; from < n; from += 1000 {
		to := min(from+1000, n)
		var args []any
		for i := from; i < to; i++ {
			args = append(args, row(i)...)
		}
		q := "INSERT INTO " + table + " (" + columns + ") VALUES " + strings.TrimSuffix(strings.Repeat(ph+",", to-from), ",")
		if err := s.SC.DB.Exec(q, args...).Error; err != nil {
			t.Fatalf("seed %s: %v", table, err)
		}
	}
}

const orderCols = "order_no, user_id, product_id, kind, quantity, amount_cents, status, activate_gen, close_gen, created_at, updated_at, expire_at"

// seedOrders writes n orders in a status, expiring at expire.
func seedOrders(t testing.TB, s *testenv.Stack, prefix string, n int, status model.OrderStatus, now, expire time.Time) {
	seed(t, s, "orders", orderCols, n, func(i int) []any {
		return []any{fmt.Sprintf("%s%07d", prefix, i), 1, 1, "card", 1, 100, status, 1, 1, now, now, expire}
	})
}

func seedRefunds(t testing.TB, s *testenv.Stack, n int, now time.Time) {
	seed(t, s, "refunds", "refund_no, base_no, order_id, order_no, trade_no, amount_cents, reason, status, task_gen, created_at, updated_at", n,
		func(i int) []any {
			no := fmt.Sprintf("R%07d", i)
			return []any{no, no, 1000000 + i, fmt.Sprintf("RO%07d", i), fmt.Sprintf("T%07d", i), 100, model.RefundReasonLate, model.RefundProcessing, 1, now, now}
		})
}

func seedGroups(t testing.TB, s *testenv.Stack, n int, status model.GroupStatus, now, deadline time.Time) {
	seed(t, s, "`groups`", "group_no, owner_user_id, title, price_cents, deadline, status, settle_gen, created_at, updated_at", n,
		func(i int) []any {
			return []any{fmt.Sprintf("G%s%07d", status[:1], i), 1, "g", 100, deadline, status, 1, now, now}
		})
}

// notLive returns the objects of a query (number, generation) whose current
// task (typ:number:gen) is neither waiting in the outbox nor live in asynq.
func notLive(t testing.TB, s *testenv.Stack, typ, query string) []string {
	t.Helper()
	var rows []struct {
		No  string
		Gen int
	}
	if err := s.SC.DB.Raw(query).Scan(&rows).Error; err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = tasks.ID(typ, r.No, r.Gen)
	}
	var out []string
	for from := 0; from < len(ids); from += 1000 {
		part := ids[from:min(from+1000, len(ids))]
		live, err := s.UC.Relay.LiveMany(context.Background(), typ, part)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range part {
			if !live[id] {
				out = append(out, id)
			}
		}
	}
	return out
}

const (
	pendingQuery = "SELECT order_no AS no, close_gen AS gen FROM orders WHERE status = 1"
	paidQuery    = "SELECT order_no AS no, activate_gen AS gen FROM orders WHERE status = 2"
	refundQuery  = "SELECT refund_no AS no, task_gen AS gen FROM refunds WHERE status = 'processing'"
	groupQuery   = "SELECT group_no AS no, settle_gen AS gen FROM `groups` WHERE status IN ('OPEN', 'CLOSED')"
)
