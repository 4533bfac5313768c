package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"orderflow/internal/audit"
	"orderflow/internal/paysim"
	"orderflow/model"
)

// The statement step (SPEC "Provider statements"): every provider that took
// money in the run keeps its clock on the day before for the whole run, so
// each payment and refund it records lands on a day that is over. Once the
// ledger is at rest the run plants differences in the statement of the
// buyers' provider — a dropped line, an altered amount, a refund made in the
// dashboard, a payment for an order that had closed and one for an order
// that does not exist — puts the clocks back, runs the day of every
// provider through the admin API, waits for what the run set moving, and
// runs it again. The audit's statement-breaks rule then holds the ledger to
// the planted set; the step's own findings are a run that did not finish, a
// second run that listed something, a payment the ledger dates off its
// provider's day, and a planted effect missing.

// statementZones is each provider's statement calendar.
var statementZones = map[string]*time.Location{
	ProviderPaysim: time.UTC,
	ProviderAlipay: time.FixedZone("Asia/Shanghai", 8*3600),
}

// statementDay is the past day a provider's clock is kept on.
type statementDay struct {
	provider string
	day      string
	from, to time.Time // the day in UTC, [from, to)
	offset   time.Duration
}

// pastDay is yesterday in zone, and the clock offset that puts the provider
// at its 01:00 now: a run of up to 23 hours stays on that day.
func pastDay(provider string, now time.Time) statementDay {
	zone := statementZones[provider]
	y, m, d := now.In(zone).AddDate(0, 0, -1).Date()
	start := time.Date(y, m, d, 0, 0, 0, 0, zone)
	return statementDay{provider: provider, day: start.Format(time.DateOnly), from: start.UTC(), to: start.AddDate(0, 0, 1).UTC(),
		offset: start.Add(time.Hour).Sub(now)}
}

// statementProviders lists the providers that take money in the run.
func (c *cluster) statementProviders() []string {
	if c.ali != nil {
		return []string{ProviderPaysim, ProviderAlipay}
	}
	return []string{ProviderPaysim}
}

// simClient reaches the simulator directly (not through the cuttable proxy).
func (c *cluster) simClient() *paysim.Client {
	return &paysim.Client{BaseURL: c.simURL, Secret: c.paySecret, HTTP: &http.Client{Timeout: 10 * time.Second}}
}

// setClock puts the provider's clock offset from the real time (0: the
// real time).
func (c *cluster) setClock(ctx context.Context, provider string, offset time.Duration) error {
	if provider == ProviderAlipay {
		if offset == 0 {
			c.ali.fake.SetClock(nil)
		} else {
			c.ali.fake.SetClock(func() time.Time { return time.Now().Add(offset) })
		}
		return nil
	}
	if err := c.simClient().ShiftClock(ctx, offset); err != nil {
		return fmt.Errorf("paysim clock: %w", err)
	}
	return nil
}

// StatementStats are the statement step's figures.
type StatementStats struct {
	// Days are the providers' days, as reconciled.
	Days []DayStats
	// Planted lists the differences planted on purpose (the audit's
	// statement-breaks rule checks them).
	Planted []audit.PlantedBreak
	// Findings are the step's own violations.
	Findings []string
}

// DayStats is one provider's day.
type DayStats struct {
	Provider, Day string
	// Runs are the day's runs in order (the second must list nothing new).
	Runs []RunStats
	// Payments is the provider's payments in the ledger; OnDay how many of
	// them the ledger dates on the day (the provider's time for them).
	Payments, OnDay int64
	// Open and Resolved count the provider's breaks by kind after the step.
	Open, Resolved map[string]int
}

// RunStats is one statement run as the admin API reports it.
type RunStats struct {
	ID            int64            `json:"run_id"`
	Status        string           `json:"status"`
	ProviderLines int64            `json:"provider_lines"`
	Matched       int64            `json:"matched"`
	Breaks        map[string]int64 `json:"breaks"`
	Error         string           `json:"error"`
}

func (r RunStats) String() string {
	s := fmt.Sprintf("run %d %s: %d lines, %d matched, breaks %s", r.ID, r.Status, r.ProviderLines, r.Matched, kv(r.Breaks))
	if r.Error != "" {
		s += " (error: " + r.Error + ")"
	}
	return s
}

// plantedRefund is the dashboard refund planted, checked on its order.
type plantedRefund struct {
	orderNo string
	cents   int64
}

