package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"orderflow/internal/domain/statement"
	"orderflow/internal/infra/pay"
	"orderflow/internal/paysim"
	"orderflow/model"
	"orderflow/svc"
)

// StatementsRow is one day of the statements bench (`make bench-statements`).
type StatementsRow struct {
	Lines      int              `json:"lines"`
	LoadS      float64          `json:"ledger_load_s"` // writing the ledger's orders and payments (not timed below)
	ElapsedS   float64          `json:"elapsed_s"`     // Open + Run of the day's statement run
	LinesPerS  float64          `json:"lines_per_s"`
	Matched    int64            `json:"matched"`
	Breaks     map[string]int64 `json:"breaks"`
	PeakRSSMB  float64          `json:"peak_rss_mb"`  // VmHWM of this process over the run (the simulator serves in it too)
	HeapPeakMB float64          `json:"heap_peak_mb"` // live Go heap objects, sampled every 10 ms
	Err        string           `json:"error,omitempty"`
}

// statementsBench runs `make bench-statements` (issue 33): for each size in
// p.Statements, a fresh database whose ledger holds a day of paid orders,
// the real simulator serving that day's statement of n lines with breaks
// planted, and one statement run through statement.Service — Open, then
// Run, in this process. It prints a row per day and returns 1 when a count
// differs from what was planted or a day takes longer than the limit.
func statementsBench(p Params) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := reserveRedisDB(ctx, p.RedisAddr, p.RedisDB)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer res.release(context.Background(), p.RedisAddr)
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
	var rows []StatementsRow
	for _, n := range p.Statements {
		logf("statements: a day of %d lines", n)
		row, err := statementDay(ctx, p, res.db, newStatementPlan(day, n))
		if err == nil && row.ElapsedS > p.StatementsLimit.D().Seconds() {
			err = fmt.Errorf("%.1f s is over the limit of %s", row.ElapsedS, p.StatementsLimit.D())
		}
		if err != nil {
			row.Err = err.Error()
			logf("statements: %d lines: %v", n, err)
		}
		rows = append(rows, row)
	}
	printStatements(os.Stdout, day.Format(time.DateOnly), p, rows)
	for _, r := range rows {
		if r.Err != "" {
			return 1
		}
	}
	return 0
}

// statementDay measures one day: the ledger loaded, the simulator serving,
// the run timed, its counts checked against the plan.
func statementDay(ctx context.Context, p Params, redisDB int, plan statementPlan) (StatementsRow, error) {
	row := StatementsRow{Lines: plan.n}
	name := p.Database + "_statements"
	dsn, err := dbDSN(p.MySQL, name)
	if err != nil {
		return row, err
	}
	if err := migrateFresh(ctx, p.MySQL, name, dsn); err != nil {
		return row, err
	}
	db, err := openLedger(ctx, p.MySQL, name, 2)
	if err != nil {
		return row, err
	}
	defer db.Close()
	t := time.Now()
	if err := loadLedger(ctx, db, plan); err != nil {
		return row, err
	}
	row.LoadS = round1(time.Since(t).Seconds())

	secret := "bench-pay-" + randHex(12)
	sim := paysim.New(paysim.Config{Secret: secret, NotifyBaseURL: "http://127.0.0.1:1"})
	defer sim.Close()
	if err := sim.Synthesize(plan.day, plan.n, "S"); err != nil {
		return row, err
	}
	for _, s := range plan.altered {
		sim.StatementAlter(synthNo(s), synthAmount(s)+1000)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return row, err
	}
	srv := svc.Defaults().HTTPServer(sim.Handler())
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	cfg := svc.Defaults()
	cfg.MySQLDSN, cfg.RedisAddr, cfg.RedisDB = dsn, p.RedisAddr, redisDB
	cfg.PayProviders, cfg.PayURL, cfg.PaySecret = pay.NamePaysim, "http://"+ln.Addr().String(), secret
	cfg.AdminToken, cfg.LogLevel = "bench-admin-"+randHex(12), "error"
	if err := cfg.Validate(); err != nil {
		return row, fmt.Errorf("config: %w", err)
	}
	log, err := svc.NewLogger(cfg)
	if err != nil {
		return row, err
	}
	sc, err := svc.New(cfg, log)
	if err != nil {
		return row, err
	}
	defer sc.Close()
	uc := sc.NewUseCases()

	if p.Profile != "" {
		done, err := cpuProfile(filepath.Join(p.Profile, fmt.Sprintf("statements-%d.pprof", plan.n)))
		if err != nil {
			return row, err
		}
		defer done()
	}
	resetPeakRSS()
	heap := sampleHeap()
	t = time.Now()
	run, err := uc.Statements.Open(ctx, pay.NamePaysim, plan.day)
	if err == nil {
		err = uc.Statements.Run(ctx, run.ID, 0, 0)
	}
	elapsed := time.Since(t)
	row.HeapPeakMB = round1(float64(heap()) / (1 << 20))
	if rss, rerr := peakRSSMB(os.Getpid()); rerr == nil {
		row.PeakRSSMB = round1(rss)
	}
	if err != nil {
		return row, err
	}
	row.ElapsedS = round2(elapsed.Seconds())
	row.LinesPerS = round1(float64(plan.n) / elapsed.Seconds())
	return row, checkRun(ctx, uc.Statements, run.ID, plan, &row)
}

