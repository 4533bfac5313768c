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
	"os"
	"path/filepath"
	"sync"
	"time"

	"orderflow/internal/audit"
	"orderflow/internal/testenv/child"
	"orderflow/model"
)

// Binaries are the commands a run starts as child processes.
var Binaries = []string{"api", "queue", "cmd/paysim"}

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
	err := query(ctx, db, func(rows *sql.Rows) error {
		var o OutcomeRow
		var st model.OrderStatus
		if err := rows.Scan(&o.Kind, &st, &o.N); err != nil {
			return err
		}
		o.Status = st.String()
		rep.Outcomes = append(rep.Outcomes, o)
		return nil
	}, `SELECT kind, status, COUNT(*) FROM orders GROUP BY kind, status ORDER BY kind, status`)
	if err != nil {
		return err
	}
	if rep.Payments, err = keyed[int64](ctx, db, `SELECT disposition, COUNT(*) FROM payments GROUP BY disposition`); err != nil {
		return err
	}
	if rep.Refunds, err = keyed[int64](ctx, db, `SELECT status, COUNT(*) FROM refunds GROUP BY status`); err != nil {
		return err
	}
	rep.Groups, err = keyed[int64](ctx, db, "SELECT status, COUNT(*) FROM `groups` GROUP BY status")
	return err
}
