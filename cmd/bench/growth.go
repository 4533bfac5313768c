package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// GrowthResult is the cost as the ledger grows: the end-to-end closed loop
// again after a pre-load of finished orders, and one sweep and one
// reconciliation pass over many pending orders.
type GrowthResult struct {
	Preload *PreloadResult `json:"preload,omitempty"`
	Closed  *LoadResult    `json:"closed_loop,omitempty"`
	// RatioToEmpty is the closed loop's orders/s ÷ the end-to-end phase's
	// (the same run, the ledger nearly empty then).
	RatioToEmpty float64       `json:"ratio_to_empty_ledger,omitempty"`
	Passes       *PassesResult `json:"passes,omitempty"`
}

// phaseGrowth pre-loads the ledger, runs the closed loop with phase 2's
// parameters on it, then times the passes over pending orders.
func phaseGrowth(ctx context.Context, e *benchEnv, r *Report, expected float64) error {
	p := e.params
	r.Growth = &GrowthResult{}
	need := int(1.2*expected*(p.Warmup.D()+p.Steady.D()).Seconds()) + 2000
	if p.Preload > 0 {
		if err := fixturesOnce(ctx, e); err != nil {
			return err
		}
		logf("growth: pre-loading %d finished orders and %d unsold keys", p.Preload, p.PreloadKeys)
		pre, err := preloadLedger(ctx, e, p.Preload, p.PreloadKeys)
		if err != nil {
			return err
		}
		r.Growth.Preload = pre
		logf("growth: pre-load %.1f s, ANALYZE %.1f s; rows %v", pre.Seconds, pre.AnalyzeSeconds, pre.Rows)
		s, done, err := startWithSim(ctx, e, stackConfig{label: "growth", mysqlDSN: e.dsn, redisAddr: p.RedisAddr})
		if err != nil {
			return err
		}
		if err := ensureFixtures(ctx, e, s, need, false); err != nil {
			done()
			_ = s.stop()
			return err
		}
		quiesce(ctx, e.db, "the closed loop on the grown ledger")
		b0 := scrapeBatches(ctx, e, s)
		res, err := runClosedLoop(ctx, e, e.client(s))
		if err == nil {
			res.Batches = batchSizes(b0, scrapeBatches(ctx, e, s))
		}
		serr := s.stop()
		done()
		if err != nil {
			return fmt.Errorf("closed loop on the grown ledger: %w", err)
		}
		if serr != nil {
			return serr
		}
		r.Growth.Closed = res
		if r.E2E != nil && r.E2E.Closed != nil && r.E2E.Closed.OrdersPerS > 0 {
			r.Growth.RatioToEmpty = round2(res.OrdersPerS / r.E2E.Closed.OrdersPerS)
		}
		logf("growth: closed loop %.0f orders/s (%.2f of the empty ledger's), paid→finished p50 %.1f ms p99 %.1f ms",
			res.OrdersPerS, r.Growth.RatioToEmpty, res.PaidToFinished.P50, res.PaidToFinished.P99)
	}
	if p.Pending > 0 {
		if err := fixturesOnce(ctx, e); err != nil {
			return err
		}
		t := time.Now()
		passes, err := timePasses(ctx, e, p.Pending)
		r.Growth.Passes = passes
		if err != nil {
			return err
		}
		logf("growth: passes done in %.1f s", time.Since(t).Seconds())
	}
	return nil
}

// fixturesOnce creates the buyers and products when no phase before did.
func fixturesOnce(ctx context.Context, e *benchEnv) error {
	if e.fx != nil {
		return nil
	}
	return ensureFixtures(ctx, e, nil, 0, false)
}

// dbSeconds is the pass's database time: the smaller of two upper bounds,
// the shared server's CPU over the pass (other clients' work included) and
// the sum of its statements' times (round trips and waits included).
func (pt PassTime) dbSeconds() float64 {
	if pt.MariaDBCPUSeconds > 0 && pt.MariaDBCPUSeconds < pt.StatementSeconds {
		return pt.MariaDBCPUSeconds
	}
	return pt.StatementSeconds
}

// growthRows prints phase 7.
func (r *Report) growthRows(row func(cells ...string)) {
	g := r.Growth
	if g == nil {
		return
	}
	if pre := g.Preload; pre != nil {
		row("7", fmt.Sprintf("growth: pre-load %d finished orders + %d unsold keys", pre.Orders, pre.UnsoldKeys), fmt.Sprintf("%.1f s", pre.Seconds),
			fmt.Sprintf("set-based INSERT … SELECT in chunks of %d; ANALYZE %.1f s; rows after: %s", preloadChunk, pre.AnalyzeSeconds, rowCounts(pre.Rows)))
	}
	if c := g.Closed; c != nil {
		ratio := "n/a (no end-to-end phase in this run)"
		if g.RatioToEmpty > 0 {
			ratio = fmt.Sprintf("%.2f of the empty ledger's %.0f orders/s", g.RatioToEmpty, r.E2E.Closed.OrdersPerS)
		}
		row("7", "  closed loop on the grown ledger (phase 2's parameters)", fmt.Sprintf("%.0f orders/s", c.OrdersPerS),
			fmt.Sprintf("%s; %d orders, %d client errors", ratio, c.Orders, c.ClientErrors))
		row("", "  paid→finished p50 / p95 / p99", q3(c.PaidToFinished), fmt.Sprintf("max %.0f ms (n=%d)", c.PaidToFinished.Max, c.PaidToFinished.N))
		row("", "  activation batch sizes", "grown ledger", c.Batches.String())
	}
	if ps := g.Passes; ps != nil {
		for _, v := range []struct {
			name string
			pt   PassTime
		}{{"sweep pass (every walk to its end)", ps.Sweep}, {"reconciliation pass", ps.Reconcile}} {
			closed := ""
			if v.pt.Closed > 0 {
				closed = fmt.Sprintf(", closed %d", v.pt.Closed)
			}
			row("7", fmt.Sprintf("  %s over %d pending orders", v.name, ps.Pending), fmt.Sprintf("%.2f s wall", v.pt.WallSeconds),
				fmt.Sprintf("database %.2f s: mariadbd %.2f CPU s (shared server), %d statements %.2f s; checked %d, re-queued %d%s",
					v.pt.dbSeconds(), v.pt.MariaDBCPUSeconds, v.pt.Statements, v.pt.StatementSeconds, v.pt.Checked, v.pt.Requeued, closed))
		}
		row("", "  pending orders: set up / removed", fmt.Sprintf("%.1f / %.1f s", ps.SetupSeconds, ps.CleanupSeconds), "each with its close task live in asynq (due in an hour), as between sweeps")
	}
}

// rowCounts renders "orders 1000229, events …" in preloadTables' order.
func rowCounts(m map[string]int64) string {
	parts := make([]string, 0, len(m))
	for _, t := range preloadTables {
		parts = append(parts, fmt.Sprintf("%s %d", t, m[t]))
	}
	return strings.Join(parts, ", ")
}