// checkRun compares the finished run with the plan.
func checkRun(ctx context.Context, s *statement.Service, runID int64, plan statementPlan, row *StatementsRow) error {
	v, err := s.Get(ctx, runID)
	if err != nil {
		return err
	}
	row.Matched, row.Breaks = v.Run.Matched, v.Breaks
	wantBreaks, wantMatched := plan.want()
	var errs []error
	if v.Run.Status != model.StatementDone {
		errs = append(errs, fmt.Errorf("run %s: %s", v.Run.Status, v.Run.Error))
	}
	if v.Run.ProviderLines != int64(plan.n) || v.Run.Matched != wantMatched {
		errs = append(errs, fmt.Errorf("lines %d matched %d, want %d and %d", v.Run.ProviderLines, v.Run.Matched, plan.n, wantMatched))
	}
	if !maps.Equal(v.Breaks, wantBreaks) {
		errs = append(errs, fmt.Errorf("breaks %v, want %v", v.Breaks, wantBreaks))
	}
	open, err := s.Breaks(ctx, string(model.BreakOpen), pay.NamePaysim)
	if err != nil {
		return err
	}
	noOrder := 0
	for _, b := range open {
		if b.Kind == statement.BreakUnknownPayment && strings.HasPrefix(b.Action, "not applied: no order") {
			noOrder++
		}
	}
	if noOrder != len(plan.unknown) {
		errs = append(errs, fmt.Errorf("%d unknown payments left open as \"no order\", want %d", noOrder, len(plan.unknown)))
	}
	return errors.Join(errs...)
}

// migrateFresh drops and recreates the database and migrates it.
func migrateFresh(ctx context.Context, server, name, dsn string) error {
	if err := recreateDatabase(ctx, server, name); err != nil {
		return err
	}
	gdb, err := model.Open(dsn, model.PoolConfig{MaxOpen: 2})
	if err != nil {
		return err
	}
	if sqlDB, err := gdb.DB(); err == nil {
		defer sqlDB.Close()
	}
	if _, err := model.Migrate(ctx, gdb); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	return nil
}

// resetPeakRSS returns what the heap no longer needs to the system and
// restarts the kernel's peak RSS (VmHWM) from the current RSS, so each day's
// peak is its own (writing 5 to clear_refs, Linux ≥ 4.0; where refused the
// peak is the process's since it started, which can only overstate).
func resetPeakRSS() {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		logf("statements: peak RSS not reset (%v): it is the process's since its start", err)
	}
}

// sampleHeap samples the live heap objects every 10 ms (runtime/metrics:
// no stop of the world) until the returned func is called, which answers
// the largest sample.
func sampleHeap() func() uint64 {
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				peak = max(peak, sample[0].Value.Uint64())
			}
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}

// cpuProfile writes this process's CPU profile to path until done.
func cpuProfile(path string) (done func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close(); logf("statements: CPU profile in %s", path) }, nil
}

// printStatements writes the table.
func printStatements(w io.Writer, day string, p Params, rows []StatementsRow) {
	fmt.Fprintf(w, "\nStatements (issue 33): paysim day %s, %d planted breaks of each kind; limit %s per day; %d CPUs, %s\n",
		day, plantEach, p.StatementsLimit.D(), runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "%9s %7s %9s %10s %9s %8s %8s %8s %9s %9s  %s\n", "lines", "load_s", "elapsed_s", "lines/s", "matched",
		"unknown", "missing", "amount", "rss_mb", "heap_mb", "result")
	for _, r := range rows {
		result := "ok"
		if r.Err != "" {
			result = "FAIL: " + r.Err
		}
		b := func(k string) int64 { return r.Breaks[k] }
		fmt.Fprintf(w, "%9d %7.1f %9.2f %10.0f %9d %8d %8d %8d %9.1f %9.1f  %s\n", r.Lines, r.LoadS, r.ElapsedS, r.LinesPerS, r.Matched,
			b(statement.BreakUnknownPayment), b(statement.BreakMissingPayment), b(statement.BreakAmountMismatch), r.PeakRSSMB, r.HeapPeakMB, result)
	}
	fmt.Fprintln(w, "unknown/missing/amount: unknown_payment, missing_payment, amount_mismatch breaks the run listed; rss_mb: peak RSS (VmHWM) of")
	fmt.Fprintln(w, "this process over the run, simulator included; heap_mb: peak Go heap objects, sampled every 10 ms")
}
