package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/model"
	"orderflow/svc"

	"go.uber.org/zap"
	"gorm.io/gorm"
)

// PassesResult is one sweep pass and one reconciliation pass over a ledger
// holding `Pending` pending orders (besides the pre-loaded finished ones),
// each with its close task live in asynq, as they are between sweeps.
type PassesResult struct {
	Pending        int      `json:"pending_orders"`
	SetupSeconds   float64  `json:"setup_s"` // insert the orders and queue their close tasks
	Sweep          PassTime `json:"sweep"`
	Reconcile      PassTime `json:"reconcile"`
	CleanupSeconds float64  `json:"cleanup_s"`
}

// PassTime is what one pass cost. MariaDBCPUSeconds is the shared server's
// CPU over the pass (other clients' work included); StatementSeconds is the
// sum of the pass's own statements' times as its client saw them (round
// trips included).
type PassTime struct {
	WallSeconds       float64 `json:"wall_s"`
	MariaDBCPUSeconds float64 `json:"mariadbd_cpu_s"`
	StatementSeconds  float64 `json:"statement_s"`
	Statements        int64   `json:"statements"`
	Checked           int     `json:"checked"`
	Requeued          int     `json:"requeued"`
	Closed            int     `json:"closed,omitempty"`
}

// pendingExpiry: the pending orders expire this long after they are
// written, so neither their close tasks nor the reconciliation close them
// during the passes.
const pendingExpiry = time.Hour

