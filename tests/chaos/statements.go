package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"orderflow/internal/audit"
	"orderflow/internal/domain/statement"
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

// planter makes the planted differences at one provider.
type planter interface {
	StatementDrop(ref string) error
	StatementAlter(ref string, cents int64) error
	DashboardRefund(orderNo string, cents int64) (string, error)
	PayUnseen(orderNo string, cents int64) (string, error)
}

// simPlanter plants at the simulator over its admin routes.
type simPlanter struct {
	ctx context.Context
	c   *paysim.Client
}

func (p simPlanter) StatementDrop(ref string) error { return p.c.StatementDrop(p.ctx, ref) }
func (p simPlanter) StatementAlter(ref string, cents int64) error {
	return p.c.StatementAlter(p.ctx, ref, cents)
}
func (p simPlanter) DashboardRefund(no string, cents int64) (string, error) {
	return p.c.DashboardRefund(p.ctx, no, cents)
}
func (p simPlanter) PayUnseen(no string, cents int64) (string, error) {
	return p.c.PayUnseen(p.ctx, no, cents)
}

// aliPlanter plants at the in-process Alipay fake.
type aliPlanter struct{ a *alipayRig }

func (p aliPlanter) StatementDrop(ref string) error { p.a.fake.StatementDrop(ref); return nil }
func (p aliPlanter) StatementAlter(ref string, cents int64) error {
	p.a.fake.StatementAlter(ref, cents)
	return nil
}
func (p aliPlanter) DashboardRefund(no string, cents int64) (string, error) {
	return p.a.fake.DashboardRefund(no, cents)
}
func (p aliPlanter) PayUnseen(no string, cents int64) (string, error) {
	return p.a.fake.PayUnseen(no, cents)
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

// delivered is a delivered order paid by one trade at a provider.
type delivered struct {
	orderNo, trade string
	cents          int64
}

// plant makes the planted differences at d's provider, seeded, and returns
// the dashboard refund and the trade of the unseen payment of a closed order.
func (w *workload) plant(ctx context.Context, db *sql.DB, p planter, d statementDay, seed int64, st *StatementStats) (*plantedRefund, string, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 33))
	var ds []delivered
	err := query(ctx, db, func(r *sql.Rows) error {
		var x delivered
		err := r.Scan(&x.orderNo, &x.trade, &x.cents)
		ds = append(ds, x)
		return err
	}, `SELECT o.order_no, p.trade_no, p.amount_cents FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE p.provider = ? AND p.disposition = ? AND o.status = ? AND o.trade_no = p.trade_no AND o.refunded_cents = 0
		AND p.paid_at >= ? AND p.paid_at < ?
		AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.order_id = o.id)
		AND NOT EXISTS (SELECT 1 FROM payments q WHERE q.order_id = o.id AND q.id <> p.id)
		AND NOT EXISTS (SELECT 1 FROM disputes x WHERE x.order_id = o.id)
		ORDER BY o.id`, d.provider, model.PaymentApplied, model.OrderFinished, d.from, d.to)
	if err != nil {
		return nil, "", fmt.Errorf("delivered orders: %w", err)
	}
	var closed []delivered
	err = query(ctx, db, func(r *sql.Rows) error {
		var x delivered
		err := r.Scan(&x.orderNo, &x.cents)
		closed = append(closed, x)
		return err
	}, `SELECT o.order_no, o.amount_cents FROM orders o WHERE o.status = ? AND o.amount_cents > 0
		AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id) ORDER BY o.id`, model.OrderClosed)
	if err != nil {
		return nil, "", fmt.Errorf("closed orders: %w", err)
	}
	if len(ds) < 3 || len(closed) < 1 {
		return nil, "", fmt.Errorf("%d delivered orders paid at %s and %d closed unpaid ones: want 3 and 1", len(ds), d.provider, len(closed))
	}
	rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	rng.Shuffle(len(closed), func(i, j int) { closed[i], closed[j] = closed[j], closed[i] })
	add := func(what, kind string, x delivered, status model.BreakStatus, refundedOnce bool) {
		st.Planted = append(st.Planted, audit.PlantedBreak{What: what, Provider: d.provider, Kind: kind, TradeNo: x.trade, OrderNo: x.orderNo,
			Status: status, RefundedOnce: refundedOnce})
		w.out.Printf("statements: planted at %s: %s (order %s, trade %s, %d cents)", d.provider, what, x.orderNo, x.trade, x.cents)
	}

	drop := ds[0]
	if err := p.StatementDrop(drop.trade); err != nil {
		return nil, "", fmt.Errorf("drop %s: %w", drop.trade, err)
	}
	add("dropped line", statement.BreakMissingPayment, drop, model.BreakOpen, false)

	alter := ds[1]
	altered := alter.cents + 1 + int64(rng.IntN(99))
	if err := p.StatementAlter(alter.trade, altered); err != nil {
		return nil, "", fmt.Errorf("alter %s: %w", alter.trade, err)
	}
	add(fmt.Sprintf("amount altered to %d", altered), statement.BreakAmountMismatch, alter, model.BreakOpen, false)

	refunded := ds[2]
	cents := 1 + int64(rng.IntN(int(refunded.cents)))
	if _, err := p.DashboardRefund(refunded.orderNo, cents); err != nil {
		return nil, "", fmt.Errorf("dashboard refund of %s: %w", refunded.orderNo, err)
	}
	add(fmt.Sprintf("dashboard refund of %d cents", cents), statement.BreakUnknownRefund, refunded, model.BreakOpen, false)
	dash := &plantedRefund{orderNo: refunded.orderNo, cents: cents}

	var late string
	for _, x := range closed[:min(len(closed), 5)] {
		trade, err := p.PayUnseen(x.orderNo, x.cents)
		if err != nil {
			w.out.Printf("statements: unseen payment of closed order %s refused (%v); trying another", x.orderNo, err)
			continue
		}
		x.trade, late = trade, trade
		add("unseen payment of a closed order", statement.BreakUnknownPayment, x, model.BreakResolved, true)
		break
	}
	if late == "" {
		return dash, "", fmt.Errorf("no closed order took an unseen payment")
	}
	foreign := delivered{orderNo: "CHAOS-NOT-OURS-" + strconv.FormatInt(seed, 10), cents: 100 + int64(rng.IntN(900))}
	trade, err := p.PayUnseen(foreign.orderNo, foreign.cents)
	if err != nil {
		return dash, late, fmt.Errorf("unseen payment of no order: %w", err)
	}
	foreign.trade = trade
	add("unseen payment of no order of ours", statement.BreakUnknownPayment, foreign, model.BreakOpen, false)
	return dash, late, nil
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

