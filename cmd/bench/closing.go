package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// CloseResult is the timeout-close burst: N orders created to expire in the
// same second and closed by order:close tasks at their expiry.
type CloseResult struct {
	Orders         int       `json:"orders"`
	OrderTTL       string    `json:"order_ttl"`
	CreateSpreadS  float64   `json:"create_spread_s"`    // first to last created_at
	ExpireSeconds  int       `json:"distinct_expire_s"`  // distinct whole seconds the expiries fall in
	AllClosedS     float64   `json:"all_closed_after_s"` // last closed_at − first expire_at
	AfterLastExpS  float64   `json:"after_last_expire_s"`
	Lag            Quantiles `json:"lag"`                // closed_at − expire_at
	LagAfterSecond Quantiles `json:"lag_after_schedule"` // closed_at − the whole second the task was scheduled at
	Closed         int       `json:"closed"`
}

func runCloseBurst(ctx context.Context, e *benchEnv, c *apiClient) (*CloseResult, error) {
	p := e.params
	idBefore, err := queryInt(ctx, e.db, `SELECT COALESCE(MAX(id), 0) FROM orders`)
	if err != nil {
		return nil, err
	}
	var failed atomic.Int64
	err = parallel(ctx, p.CloseOrders, 64, func(ctx context.Context, i int) error {
		if _, err := c.createOrder(ctx, e.fx.buyer(), e.fx.anyProduct()); err != nil {
			if failed.Add(1) == 1 {
				return fmt.Errorf("create order %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := &CloseResult{Orders: p.CloseOrders, OrderTTL: p.OrderTTL.D().String()}
	var first, last, firstExp, lastExp time.Time
	if err := e.db.QueryRowContext(ctx, `SELECT MIN(created_at), MAX(created_at), MIN(expire_at), MAX(expire_at) FROM orders WHERE id > ?`, idBefore).
		Scan(&first, &last, &firstExp, &lastExp); err != nil {
		return nil, err
	}
	res.CreateSpreadS = round2(last.Sub(first).Seconds())
	n, err := queryInt(ctx, e.db, `SELECT COUNT(DISTINCT CEIL(UNIX_TIMESTAMP(expire_at))) FROM orders WHERE id > ?`, idBefore)
	if err != nil {
		return nil, err
	}
	res.ExpireSeconds = int(n)
	// Wait for the burst: every order pending → closed.
	deadline := lastExp.Add(60 * time.Second)
	for {
		left, err := queryInt(ctx, e.db, `SELECT COUNT(*) FROM orders WHERE status = 1 AND id > ?`, idBefore)
		if err != nil {
			return nil, err
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d orders still pending 60 s after the last expiry", left, p.CloseOrders)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rows, err := e.db.QueryContext(ctx, `SELECT expire_at, closed_at FROM orders WHERE id > ? AND status = 3`, idBefore)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var lag, lagSched []time.Duration
	var lastClosed time.Time
	for rows.Next() {
		var exp, closed time.Time
		if err := rows.Scan(&exp, &closed); err != nil {
			return nil, err
		}
		lag = append(lag, closed.Sub(exp))
		sched := exp.Truncate(time.Second)
		if sched.Before(exp) {
			sched = sched.Add(time.Second)
		}
		lagSched = append(lagSched, closed.Sub(sched))
		if closed.After(lastClosed) {
			lastClosed = closed
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	res.Closed = len(lag)
	res.Lag, res.LagAfterSecond = percentiles(lag), percentiles(lagSched)
	res.AllClosedS = round2(lastClosed.Sub(firstExp).Seconds())
	res.AfterLastExpS = round2(lastClosed.Sub(lastExp).Seconds())
	if res.Closed != p.CloseOrders {
		return res, fmt.Errorf("%d of %d orders closed (others: %d create failures or another status)", res.Closed, p.CloseOrders, failed.Load())
	}
	return res, nil
}

// phaseCloseAndGroup runs phases 3 and 4 on a start with a short order TTL.
func phaseCloseAndGroup(ctx context.Context, e *benchEnv, r *Report) error {
	p := e.params
	if err := ensureFixtures(ctx, e, nil, p.CloseOrders+100, true); err != nil {
		return err
	}
	s, done, err := startWithSim(ctx, e, stackConfig{label: "close", mysqlDSN: e.dsn, redisAddr: p.RedisAddr,
		env: []string{"ORDERFLOW_ORDER_TTL=" + p.OrderTTL.D().String()}})
	if err != nil {
		return err
	}
	defer done()
	c := e.client(s)
	var errs []string
	if p.runs("close") {
		logf("phase 3: %d orders expiring together (ttl %s)", p.CloseOrders, p.OrderTTL.D())
		lo, _ := queryInt(ctx, e.db, `SELECT COALESCE(MAX(id), 0) FROM orders`)
		if p.Profile != "" { // the burst: from the first expiry (creating takes ~1 s) for 2 s
			dir := filepath.Join(p.Profile, "close")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			defer captureProfiles(ctx, e, s, "close", dir, time.Now().Add(p.OrderTTL.D()+time.Second), 2*time.Second)()
		}
		r.Close, err = runCloseBurst(ctx, e, c)
		hi, _ := queryInt(ctx, e.db, `SELECT COALESCE(MAX(id), 0) FROM orders`)
		e.closeIDs = [2]int64{lo, hi}
		if err != nil {
			errs = append(errs, "close: "+err.Error())
		} else {
			logf("close: lag p50 %.0f ms p99 %.0f ms", r.Close.Lag.P50, r.Close.Lag.P99)
		}
	}
	if p.runs("group") {
		logf("phase 4: group of %d settling at its deadline", p.GroupSize)
		if r.Group, err = runGroupSettle(ctx, e, c); err != nil {
			errs = append(errs, "group: "+err.Error())
		} else {
			logf("group: settled %.3f s after the deadline", r.Group.CommittedS)
		}
	}
	if err := s.stop(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
