package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Plan is MariaDB's EXPLAIN of one hot statement, on the bench's ledger as
// the run left it (tens of thousands of orders and keys).
type Plan struct {
	Name  string   `json:"name"`
	SQL   string   `json:"sql"`
	Steps []string `json:"steps"` // one per table: "table type=… key=… rows=… extra"
}

// hotStatements are the product's statements on the activation and close
// paths, copied from model/*.go (keep them in step when the SQL there
// changes), with real values from the ledger filled in. The last one is what
// the product does NOT do, shown for comparison: a move keyed by order_no.
func hotStatements(orderID int64, orderNo, taskID string, productID, userID int64, tokenHash string, groupID int64) [][2]string {
	return [][2]string{
		{"MoveOrder (claim)", fmt.Sprintf("UPDATE orders SET status = 6, updated_at = NOW(3), attempts = attempts + 1 WHERE id = %d AND status = 2", orderID)},
		{"MoveOrder (finalize)", fmt.Sprintf("UPDATE orders SET status = 5, updated_at = NOW(3) WHERE id = %d AND status = 6 AND claim_token = 'x'", orderID)},
		{"OrderByNo", fmt.Sprintf("SELECT * FROM orders WHERE order_no = '%s'", orderNo)},
		{"LockCardsLater (SKIP LOCKED pick joined)", fmt.Sprintf("UPDATE (SELECT id FROM card_keys WHERE product_id = %d AND status IN ('UNSOLD', 'RECYCLED') LIMIT 1 FOR UPDATE SKIP LOCKED) AS pick STRAIGHT_JOIN card_keys FORCE INDEX (PRIMARY) ON card_keys.id = pick.id SET card_keys.status = 'LOCKED', card_keys.order_id = %d, card_keys.updated_at = NOW(3) WHERE card_keys.status IN ('UNSOLD', 'RECYCLED')", productID, orderID)},
		{"floor's lock (UPDATE … LIMIT 1)", fmt.Sprintf("UPDATE card_keys SET status = 'LOCKED', order_id = %d, updated_at = NOW(3) WHERE product_id = %d AND status IN ('UNSOLD', 'RECYCLED') LIMIT 1", orderID, productID)},
		{"SellCardOrdersLater (a batch of one)", fmt.Sprintf("UPDATE card_keys SET status = 'SOLD', updated_at = NOW(3) WHERE order_id IN (%[1]d) AND status = 'LOCKED' AND order_id NOT IN (SELECT order_id FROM (SELECT order_id FROM card_keys WHERE order_id IN (%[1]d) AND status = 'LOCKED' GROUP BY order_id HAVING COUNT(*) <> CASE order_id WHEN %[1]d THEN 1 END) AS miscounted)", orderID)},
		{"TakePendingSlot", fmt.Sprintf("UPDATE users SET pending_orders = pending_orders + 1 WHERE id = %d AND pending_orders < 5", userID)},
		{"UserByTokenHash", "SELECT * FROM users WHERE token_hash = '" + tokenHash + "'"},
		{"Outbox poller (OutboxBetween)", "SELECT * FROM outbox WHERE id > 0 AND id <= 1000000 ORDER BY id LIMIT 200"},
		{"DeleteOutbox", fmt.Sprintf("DELETE FROM outbox WHERE (task_id = '%s' AND created_at = NOW(3)) OR (task_id = 'x' AND created_at = NOW(3))", taskID)},
		{"OutboxBacklog (/metrics)", "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox"},
		{"OutboxHas (sweeps)", fmt.Sprintf("SELECT COUNT(*) FROM outbox WHERE task_id = '%s'", taskID)},
		{"PendingExpiredPage (reconcile)", "SELECT * FROM orders FORCE INDEX (idx_orders_status_expire) WHERE status = 1 AND expire_at < NOW(3) AND (expire_at > '2000-01-01' OR (expire_at = '2000-01-01' AND id > 0)) ORDER BY expire_at, id LIMIT 100"},
		{"OrdersPage (sweep)", "SELECT * FROM orders FORCE INDEX (idx_orders_status_updated) WHERE status = 6 AND updated_at < NOW(3) AND (updated_at > '2000-01-01' OR (updated_at = '2000-01-01' AND id > 0)) ORDER BY updated_at, id LIMIT 100"},
		{"StockSnapshot (counter rebuild)", fmt.Sprintf("SELECT o.order_no, f.flow_type FROM stock_flows f JOIN orders o ON o.id = f.order_id WHERE f.product_id = %d AND f.flow_type IN (3, 4) AND f.created_at >= NOW(3) - INTERVAL 1 HOUR", productID)},
		{"ChargeParticipants", fmt.Sprintf("UPDATE users u JOIN group_participants p ON p.user_id = u.id SET u.balance_cents = u.balance_cents - 1 WHERE p.group_id = %d AND p.charged_at IS NULL AND u.balance_cents >= 1", groupID)},
		{"(not used) move keyed by order_no", fmt.Sprintf("UPDATE orders SET status = 6 WHERE order_no = '%s' AND status = 2", orderNo)},
	}
}

