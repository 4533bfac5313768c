// Package chaos runs orderflow as separate OS processes — a private MariaDB
// and Redis, the payment simulator, two API processes and several workers —
// under a mixed workload while it injects faults on a seeded schedule
// (kill -9 of workers and APIs, Redis restarted empty, MariaDB killed and
// restarted, the provider unreachable or hung). Then it heals everything,
// waits (bounded) for quiescence, reconciles each provider's statement of
// the day (differences planted on purpose, statements.go), audits the whole
// ledger and checks that every write a client was told about is in it.
//
// The shared MariaDB and Redis are never touched: the run starts its own
// on spare ports and may kill, restart and wipe them freely.
package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"orderflow/internal/audit"
	"orderflow/internal/testenv/child"
	"orderflow/model"
)

// Binaries are the commands a run starts as child processes.
var Binaries = []string{"api", "queue", "cmd/paysim"}

// Config tunes a run.
type Config struct {
	// Seed draws the fault schedule and the workload; the same seed gives the
	// same schedule (the interleavings are the machine's).
	Seed int64
	// Short is the fast-tier run: under two minutes, every fault kind once.
	Short bool
	// Duration is how long the workload runs (0: 150 s, or 40 s when Short).
	Duration time.Duration
	// Workers is the number of queue processes (0: 3, or 2 when Short).
	Workers int
	// Clients is the number of concurrent workload clients (0: 8, or 6 when Short).
	Clients int
	// BinDir holds prebuilt Binaries; empty builds them.
	BinDir string
	// WorkDir keeps logs (empty: a temporary directory, removed after a
	// passing run unless Keep).
	WorkDir string
	// Keep leaves the logs and the MariaDB data directory in place.
	Keep bool
	// HA runs on a 3-node Galera cluster and a Redis Sentinel group, with
	// their own faults (ha.go) instead of the single servers' ones.
	HA bool
	// Provider is how buyers pay: ProviderPaysim (the default: the
	// simulator only) or ProviderAlipay (checkout at the Alipay fake, its
	// signed notifications, some lost; further trades by the simulator).
	Provider string
	// Out receives progress lines (nil: discarded).
	Out io.Writer
}

