package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"orderflow/internal/infra/stock"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
)

// LedgerResult is the end-of-run audit: nothing lost, nothing doubled.
type LedgerResult struct {
	Orders     map[string]int64 `json:"orders_by_status"`
	Checks     int              `json:"checks"`
	Violations []string         `json:"violations"`
}

// ledgerCheck is one audit query: it must return 0.
type ledgerCheck struct {
	what string
	sql  string
	args []any
}

// auditLedger checks the bench database after every phase: each order is
// finished (or, for the close burst, closed) exactly once, each key sold at
// most once and only to a finished order, nothing left LOCKED, the outbox
// drained, the group charged once per participant, and every Redis stock
// counter that exists equal to the ledger's count.
func auditLedger(ctx context.Context, e *benchEnv) (*LedgerResult, error) {
	res := &LedgerResult{Orders: map[string]int64{}, Violations: []string{}}
	rows, err := e.db.QueryContext(ctx, `SELECT status, COUNT(*) FROM orders GROUP BY status`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var st model.OrderStatus
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			rows.Close()
			return nil, err
		}
		res.Orders[st.String()] = n
	}
	rows.Close()
	lo, hi := e.closeIDs[0], e.closeIDs[1]
	checks := []ledgerCheck{
		{"orders of the close burst not closed", `SELECT COUNT(*) FROM orders WHERE id > ? AND id <= ? AND status <> 3`, []any{lo, hi}},
		{"other orders not finished", `SELECT COUNT(*) FROM orders WHERE (id <= ? OR id > ?) AND status <> 5`, []any{lo, hi}},
		{"finished orders without exactly one claimed→finished event",
			`SELECT COUNT(*) FROM (SELECT o.id FROM orders o LEFT JOIN events e ON e.object_type = 'order' AND e.object_no = o.order_no AND e.to_status = 'finished'
			 WHERE o.status = 5 GROUP BY o.id HAVING COUNT(e.id) <> 1) x`, nil},
		{"closed orders without exactly one pending→closed event",
			`SELECT COUNT(*) FROM (SELECT o.id FROM orders o LEFT JOIN events e ON e.object_type = 'order' AND e.object_no = o.order_no AND e.to_status = 'closed'
			 WHERE o.status = 3 GROUP BY o.id HAVING COUNT(e.id) <> 1) x`, nil},
		{"finished orders whose SOLD keys ≠ quantity",
			`SELECT COUNT(*) FROM (SELECT o.id FROM orders o LEFT JOIN card_keys k ON k.order_id = o.id AND k.status = 'SOLD'
			 WHERE o.status = 5 AND o.kind = 'card' GROUP BY o.id HAVING COUNT(k.id) <> MAX(o.quantity)) x`, nil},
		{"SOLD keys not belonging to a finished order",
			`SELECT COUNT(*) FROM card_keys k LEFT JOIN orders o ON o.id = k.order_id WHERE k.status = 'SOLD' AND (o.id IS NULL OR o.status <> 5)`, nil},
		{"LOCKED keys left (every order is terminal)", `SELECT COUNT(*) FROM card_keys WHERE status = 'LOCKED'`, nil},
		{"finished orders without exactly one delivery effect",
			`SELECT COUNT(*) FROM orders o LEFT JOIN order_effects f ON f.order_id = o.id WHERE o.status = 5 AND f.order_id IS NULL`, nil},
		{"finished orders without exactly one sell stock flow",
			`SELECT (SELECT COUNT(*) FROM orders WHERE status = 5) - (SELECT COUNT(*) FROM stock_flows f JOIN orders o ON o.id = f.order_id WHERE f.flow_type = 2 AND o.status = 5)`, nil},
		{"closed orders without a close-restore stock flow",
			`SELECT COUNT(*) FROM orders o LEFT JOIN stock_flows f ON f.order_id = o.id AND f.flow_type = 3 WHERE o.status = 3 AND f.id IS NULL`, nil},
		{"finished orders without exactly one applied payment",
			`SELECT COUNT(*) FROM (SELECT o.id FROM orders o LEFT JOIN payments p ON p.order_id = o.id AND p.disposition = 'applied'
			 WHERE o.status = 5 GROUP BY o.id HAVING COUNT(p.id) <> 1) x`, nil},
		{"payments that are not applied (would be refunded)", `SELECT COUNT(*) FROM payments WHERE disposition <> 'applied'`, nil},
		{"refunds opened", `SELECT COUNT(*) FROM refunds`, nil},
		{"outbox rows left", `SELECT COUNT(*) FROM outbox`, nil},
		{"pending-order slots left taken", `SELECT COUNT(*) FROM users WHERE pending_orders <> 0`, nil},
		{"groups not SETTLED", "SELECT COUNT(*) FROM `groups` WHERE status <> 'SETTLED'", nil},
		{"participants not charged exactly once",
			"SELECT COUNT(*) FROM group_participants p JOIN `groups` g ON g.id = p.group_id " +
				"LEFT JOIN wallet_entries w ON w.ref = CONCAT('group:', g.group_no, ':user:', p.user_id) WHERE p.charged_at IS NULL OR w.id IS NULL", nil},
		{"users whose balance ≠ the sum of their wallet entries",
			`SELECT COUNT(*) FROM (SELECT u.id FROM users u LEFT JOIN wallet_entries w ON w.user_id = u.id
			 GROUP BY u.id HAVING MAX(u.balance_cents) <> COALESCE(SUM(w.amount_cents), 0)) x`, nil},
	}
	for _, c := range checks {
		n, err := queryInt(ctx, e.db, c.sql, c.args...)
		if err != nil {
			return nil, fmt.Errorf("audit %q: %w", c.what, err)
		}
		res.Checks++
		if n != 0 {
			res.Violations = append(res.Violations, fmt.Sprintf("%s: %d", c.what, n))
		}
	}
	if e.fx != nil {
		for _, pid := range e.fx.products {
			res.Checks++
			sellable, err := queryInt(ctx, e.db, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED')`, pid)
			if err != nil {
				return nil, err
			}
			v, err := e.rdb.Get(ctx, stock.Key(pid)).Result()
			if errors.Is(err, redis.Nil) {
				continue // no counter yet: the product rebuilds it from the ledger on first use
			}
			counter, perr := strconv.ParseInt(v, 10, 64)
			if err != nil || perr != nil || counter != sellable {
				res.Violations = append(res.Violations, fmt.Sprintf("product %d: Redis stock counter %q (err %v) ≠ the ledger's sellable keys %d", pid, v, err, sellable))
			}
		}
	}
	return res, nil
}