// dayFigures reads the provider's payments on the day and its breaks.
func (w *workload) dayFigures(ctx context.Context, db *sql.DB, d statementDay, s *DayStats) error {
	err := db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(paid_at >= ? AND paid_at < ?), 0) FROM payments WHERE provider = ?`,
		d.from, d.to, d.provider).Scan(&s.Payments, &s.OnDay)
	if err != nil {
		return err
	}
	var list struct {
		Breaks []struct {
			Kind   string `json:"kind"`
			Status string `json:"status"`
		} `json:"breaks"`
	}
	if err := w.admin(ctx, "GET", "/api/v1/admin/statements/breaks?provider="+d.provider, nil, &list); err != nil {
		return err
	}
	s.Open, s.Resolved = map[string]int{}, map[string]int{}
	for _, b := range list.Breaks {
		if b.Status == string(model.BreakOpen) {
			s.Open[b.Kind]++
		} else {
			s.Resolved[b.Kind]++
		}
	}
	return nil
}

// query runs a query and scans each row.
func query(ctx context.Context, db *sql.DB, scan func(*sql.Rows) error, q string, args ...any) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// print writes the step's figures.
func (s *StatementStats) print(w io.Writer) {
	fmt.Fprintf(w, "\nstatements (each provider's clock on the day before for the whole run; differences planted, then the day run twice):\n")
	for _, d := range s.Days {
		fmt.Fprintf(w, "  %s %s: ledger payments dated on the day %d of %d\n", d.Provider, d.Day, d.OnDay, d.Payments)
		for _, r := range d.Runs {
			fmt.Fprintf(w, "    %s\n", r)
		}
		fmt.Fprintf(w, "    breaks open: %s; resolved: %s\n", kv(d.Open), kv(d.Resolved))
	}
	planted := make([]string, len(s.Planted))
	for i, p := range s.Planted {
		planted[i] = p.String()
	}
	slices.Sort(planted)
	fmt.Fprintf(w, "  planted: %d\n", len(planted))
	for _, p := range planted {
		fmt.Fprintf(w, "    %s\n", p)
	}
	printFirst(w, "statement step findings", s.Findings)
}

// describe is a one-line summary for progress lines.
func (s *StatementStats) describe() string {
	var parts []string
	for _, d := range s.Days {
		for i, r := range d.Runs {
			parts = append(parts, fmt.Sprintf("%s run %d: %d lines, %d matched, breaks %s", d.Provider, i+1, r.ProviderLines, r.Matched, kv(r.Breaks)))
		}
	}
	return strings.Join(parts, "; ")
}