func (c *Config) defaults() {
	if c.Duration == 0 {
		c.Duration = 150 * time.Second
		if c.HA {
			c.Duration = 100 * time.Second
		}
		if c.Short {
			c.Duration = 40 * time.Second
		}
	}
	if c.Workers == 0 {
		c.Workers = 3
		if c.Short {
			c.Workers = 2
		}
	}
	if c.Clients == 0 {
		c.Clients = 8
		if c.Short {
			c.Clients = 6
		}
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.Provider == "" {
		c.Provider = ProviderPaysim
	}
}

// progress prefixes lines with the time since the run started.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (p *progress) Printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[chaos %6.1fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// Report is the outcome of a run.
type Report struct {
	Seed     int64
	Short    bool
	HA       bool
	Provider string
	Workload time.Duration
	Workers  int
	// Faults counts injections per kind; FaultLog lists them in order.
	Faults   map[string]int
	FaultLog []string
	// Scenarios counts each workload scenario's runs.
	Scenarios map[string]ScenarioStats
	// Acked counts acknowledged writes per kind (orders, payments, …).
	Acked map[string]int
	// Outcomes is orders by kind and final status.
	Outcomes []OutcomeRow
	// Payments by disposition, refunds and groups by status.
	Payments, Refunds, Groups map[string]int64
	// Operator counts the operator's actions.
	Operator map[string]int
	// Refusals counts final 4xx answers the workload got, by step and code,
	// and steps given up when their retry budget ran out ("gave up: …").
	Refusals map[string]int
	// Recoveries counts how often each repair path ran (from the logs).
	Recoveries map[string]int
	// Starts and Unplanned count process starts and exits nobody asked for.
	Starts, Unplanned map[string]int
	// Notifications the webhook received.
	Notifications int64
	// Lost lists acknowledged writes missing from the ledger.
	Lost []string
	// Stale lists orders whose buyer view (API, cache) disagrees with the ledger at rest.
	Stale []string
	// Contract lists the API's exchanges that broke its OpenAPI document.
	Contract []string
	// Panics lists panics and data races found in the process logs.
	Panics []string
	// Takeover times, per worker kill, how long until every order the
	// worker held was done by another process.
	Takeover TakeoverStats
	// TimeToHeal runs from the end of the last fault until every object is
	// terminal or holds a live task and every stock counter equals the
	// ledger (Healed: within the bound); HealBound is two sweep intervals.
	TimeToHeal time.Duration
	Healed     bool
	HealBound  time.Duration
	HealRest   string
	// Quiesced is whether the ledger came to rest within the bound.
	Quiesced         bool
	TimeToQuiescence time.Duration
	Rest             string
	// Audit is the ledger audit after quiescence.
	Audit *audit.Report
	Total time.Duration
	// HANotes describes an HA run's Galera kills, failovers and cuts.
	HANotes []string
	// Alipay holds an Alipay run's own figures (nil otherwise).
	Alipay *AlipayStats
	// Statements holds the statement step's figures (statements.go).
	Statements *StatementStats
	// LogDir holds every process's log.
	LogDir string
}

// MissingFaults lists fault kinds the run never injected.
func (r *Report) MissingFaults() []string {
	var out []string
	for _, k := range kindsFor(r.Short, r.HA) {
		if r.Faults[k] == 0 {
			out = append(out, k)
		}
	}
	return out
}

// Violations counts audit violations, lost writes and panics.
func (r *Report) Violations() int {
	n := len(r.Lost) + len(r.Panics) + len(r.Stale) + len(r.Contract) + len(r.Takeover.Pending)
	if r.Audit != nil {
		n += r.Audit.Violations()
	}
	if r.Statements != nil {
		n += len(r.Statements.Findings)
	}
	return n
}

// Pass reports whether the run met the bar: quiescence reached, every fault
// kind injected, audit run with 0 violations, nothing lost, no panics.
func (r *Report) Pass() bool {
	return r.Quiesced && r.Audit != nil && r.Violations() == 0 && len(r.MissingFaults()) == 0 &&
		r.Healed && r.TimeToHeal <= r.HealBound
}

// Run performs one chaos run. An error means the run could not be carried
// out (the setup failed); a run that found problems returns a Report whose
// Pass is false.
func Run(ctx context.Context, cfg Config) (rep *Report, err error) {
	cfg.defaults()
	started := time.Now()
	out := &progress{w: cfg.Out, start: started}
	rep = &Report{Seed: cfg.Seed, Short: cfg.Short, HA: cfg.HA, Provider: cfg.Provider, Workload: cfg.Duration, Workers: cfg.Workers}
	if cfg.Provider != ProviderPaysim && cfg.Provider != ProviderAlipay {
		return nil, fmt.Errorf("provider %q: want %s or %s", cfg.Provider, ProviderPaysim, ProviderAlipay)
	}

	dir := cfg.WorkDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "orderflow-chaos-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rep.LogDir = dir
	datadir := filepath.Join(dir, "mariadb-data")
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		// In memory: a kill -9 of the server keeps it, and it is much faster.
		if d, err := os.MkdirTemp("/dev/shm", "orderflow-chaos-db-"); err == nil {
			datadir = d
		}
	}
	bin := cfg.BinDir
	if bin == "" {
		bin = filepath.Join(dir, "bin")
		out.Printf("building %v into %s", Binaries, bin)
		if err := child.Build(ctx, bin, Binaries...); err != nil {
			return nil, err
		}
	}
	out.Printf("seed %d, workload %s, %d workers, %d clients, logs in %s", cfg.Seed, cfg.Duration, cfg.Workers, cfg.Clients, dir)

	c, err := startCluster(ctx, clusterConfig{dir: dir, datadir: datadir, bin: bin, seed: cfg.Seed, workers: cfg.Workers, ha: cfg.HA,
		provider: cfg.Provider, out: out})
	defer func() {
		if c != nil {
			c.stop()
		}
		if !cfg.Keep {
			_ = os.RemoveAll(datadir)
			if rep != nil && rep.Pass() && cfg.WorkDir == "" {
				_ = os.RemoveAll(dir)
			}
		}
		if rep != nil {
			rep.Total = time.Since(started)
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("start cluster (logs in %s): %w", dir, err)
	}
	out.Printf("cluster up: %d APIs, %d workers, simulator :%d behind proxy %s", len(c.apis), len(c.workers), c.simPort, c.proxy.Addr())
	if c.ali != nil {
		out.Printf("alipay fake :%d behind proxy %s, notifications through the relay %s", c.ali.gwPort, c.ali.proxy.Addr(), c.ali.relayLn.Addr())
	}

	// Every provider's clock stays on the day before for the whole run, so
	// what each records lands on a statement day that is over (statements.go).
	var days []statementDay
	for _, p := range c.statementProviders() {
		d := pastDay(p, time.Now())
		if err := c.setClock(ctx, p, d.offset); err != nil {
			return nil, err
		}
		days = append(days, d)
		out.Printf("%s's clock set to its day %s (offset %s)", p, d.day, d.offset.Round(time.Second))
	}

	w, err := newWorkload(cfg.Seed, c, out)
	if err != nil {
		return nil, err
	}
	if err := w.setup(ctx, 24); err != nil {
		return nil, fmt.Errorf("workload setup: %w", err)
	}

	faults := schedule(cfg.Seed, cfg.Duration, cfg.Short, len(c.workers), len(c.apis))
	if cfg.HA {
		faults = haSchedule(cfg.Seed, cfg.Duration, len(c.workers), len(c.apis))
	}
	inj := &injector{c: c, out: out, seed: cfg.Seed, injected: map[string]int{}}
	loadStart := time.Now()
	var faultsDone sync.WaitGroup
	faultsDone.Add(1)
	rep.HealBound = 2 * sweepEvery
	go func() {
		defer faultsDone.Done()
		inj.run(ctx, loadStart, faults)
		// The last fault is always a partial Redis loss with the epoch
		// marker kept — what only the sweep heals — so time to heal
		// measures the sweep, not the tail of whatever fault came last.
		last := fault{at: time.Since(loadStart), kind: FaultRedisPartial, share: 0.5}
		if cfg.HA {
			// On Sentinel the same loss comes from a failover to a replica
			// that had not received the last writes.
			last = fault{at: time.Since(loadStart), kind: FaultRedisFailover, down: 1500 * time.Millisecond}
		}
		inj.inject(ctx, last)
		// Time to heal counts from here, while the workload may still run.
		db, err := audit.Open(c.dsn)
		if err != nil {
			rep.HealRest = err.Error()
			return
		}
		defer db.Close()
		rdb := c.redisClient()
		defer rdb.Close()
		out.Printf("last fault healed; measuring time to heal")
		var h healState
		rep.TimeToHeal, rep.Healed, h = timeToHeal(ctx, db, rdb, time.Now(), 60*time.Second)
		rep.HealRest = h.String()
		out.Printf("time to heal %s (healed %v): %s", rep.TimeToHeal.Round(10*time.Millisecond), rep.Healed, rep.HealRest)
	}()
	out.Printf("workload and %d faults running for %s", len(faults), cfg.Duration)
	w.run(ctx, cfg.Clients, loadStart.Add(cfg.Duration))
	out.Printf("workload done; waiting for the last faults to heal")
	faultsDone.Wait()
	rep.Faults, rep.FaultLog = inj.counts(), inj.log
	rep.Takeover = inj.takeovers.stats()
	if inj.rdb != nil {
		inj.rdb.Close()
	}
	out.Printf("%s", rep.Takeover)
	if c.ha != nil {
		c.ha.mu.Lock()
		rep.HANotes = append([]string{}, c.ha.notes...)
		c.ha.mu.Unlock()
	}

	out.Printf("healing everything")
	if err := c.heal(ctx); err != nil {
		return rep, fmt.Errorf("heal: %w", err)
	}
	if c.ali != nil {
		if n := w.redeliverAlipay(ctx); n > 0 {
			out.Printf("alipay: %d unacknowledged payment notifications sent again (Alipay's retry schedule)", n)
		}
	}
	db, err := audit.Open(c.dsn)
	if err != nil {
		return rep, err
	}
	defer db.Close()
	bound := 120 * time.Second
	if cfg.Short {
		bound = 60 * time.Second
	}
	var rest restState
	rep.TimeToQuiescence, rep.Quiesced, rest = quiesce(ctx, db, w, out, bound)
	rep.Rest = rest.String()
	if rep.Quiesced {
		out.Printf("quiescent after %s; waiting one reconciliation period before the audit", rep.TimeToQuiescence.Round(100*time.Millisecond))
		sleep(ctx, 6*time.Second)
		if s, err := readRest(ctx, db); err != nil || !s.quiet() {
			rep.Quiesced = false
			rep.Rest = fmt.Sprintf("moved again after quiescence: %s (err %v)", s, err)
		}
	} else {
		out.Printf("NOT quiescent after %s: %s", bound, rest)
	}

	rep.Statements = w.statementStep(ctx, db, days, cfg.Provider, cfg.Seed)
	out.Printf("statements: %s", rep.Statements.describe())

	rdb := c.redisClient()
	defer rdb.Close()
	provider, err := c.providerRefunds(ctx)
	if err != nil {
		return rep, err
	}
	if rep.Audit, err = audit.Run(ctx, audit.Options{DB: db, Redis: rdb, Provider: provider, Grace: 2 * time.Second,
		Planted: rep.Statements.Planted}); err != nil {
		return rep, err
	}
	if rep.Lost, err = lostWrites(ctx, db, w.hist); err != nil {
		return rep, err
	}
	over, err := refundsOverPaid(ctx, db, w.hist)
	if err != nil {
		return rep, err
	}
	rep.Lost = append(rep.Lost, over...)
	if rep.Stale, err = staleViews(ctx, db, w); err != nil {
		return rep, err
	}
	rep.Panics = c.panics()
	rep.Contract = w.http.contractViolations()
	rep.Recoveries = c.recoveries()
	if err := collect(ctx, db, rep); err != nil {
		return rep, err
	}
	w.mu.Lock()
	rep.Scenarios = map[string]ScenarioStats{}
	for k, v := range w.stats {
		rep.Scenarios[k] = *v
	}
	rep.Operator = w.operator
	rep.Refusals = w.refusals
	w.mu.Unlock()
	if c.ali != nil {
		var missing []string
		if rep.Alipay, missing, err = alipayFigures(ctx, db, c.ali, w); err != nil {
			return rep, err
		}
		rep.Lost = append(rep.Lost, missing...)
	}
	w.hist.mu.Lock()
	joins := 0
	for _, ids := range w.hist.joins {
		joins += len(ids)
	}
	rep.Acked = map[string]int{"orders created": len(w.hist.orders), "payments": len(w.hist.payments),
		"cancels": len(w.hist.cancels), "groups created": len(w.hist.groups), "group joins": joins}
	w.hist.mu.Unlock()
	rep.Starts, rep.Unplanned = map[string]int{}, map[string]int{}
	for _, p := range c.all() {
		s, u, _ := p.Counts()
		rep.Starts[p.name], rep.Unplanned[p.name] = s, u
	}
	rep.Notifications = c.notified.Load()
	return rep, nil
}

// collect reads the run's outcome counts from the ledger.
func collect(ctx context.Context, db *sql.DB, rep *Report) error {
	rows, err := db.QueryContext(ctx, `SELECT kind, status, COUNT(*) FROM orders GROUP BY kind, status ORDER BY kind, status`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var o OutcomeRow
		var st int
		if err := rows.Scan(&o.Kind, &st, &o.N); err != nil {
			rows.Close()
			return err
		}
		o.Status = model.OrderStatus(st).String()
		rep.Outcomes = append(rep.Outcomes, o)
	}
	rows.Close()
	if rep.Payments, err = tally(ctx, db, `SELECT disposition, COUNT(*) FROM payments GROUP BY disposition`); err != nil {
		return err
	}
	if rep.Refunds, err = tally(ctx, db, `SELECT status, COUNT(*) FROM refunds GROUP BY status`); err != nil {
		return err
	}
	rep.Groups, err = tally(ctx, db, "SELECT status, COUNT(*) FROM `groups` GROUP BY status")
	return err
}

// Print writes the report.
func (r *Report) Print(w io.Writer) {
	mode := "full"
	if r.Short {
		mode = "short"
	}
	fmt.Fprintf(w, "\n==================== orderflow chaos report ====================\n")
	fmt.Fprintf(w, "seed %d (%s), provider %s, workload %s, %d workers, total %s, logs %s\n", r.Seed, mode, r.Provider, r.Workload, r.Workers, r.Total.Round(time.Second), r.LogDir)

	fmt.Fprintf(w, "\nfaults injected:\n")
	for _, k := range kindsFor(r.Short, r.HA) {
		fmt.Fprintf(w, "  %-16s %d\n", k, r.Faults[k])
	}
	for _, l := range r.FaultLog {
		fmt.Fprintf(w, "    %s\n", l)
	}
	if r.HA {
		r.printHA(w)
	}

	fmt.Fprintf(w, "\nworkload scenarios:\n  %-22s %8s %9s %8s %8s\n", "scenario", "started", "completed", "refused", "gave up")
	for _, s := range Scenarios {
		st, played := r.Scenarios[s]
		if !played && !r.HA && s == scCancelTwoPays {
			continue // HA only
		}
		fmt.Fprintf(w, "  %-22s %8d %9d %8d %8d\n", s, st.Started, st.Completed, st.Refused, st.GaveUp)
	}
	fmt.Fprintf(w, "refused (final 4xx) / gave up: %s\n", kv(r.Refusals))
	fmt.Fprintf(w, "acknowledged writes: %s\n", kv(r.Acked))

	fmt.Fprintf(w, "\norders by kind and outcome:\n")
	kinds := map[string]map[string]int64{}
	statuses := map[string]bool{}
	for _, o := range r.Outcomes {
		if kinds[o.Kind] == nil {
			kinds[o.Kind] = map[string]int64{}
		}
		kinds[o.Kind][o.Status] = o.N
		statuses[o.Status] = true
	}
	cols := sortedStrings(statuses)
	fmt.Fprintf(w, "  %-14s", "kind")
	for _, s := range cols {
		fmt.Fprintf(w, " %9s", s)
	}
	fmt.Fprintf(w, " %9s\n", "total")
	for _, k := range sortedStrings(kinds) {
		fmt.Fprintf(w, "  %-14s", k)
		var total int64
		for _, s := range cols {
			fmt.Fprintf(w, " %9d", kinds[k][s])
			total += kinds[k][s]
		}
		fmt.Fprintf(w, " %9d\n", total)
	}
	fmt.Fprintf(w, "payments by disposition: %s\n", kv(r.Payments))
	fmt.Fprintf(w, "refunds by status: %s\n", kv(r.Refunds))
	fmt.Fprintf(w, "groups by status: %s\n", kv(r.Groups))
	fmt.Fprintf(w, "operator actions: %s\n", kv(r.Operator))
	fmt.Fprintf(w, "repair paths exercised: %s\n", kv(r.Recoveries))
	fmt.Fprintf(w, "notifications delivered to the webhook: %d\n", r.Notifications)
	if a := r.Alipay; a != nil {
		fmt.Fprintf(w, "alipay: %d checkouts, %d orders paid at the fake (%d with the notification lost); notifications relayed %d, payment notifications dropped %d, refund callback tries dropped %d\n",
			a.Checkouts, a.Paid, a.Lost, a.Relayed, a.PayNotifyDropped, a.RefundNotifyDropped)
		fmt.Fprintf(w, "alipay refunds: %d recorded by the fake, %d trade.refund calls (at most %d for one out_request_no; %d left unanswered on purpose)\n",
			a.Refunds, a.RefundCalls, a.MaxSends, a.TimedOut)
	}
	fmt.Fprintf(w, "process starts: %s\n", kv(r.Starts))
	fmt.Fprintf(w, "unplanned exits (restarted by the supervisor): %s\n", kv(r.Unplanned))

	fmt.Fprintf(w, "\n%s\n", r.Takeover)
	fmt.Fprintf(w, "\ntime to heal after the last fault: ")
	if r.Healed {
		fmt.Fprintf(w, "%s (bound: 2 sweep intervals = %s)\n", r.TimeToHeal.Round(10*time.Millisecond), r.HealBound)
	} else {
		fmt.Fprintf(w, "NOT healed within %s: %s\n", r.TimeToHeal.Round(time.Second), r.HealRest)
	}

	fmt.Fprintf(w, "\nquiescence: ")
	if r.Quiesced {
		fmt.Fprintf(w, "reached in %s\n", r.TimeToQuiescence.Round(100*time.Millisecond))
	} else {
		fmt.Fprintf(w, "NOT reached (%s): %s\n", r.TimeToQuiescence.Round(time.Second), r.Rest)
	}

	if r.Statements != nil {
		r.Statements.print(w)
	}

	fmt.Fprintf(w, "\nledger audit:\n")
	if r.Audit != nil {
		r.Audit.Print(w)
	} else {
		fmt.Fprintf(w, "  not run\n")
	}
	printFirst(w, "lost acknowledged writes", r.Lost)
	printFirst(w, "buyer views disagreeing with the ledger at rest", r.Stale)
	printFirst(w, "exchanges breaking the OpenAPI document", r.Contract)
	printFirst(w, "panics / data races in process logs", r.Panics)
	if m := r.MissingFaults(); len(m) > 0 {
		fmt.Fprintf(w, "fault kinds never injected: %s\n", strings.Join(m, ", "))
	}
	verdict := "PASS"
	if !r.Pass() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "\nviolations: %d — %s\n", r.Violations(), verdict)
}

// printFirst prints a count and the first ten of a list of findings.
func printFirst(w io.Writer, title string, items []string) {
	fmt.Fprintf(w, "%s: %d\n", title, len(items))
	for i, l := range items {
		if i == 10 {
			fmt.Fprintf(w, "  … %d more\n", len(items)-10)
			break
		}
		fmt.Fprintf(w, "  %s\n", l)
	}
}

func sortedStrings[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// kv renders a count per name, sorted by name.
func kv[N int | int64](m map[string]N) string {
	var parts []string
	for _, k := range sortedStrings(m) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