// timePasses writes n pending orders of the order phases' products, hands
// their close tasks to asynq through the product's own relay, runs one
// sweep pass (no time budget: every walk to its end) and one
// reconciliation pass in process with the product's own code on the bench
// database, then deletes the orders and their tasks again.
func timePasses(ctx context.Context, e *benchEnv, n int) (*PassesResult, error) {
	res := &PassesResult{Pending: n}
	cfg, _, err := svc.Load("", append(productEnv(e, e.dsn, e.params.RedisAddr), "ORDERFLOW_HTTP_ADDR=127.0.0.1:0"))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	sc, err := svc.New(cfg, zap.NewNop())
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	uc := sc.NewUseCases()
	uc.Sweeper.Budget = 0
	timer := timeStatements(sc.DB)

	t0 := time.Now()
	now := time.Now().UTC().Truncate(time.Millisecond)
	expire := now.Add(pendingExpiry)
	q := fmt.Sprintf(`INSERT INTO orders (order_no, user_id, product_id, kind, quantity, amount_cents, status,
		activate_gen, close_gen, attempts, created_at, updated_at, expire_at)
		SELECT CONCAT('LP', LPAD(s.seq, 11, '0')), (SELECT MIN(id) FROM users), %s, 'card', 1, %d, 1, 0, 1, 0,
		       CAST(? AS DATETIME(3)) + INTERVAL s.seq * 600 MICROSECOND, CAST(? AS DATETIME(3)) + INTERVAL s.seq * 600 MICROSECOND, ?
		FROM seq_1_to_%d s`, productChoice(e.fx.products[:e.fx.used]), e.fx.price, n)
	// Written over the minute before the passes, 600 µs apart, as a busy shop would.
	since := now.Add(-2 * time.Minute)
	if _, err := e.db.ExecContext(ctx, q, since, since, expire); err != nil {
		return nil, fmt.Errorf("insert %d pending orders: %w", n, err)
	}
	const page = 500
	err = parallel(ctx, (n+page-1)/page, 32, func(ctx context.Context, b int) error {
		rows := make([]model.OutboxRow, 0, page)
		for i := b*page + 1; i <= min((b+1)*page, n); i++ {
			rows = append(rows, *closeTask(pendingNo(i), expire, now))
		}
		_, err := uc.Relay.Resend(ctx, rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("queue the close tasks: %w", err)
	}
	res.SetupSeconds = round1(time.Since(t0).Seconds())
	logf("growth: %d pending orders with live close tasks in %.1f s", n, res.SetupSeconds)

	mdb := mariadbPid(e)
	res.Sweep, err = measurePass(mdb, timer, func() (PassTime, error) {
		rep, err := uc.Sweeper.Pass(ctx)
		tot := rep.Totals()
		return PassTime{Checked: tot.Checked, Requeued: tot.Requeued}, err
	})
	if err != nil {
		return res, fmt.Errorf("sweep pass: %w", err)
	}
	logf("growth: sweep pass %.2f s wall, %.2f s statements, mariadbd %.2f CPU s; checked %d, re-queued %d",
		res.Sweep.WallSeconds, res.Sweep.StatementSeconds, res.Sweep.MariaDBCPUSeconds, res.Sweep.Checked, res.Sweep.Requeued)
	res.Reconcile, err = measurePass(mdb, timer, func() (PassTime, error) {
		rep, err := uc.Reconciler.Run(ctx)
		tot := rep.Sweep.Totals()
		return PassTime{Checked: tot.Checked, Requeued: tot.Requeued, Closed: rep.Closed}, err
	})
	if err != nil {
		return res, fmt.Errorf("reconciliation pass: %w", err)
	}
	logf("growth: reconciliation pass %.2f s wall, %.2f s statements, mariadbd %.2f CPU s; checked %d, re-queued %d, closed %d",
		res.Reconcile.WallSeconds, res.Reconcile.StatementSeconds, res.Reconcile.MariaDBCPUSeconds, res.Reconcile.Checked, res.Reconcile.Requeued, res.Reconcile.Closed)

	t1 := time.Now()
	if err := removePending(ctx, e, sc, n); err != nil {
		return res, err
	}
	res.CleanupSeconds = round1(time.Since(t1).Seconds())
	return res, nil
}

// pendingNo is the order number of the i-th pending order (from 1).
func pendingNo(i int) string { return fmt.Sprintf("LP%011d", i) }

// closeTask is the close task the product queues with a new order
// (order.closeRow): its ID names the order and generation 1, due at expiry.
func closeTask(orderNo string, expire, now time.Time) *model.OutboxRow {
	return model.TaskRow(tasks.ID(tasks.TypeOrderClose, orderNo, 1), tasks.TypeOrderClose,
		tasks.Encode(tasks.OrderPayload{OrderNo: orderNo, Gen: 1}), expire, now)
}

// removePending deletes the pending orders and their close tasks, so the
// later phases and the ledger audit see the ledger as it was.
func removePending(ctx context.Context, e *benchEnv, sc *svc.ServiceContext, n int) error {
	if _, err := e.db.ExecContext(ctx, `DELETE FROM orders WHERE order_no BETWEEN ? AND ?`, pendingNo(1), pendingNo(n)); err != nil {
		return fmt.Errorf("delete the pending orders: %w", err)
	}
	// Only close tasks use the close queue, and with no stack running and
	// every other order terminal, every scheduled one there is a no-op now:
	// one call removes the pending orders' tasks.
	if _, err := sc.Inspector.DeleteAllScheduledTasks(sc.Tasks[tasks.TypeOrderClose].Queue); err != nil {
		return fmt.Errorf("delete the close tasks: %w", err)
	}
	return nil
}

// mariadbPid is the shared MariaDB server's process, or 0.
func mariadbPid(e *benchEnv) int {
	addr, err := mysqlHostPort(e.params.MySQL)
	if err != nil {
		return 0
	}
	return pidListening(portOf(addr))
}

// measurePass runs one pass and adds its wall time, the server's CPU and
// its statements' times.
func measurePass(mdb int, timer *statementTimer, pass func() (PassTime, error)) (PassTime, error) {
	cpu0, _ := cpuSeconds(mdb)
	n0, d0 := timer.read()
	t0 := time.Now()
	pt, err := pass()
	pt.WallSeconds = round2(time.Since(t0).Seconds())
	if cpu1, cerr := cpuSeconds(mdb); cerr == nil && mdb > 0 {
		pt.MariaDBCPUSeconds = round2(cpu1 - cpu0)
	}
	n1, d1 := timer.read()
	pt.Statements, pt.StatementSeconds = n1-n0, round2((d1 - d0).Seconds())
	return pt, err
}

// statementTimer sums the time of every statement a gorm pool runs (from
// sending it to its result or first row) and counts them.
type statementTimer struct {
	n, nanos atomic.Int64
}

func (t *statementTimer) read() (int64, time.Duration) {
	return t.n.Load(), time.Duration(t.nanos.Load())
}

const timerStart = "bench:statement_start"

func timeStatements(db *gorm.DB) *statementTimer {
	t := &statementTimer{}
	start := func(tx *gorm.DB) { tx.InstanceSet(timerStart, time.Now()) }
	end := func(tx *gorm.DB) {
		if v, ok := tx.InstanceGet(timerStart); ok {
			t.n.Add(1)
			t.nanos.Add(int64(time.Since(v.(time.Time))))
		}
	}
	cb := db.Callback()
	_ = cb.Query().Before("gorm:query").Register("bench:start", start)
	_ = cb.Query().After("gorm:query").Register("bench:end", end)
	_ = cb.Row().Before("gorm:row").Register("bench:start", start)
	_ = cb.Row().After("gorm:row").Register("bench:end", end)
	_ = cb.Raw().Before("gorm:raw").Register("bench:start", start)
	_ = cb.Raw().After("gorm:raw").Register("bench:end", end)
	_ = cb.Create().Before("gorm:create").Register("bench:start", start)
	_ = cb.Create().After("gorm:create").Register("bench:end", end)
	_ = cb.Update().Before("gorm:update").Register("bench:start", start)
	_ = cb.Update().After("gorm:update").Register("bench:end", end)
	_ = cb.Delete().Before("gorm:delete").Register("bench:start", start)
	_ = cb.Delete().After("gorm:delete").Register("bench:end", end)
	return t
}