func explainHot(ctx context.Context, db *sql.DB) ([]Plan, error) {
	var orderID, productID, userID, groupID int64
	var orderNo string
	err := db.QueryRowContext(ctx, `SELECT id, order_no, product_id, user_id FROM orders ORDER BY id DESC LIMIT 1`).Scan(&orderID, &orderNo, &productID, &userID)
	if err == sql.ErrNoRows {
		orderNo = "none"
	} else if err != nil {
		return nil, err
	}
	_ = db.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM `groups`").Scan(&groupID)
	tokenHash := strings.Repeat("0", 64)
	_ = db.QueryRowContext(ctx, `SELECT token_hash FROM users WHERE id = ?`, userID).Scan(&tokenHash)
	var out []Plan
	for _, st := range hotStatements(orderID, orderNo, "order:activate:"+orderNo+":1", productID, userID, tokenHash, groupID) {
		steps, err := explain(ctx, db, st[1])
		if err != nil {
			return out, fmt.Errorf("explain %s: %w", st[0], err)
		}
		out = append(out, Plan{Name: st[0], SQL: st[1], Steps: steps})
	}
	return out, nil
}

// explain runs EXPLAIN (which does not execute the statement) and condenses
// each row.
func explain(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "EXPLAIN "+q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		get := func(name string) string {
			for i, c := range cols {
				if strings.EqualFold(c, name) && vals[i].Valid {
					return vals[i].String
				}
			}
			return "-"
		}
		if strings.HasPrefix(get("Extra"), "Impossible WHERE noticed after reading const tables") {
			// The unique key was probed while planning and found no row
			// (the outbox is empty at the end of a run): a const lookup.
			out = append(out, "const lookup on a unique key (no row matched at EXPLAIN time)")
			continue
		}
		out = append(out, fmt.Sprintf("%s type=%s key=%s rows=%s %s", get("table"), get("type"), get("key"), get("rows"), get("Extra")))
	}
	return out, rows.Err()
}

// movesToExplain are MoveOrder's statements for the two worker moves.
var movesToExplain = map[string]string{
	"claim (status = paid)":       "UPDATE orders SET status = 6, updated_at = NOW(3) WHERE id = %d AND status = 2",
	"finalize (status = claimed)": "UPDATE orders SET status = 5, updated_at = NOW(3) WHERE id = %d AND status = 6",
}

// sampleMovePlans EXPLAINs the worker's moves on the newest order n times,
// evenly over [from, to), and counts the index chosen each time.
func sampleMovePlans(ctx context.Context, db *sql.DB, from, to time.Time, n int) map[string]map[string]int {
	out := map[string]map[string]int{}
	step := to.Sub(from) / time.Duration(n)
	for i := 0; i < n; i++ {
		select {
		case <-ctx.Done():
			return out
		case <-time.After(time.Until(from.Add(time.Duration(i) * step))):
		}
		id, err := queryInt(ctx, db, `SELECT COALESCE(MAX(id), 0) FROM orders`)
		if err != nil {
			continue
		}
		for name, q := range movesToExplain {
			var key sql.NullString
			rows, err := db.QueryContext(ctx, "EXPLAIN "+fmt.Sprintf(q, id))
			if err != nil {
				continue
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]sql.NullString, len(cols))
				ptrs := make([]any, len(cols))
				for j := range vals {
					ptrs[j] = &vals[j]
				}
				if rows.Scan(ptrs...) == nil {
					for j, c := range cols {
						if c == "key" {
							key = vals[j]
						}
					}
				}
			}
			rows.Close()
			if out[name] == nil {
				out[name] = map[string]int{}
			}
			k := key.String
			if !key.Valid {
				k = "(none)"
			}
			out[name][k]++
		}
	}
	return out
}
