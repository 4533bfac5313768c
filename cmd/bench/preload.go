package main

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"orderflow/internal/infra/stock"
)

// PreloadResult is the growth phase's pre-load: finished card orders with
// every row a finished order leaves, and unsold keys, written by set-based
// SQL into the bench database.
type PreloadResult struct {
	Orders         int              `json:"orders"`
	UnsoldKeys     int              `json:"unsold_keys"`
	Seconds        float64          `json:"seconds"`
	AnalyzeSeconds float64          `json:"analyze_seconds"`
	Rows           map[string]int64 `json:"rows_after"` // table → row count after the pre-load
}

// preloadChunk is how many orders one INSERT … SELECT writes.
const preloadChunk = 100_000

// preloadTables are the tables the pre-load grows (ANALYZEd afterwards).
var preloadTables = []string{"orders", "events", "payments", "order_effects", "stock_flows", "card_keys"}

// finishedOrderRows copies what a card order the end-to-end phase finished
// leaves in the ledger (one order, quantity 1, paid by a paysim trade):
// four events (created, payment, claim, delivered), one applied payment, the
// card effect row, the lock and sell stock flows and its key, SOLD to it.
// Each statement takes the orders of one id range, [?, ?].
var finishedOrderRows = []struct{ table, sql string }{
	{"events", `INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at)
		SELECT 'order', o.order_no, m.f, m.t, m.r,
		       CASE m.k WHEN 1 THEN o.created_at WHEN 2 THEN o.paid_at WHEN 3 THEN o.claimed_at ELSE o.finished_at END
		FROM orders o JOIN (SELECT 1 k, '-' f, 'pending' t, 'created' r UNION ALL SELECT 2, 'pending', 'paid', 'payment'
		     UNION ALL SELECT 3, 'paid', 'claimed', 'claim' UNION ALL SELECT 4, 'claimed', 'finished', 'delivered') m
		WHERE o.id BETWEEN ? AND ? `},
	{"payments", `INSERT INTO payments (provider, trade_no, order_id, amount_cents, disposition, created_at)
		SELECT 'paysim', o.trade_no, o.id, o.amount_cents, 'applied', o.paid_at FROM orders o WHERE o.id BETWEEN ? AND ?`},
	{"order_effects", `INSERT INTO order_effects (order_id, effect, detail, created_at)
		SELECT o.id, 'card', '', o.finished_at FROM orders o WHERE o.id BETWEEN ? AND ?`},
	{"stock_flows", `INSERT INTO stock_flows (product_id, order_id, flow_type, quantity, created_at)
		SELECT o.product_id, o.id, m.t, 1, IF(m.t = 1, o.created_at, o.finished_at)
		FROM orders o JOIN (SELECT 1 t UNION ALL SELECT 2) m WHERE o.id BETWEEN ? AND ?`},
	{"card_keys", `INSERT INTO card_keys (product_id, code, status, order_id, updated_at)
		SELECT o.product_id, CONCAT('LK-', o.order_no), 'SOLD', o.id, o.finished_at FROM orders o WHERE o.id BETWEEN ? AND ?`},
}

// preloadLedger writes n finished orders of the order phases' products,
// spread over the bench's buyers and over the 2n seconds before now, and
// `unsold` more UNSOLD keys of those products, then ANALYZEs the tables it
// grew. Order numbers (L…), trade numbers (LT…) and key codes (LK-…, LU-…)
// cannot meet the product's own (O…, BT…, BK-…). The products' Redis stock
// counters are dropped: the next take rebuilds them from the ledger.
func preloadLedger(ctx context.Context, e *benchEnv, n, unsold int) (*PreloadResult, error) {
	res := &PreloadResult{Orders: n, UnsoldKeys: unsold, Rows: map[string]int64{}}
	t0 := time.Now()
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	products := e.fx.products[:e.fx.used]
	if err := preloadBuyers(ctx, conn, e.fx.userIDs); err != nil {
		return nil, err
	}
	product := productChoice(products)
	base := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	// The orders go in one chunk after another on this connection (a bulk
	// insert holds the table's AUTO-INC lock); each chunk's other rows go in
	// beside the next chunk, on other connections, one table each.
	side := newSideWriter(ctx, e.db, preloadSideConns)
	if unsold > 0 {
		side.exec("unsold keys", fmt.Sprintf(`INSERT INTO card_keys (product_id, code, status, order_id, updated_at)
			SELECT %s, CONCAT('LU-', s.seq), 'UNSOLD', NULL, NOW(3) FROM seq_1_to_%d s`, product, unsold))
	}
	for lo := 1; lo <= n && side.err() == nil; lo += preloadChunk {
		hi := min(lo+preloadChunk-1, n)
		ids, err := preloadOrders(ctx, conn, lo, hi, n, len(e.fx.userIDs), product, e.fx.price, base)
		if err != nil {
			_ = side.wait() // the orders' error is the one to report
			return nil, err
		}
		for _, st := range finishedOrderRows {
			side.exec(fmt.Sprintf("%s of orders %d..%d", st.table, ids[0], ids[1]), st.sql, ids[0], ids[1])
		}
		logf("growth: pre-loaded %d finished orders (%.0f s)", hi, time.Since(t0).Seconds())
	}
	if err := side.wait(); err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `DROP TEMPORARY TABLE bench_buyers`); err != nil {
		return nil, err
	}
	res.Seconds = round1(time.Since(t0).Seconds())
	t1 := time.Now()
	if _, err := conn.ExecContext(ctx, "ANALYZE TABLE "+strings.Join(preloadTables, ", ")); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	res.AnalyzeSeconds = round1(time.Since(t1).Seconds())
	for _, t := range preloadTables {
		if res.Rows[t], err = queryInt(ctx, e.db, "SELECT COUNT(*) FROM "+t); err != nil {
			return nil, err
		}
	}
	for _, pid := range products {
		if err := e.rdb.Del(ctx, stock.Key(pid)).Err(); err != nil {
			return nil, fmt.Errorf("drop the stock counter of product %d: %w", pid, err)
		}
	}
	return res, nil
}