// statementStep runs the whole step. days are the providers' days the
// clocks were kept on; the buyers' provider gets the planted differences.
func (w *workload) statementStep(ctx context.Context, db *sql.DB, days []statementDay, buyers string, seed int64) *StatementStats {
	st := &StatementStats{Planted: []audit.PlantedBreak{}}
	finding := func(format string, args ...any) {
		st.Findings = append(st.Findings, fmt.Sprintf(format, args...))
		w.out.Printf("statements: FINDING: "+format, args...)
	}
	var dash *plantedRefund
	var late string // the trade paying an order that had closed
	for _, d := range days {
		if d.provider != buyers {
			continue
		}
		var p planter = simPlanter{ctx: ctx, c: w.c.simClient()}
		if d.provider == ProviderAlipay {
			p = aliPlanter{a: w.c.ali}
		}
		var err error
		if dash, late, err = w.plant(ctx, db, p, d, seed, st); err != nil {
			finding("plant at %s: %v", d.provider, err)
		}
	}
	for _, d := range days {
		if err := w.c.setClock(ctx, d.provider, 0); err != nil {
			finding("put %s's clock back: %v", d.provider, err)
		}
	}
	stats := make([]DayStats, len(days))
	for i, d := range days {
		stats[i] = DayStats{Provider: d.provider, Day: d.day}
		r, err := w.runDay(ctx, d)
		if err != nil {
			finding("%s %s: %v", d.provider, d.day, err)
		}
		stats[i].Runs = append(stats[i].Runs, r)
	}
	if late != "" {
		w.waitRefunded(ctx, db, late, finding)
	}
	for i, d := range days {
		r, err := w.runDay(ctx, d)
		if err != nil {
			finding("%s %s, second run: %v", d.provider, d.day, err)
		}
		if len(r.Breaks) > 0 {
			finding("%s %s: the second run listed %s, want nothing new", d.provider, d.day, kv(r.Breaks))
		}
		stats[i].Runs = append(stats[i].Runs, r)
		if err := w.dayFigures(ctx, db, d, &stats[i]); err != nil {
			finding("%s %s figures: %v", d.provider, d.day, err)
		}
		if off := stats[i].Payments - stats[i].OnDay; off > 0 {
			finding("%s: %d of the ledger's %d payments are dated off the provider's day %s (the ledger did not keep the provider's time)",
				d.provider, off, stats[i].Payments, d.day)
		}
	}
	st.Days = stats
	if dash != nil {
		var got int64
		if err := db.QueryRowContext(ctx, `SELECT refunded_cents FROM orders WHERE order_no = ?`, dash.orderNo).Scan(&got); err != nil {
			finding("order %s of the dashboard refund: %v", dash.orderNo, err)
		} else if got != dash.cents {
			finding("order %s: refunded_cents %d after a dashboard refund of %d cents, want %d (recorded once)", dash.orderNo, got, dash.cents, dash.cents)
		}
	}
	return st
}

// runDay runs d's day through the admin API and waits for the run to end.
func (w *workload) runDay(ctx context.Context, d statementDay) (RunStats, error) {
	var opened RunStats
	if err := w.admin(ctx, "POST", "/api/v1/admin/statements/runs", map[string]string{"provider": d.provider, "date": d.day}, &opened); err != nil {
		return opened, fmt.Errorf("open run: %w", err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		var r RunStats
		if err := w.admin(ctx, "GET", "/api/v1/admin/statements/runs/"+strconv.FormatInt(opened.ID, 10), nil, &r); err != nil {
			return r, fmt.Errorf("run %d: %w", opened.ID, err)
		}
		switch {
		case r.Status == string(model.StatementDone):
			w.out.Printf("statements: %s %s %s", d.provider, d.day, r)
			return r, nil
		case r.Status == string(model.StatementFailed):
			return r, fmt.Errorf("run %d failed: %s", r.ID, r.Error)
		case time.Now().After(deadline) || ctx.Err() != nil:
			return r, fmt.Errorf("run %d still %s after 90s", r.ID, r.Status)
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

// waitRefunded waits (bounded) for the payment of trade, which the first
// run fed to the payment path for a closed order, to be refunded, and for
// the ledger to come to rest again.
func (w *workload) waitRefunded(ctx context.Context, db *sql.DB, trade string, finding func(string, ...any)) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		var n int
		err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM refunds WHERE trade_no = ? AND status = 'succeeded'`, trade).Scan(&n)
		if err == nil && n > 0 {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			finding("the unseen payment %s of a closed order was not refunded within 60s (err %v)", trade, err)
			break
		}
		sleep(ctx, 250*time.Millisecond)
	}
	if _, ok, rest := quiesce(ctx, db, w, w.out, 60*time.Second); !ok {
		finding("the ledger did not come to rest after the statement runs: %s", rest)
	}
}