// preloadSideConns is how many connections write the orders' other rows.
const preloadSideConns = 3

// sideWriter runs statements on a few of the pool's connections and keeps
// the first error; after one, the statements still queued are skipped.
type sideWriter struct {
	ctx  context.Context
	db   *sql.DB
	jobs chan sideJob
	wg   sync.WaitGroup
	mu   sync.Mutex
	errV error
}

type sideJob struct {
	what string
	sql  string
	args []any
}

func newSideWriter(ctx context.Context, db *sql.DB, conns int) *sideWriter {
	w := &sideWriter{ctx: ctx, db: db, jobs: make(chan sideJob, 64)}
	for range conns {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for j := range w.jobs {
				if w.err() != nil || ctx.Err() != nil {
					continue
				}
				if _, err := db.ExecContext(ctx, j.sql, j.args...); err != nil {
					w.mu.Lock()
					w.errV = cmp.Or(w.errV, fmt.Errorf("pre-load %s: %w", j.what, err))
					w.mu.Unlock()
				}
			}
		}()
	}
	return w
}

// exec queues one statement.
func (w *sideWriter) exec(what, q string, args ...any) { w.jobs <- sideJob{what, q, args} }

func (w *sideWriter) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errV
}

// wait runs what is queued to its end and returns the first error.
func (w *sideWriter) wait() error {
	close(w.jobs)
	w.wg.Wait()
	return w.err()
}

// preloadBuyers numbers the bench's buyers 0..n-1 in a temporary table, so
// one join spreads the orders over them.
func preloadBuyers(ctx context.Context, conn *sql.Conn, ids []int64) error {
	if _, err := conn.ExecContext(ctx, `CREATE TEMPORARY TABLE bench_buyers (i INT NOT NULL PRIMARY KEY, id BIGINT NOT NULL)`); err != nil {
		return err
	}
	vals := make([]string, len(ids))
	for i, id := range ids {
		vals[i] = fmt.Sprintf("(%d, %d)", i, id)
	}
	_, err := conn.ExecContext(ctx, `INSERT INTO bench_buyers VALUES `+strings.Join(vals, ", "))
	return err
}

// productChoice is the SQL expression of the product of sequence number
// s.seq: the order phases' products round-robin.
func productChoice(products []int64) string {
	if len(products) == 1 {
		return fmt.Sprint(products[0])
	}
	parts := make([]string, len(products))
	for i, p := range products {
		parts[i] = fmt.Sprint(p)
	}
	return fmt.Sprintf("ELT(1 + s.seq %% %d, %s)", len(products), strings.Join(parts, ", "))
}

// preloadOrders inserts the finished orders numbered lo..hi of n, order i
// created 2(n−i) s before base, paid 200 ms, claimed 300 ms and finished
// 400 ms after, and returns their id range.
func preloadOrders(ctx context.Context, conn *sql.Conn, lo, hi, n, buyers int, product string, price int64, base time.Time) ([2]int64, error) {
	var ids [2]int64
	q := fmt.Sprintf(`INSERT INTO orders (order_no, user_id, product_id, kind, quantity, amount_cents, status, trade_no,
		activate_gen, close_gen, attempts, claim_token, claim_task_id, claimed_at, created_at, updated_at, expire_at, paid_at, finished_at)
		SELECT x.no, x.user_id, x.product_id, 'card', 1, %d, 5, CONCAT('LT', x.no), 1, 1, 1, MD5(x.no),
		       CONCAT('order:activate:', x.no, ':1'), x.t + INTERVAL 300000 MICROSECOND, x.t, x.t + INTERVAL 400000 MICROSECOND,
		       x.t + INTERVAL 15 MINUTE, x.t + INTERVAL 200000 MICROSECOND, x.t + INTERVAL 400000 MICROSECOND
		FROM (SELECT CONCAT('L', LPAD(s.seq, 11, '0')) no, b.id user_id, %s product_id,
		             CAST(? AS DATETIME(3)) - INTERVAL (%d - s.seq) * 2 SECOND t
		      FROM seq_%d_to_%d s JOIN bench_buyers b ON b.i = s.seq %% %d) x`,
		price, product, n, lo, hi, buyers)
	if _, err := conn.ExecContext(ctx, q, base); err != nil {
		return ids, fmt.Errorf("pre-load orders %d..%d: %w", lo, hi, err)
	}
	err := conn.QueryRowContext(ctx, `SELECT MIN(id), MAX(id) FROM orders WHERE order_no BETWEEN ? AND ?`,
		fmt.Sprintf("L%011d", lo), fmt.Sprintf("L%011d", hi)).Scan(&ids[0], &ids[1])
	return ids, err
}
