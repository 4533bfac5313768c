// Command bench measures orderflow on this machine against the floor of the
// machine itself, in one run (issue 8):
//
//  1. the raw floor: one order's ledger work as 4 plain-SQL transactions;
//  2. end to end: orders created through the API, paid by signed
//     notifications, activated by the worker(s) — the closed-loop maximum,
//     then an open loop at half of it;
//  3. a burst of orders expiring in the same second, closed by their tasks;
//  4. a 1,000-participant group settled at its deadline;
//  5. the API's and workers' peak RSS and CPU per 1,000 orders;
//  6. end-to-end ÷ floor;
//  7. growth: the closed loop again after 1,000,000 finished orders were
//     pre-loaded, and one sweep and one reconciliation pass over 100,000
//     pending orders;
//
// then a census of round trips per order through counting proxies, EXPLAIN
// of the hot statements, and an audit of the ledger (exit 1 on a violation).
// It uses its own databases (<db>, <db>_floor; dropped and recreated) and a
// reserved Redis DB number, builds the API and the worker once and runs them
// as child processes. `make bench` runs it with the defaults.
//
// With -statements it runs only the statements bench (statements.go, `make
// bench-statements`): a provider's statement day reconciled in-process.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"orderflow/internal/paysim"
	"orderflow/svc"

	"github.com/redis/go-redis/v9"
)

// benchEnv is what the phases share.
type benchEnv struct {
	params     Params
	dsn        string // the product's DSN for the bench database
	redisDB    int
	adminToken string
	paySecret  string
	paysimURL  string
	bins       binaries
	db         *sql.DB       // the bench's own pool on the bench database
	rdb        *redis.Client // the reserved Redis DB
	hc         *http.Client
	fx         *fixtures
	closeIDs   [2]int64 // order IDs (lo, hi] of the close burst
}

func (e *benchEnv) client(s *stack) *apiClient {
	c := &apiClient{base: s.apiURL, admin: e.adminToken, secret: e.paySecret, hc: e.hc}
	if e.params.Pay == "paysim" {
		c.sim = &paysim.Client{BaseURL: e.paysimURL, Secret: e.paySecret, HTTP: e.hc}
	}
	return c
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench %s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func main() {
	p, err := parseParams(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if len(p.Statements) > 0 {
		os.Exit(statementsBench(p))
	}
	os.Exit(bench(p))
}

// bench runs the bench, prints its report and returns the exit status:
// 1 when a phase failed or the ledger audit found a violation.
func bench(p Params) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := run(ctx, p)
	r.printTable(os.Stdout)
	if err := r.writeJSON(os.Stdout, p.JSONPath); err != nil {
		fmt.Fprintln(os.Stderr, "bench: write JSON:", err)
		return 1
	}
	if len(r.Errors) > 0 || r.Ledger == nil || len(r.Ledger.Violations) > 0 {
		return 1
	}
	return 0
}

// run executes every phase; a failed phase is recorded and the others go on
// where they can.
func run(ctx context.Context, p Params) *Report {
	start := time.Now()
	r := &Report{StartedAt: start.UTC().Truncate(time.Second), Params: p, Errors: []string{},
		Machine: Machine{CPUs: runtime.NumCPU(), LoadAtStart: loadAvg(), Go: runtime.Version(), Git: gitState()}}
	defer func() {
		r.Machine.LoadAtEnd = loadAvg()
		r.RuntimeS = round1(time.Since(start).Seconds())
		r.targets()
	}()
	fail := func(phase string, err error) {
		logf("%s: %v", phase, err)
		r.Errors = append(r.Errors, phase+": "+err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, p.Deadline.D())
	defer cancel()

	e := &benchEnv{params: p, adminToken: "bench-admin-" + randHex(12), paySecret: "bench-pay-" + randHex(12), hc: newHTTPClient()}
	res, err := reserveRedisDB(ctx, p.RedisAddr, p.RedisDB)
	if err != nil {
		fail("setup", err)
		return r
	}
	defer res.release(context.Background(), p.RedisAddr)
	e.redisDB, r.Machine.RedisDB = res.db, res.db
	e.rdb = redis.NewClient(&redis.Options{Addr: p.RedisAddr, DB: res.db})
	defer e.rdb.Close()

	logf("building ./api and ./queue")
	if e.bins, err = buildBinaries(ctx, p.WorkDir); err != nil {
		fail("setup", err)
		return r
	}
	if e.dsn, err = dbDSN(p.MySQL, p.Database); err != nil {
		fail("setup", err)
		return r
	}
	dbs := []string{p.Database}
	if p.runs("floor") {
		dbs = append(dbs, p.Database+"_floor")
	}
	for _, name := range dbs {
		if err := prepareDatabase(ctx, e, name); err != nil {
			fail("setup", err)
			return r
		}
	}
	if e.db, err = openLedger(ctx, p.MySQL, p.Database, 8); err != nil {
		fail("setup", err)
		return r
	}
	defer e.db.Close()
	r.Machine.MariaDB = serverVersion(ctx, e.db)

	var rig *floorRig
	if p.runs("floor") {
		logf("phase 1: raw floor %v connections", p.FloorConns)
		if rig, err = newFloorRig(ctx, p, p.MySQL, p.Database+"_floor"); err != nil {
			fail("floor", err)
		} else {
			defer rig.close()
			if r.Floor, err = rig.run(ctx, logf); err != nil {
				fail("floor", err)
			}
		}
		for i := range r.Floor {
			if r.FloorBest == nil || r.Floor[i].OrdersPerS > r.FloorBest.OrdersPerS {
				r.FloorBest = &r.Floor[i]
			}
		}
	}
	expected := 2000.0
	if r.FloorBest != nil {
		expected = max(r.FloorBest.OrdersPerS, 500)
	}
	if p.runs("e2e") {
		e2eErr := phaseE2E(ctx, e, r, expected)
		if e2eErr != nil {
			fail("end-to-end", e2eErr)
		}
		// The floor again, at the best pool size, right after: on a shared
		// machine the load drifts, and the ratio uses both measurements.
		if rig != nil && r.FloorBest != nil && e2eErr == nil {
			logf("floor again at %d connections (drift check)", r.FloorBest.Conns)
			if pt, err := rig.point(ctx, r.FloorBest.Conns); err != nil {
				fail("floor after", err)
			} else {
				r.FloorAfter = &pt
				logf("floor: %d connections: %.0f orders/s, p50 %.1f ms", pt.Conns, pt.OrdersPerS, pt.P50Ms)
			}
		}
	}
	if p.runs(galeraPhase) {
		if err := phaseGalera(ctx, e, r); err != nil {
			fail("galera", err)
		}
	}
	if p.runs("close") || p.runs("group") {
		if err := phaseCloseAndGroup(ctx, e, r); err != nil {
			fail("close/group", err)
		}
	}
	if p.runs("growth") {
		if err := phaseGrowth(ctx, e, r, expected); err != nil {
			fail("growth", err)
		}
	}
	if p.runs("census") {
		logf("census: %d orders through counting proxies", p.Census)
		if err := ensureFixtures(ctx, e, nil, p.Census+100, false); err == nil {
			if r.Census, err = runCensus(ctx, e); err != nil {
				fail("census", err)
			}
		} else {
			fail("census", err)
		}
	}
	// The audit runs even when the time budget ran out: a slow run must
	// still say whether it lost or doubled anything.
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer acancel()
	if r.Plans, err = explainHot(actx, e.db); err != nil {
		fail("plans", err)
	}
	if r.Ledger, err = auditLedger(actx, e); err != nil {
		fail("ledger audit", err)
	}
	if r.E2E != nil && r.E2E.Closed != nil && r.FloorBest != nil && r.FloorBest.OrdersPerS > 0 {
		r.FloorForRatio = r.FloorBest.OrdersPerS
		if r.FloorAfter != nil {
			r.FloorForRatio = round1((r.FloorBest.OrdersPerS + r.FloorAfter.OrdersPerS) / 2)
		}
		r.Ratio = round2(r.E2E.Closed.OrdersPerS / r.FloorForRatio)
		floorCPU := r.FloorBest.MariaDBCPUms + r.FloorBest.BenchCPUms
		for _, res := range r.Resources {
			if res.Process == productCPUTotal && res.CPUPer1k > 0 {
				r.CPURatio = round2(floorCPU / res.CPUPer1k)
			}
		}
	}
	return r
}

// prepareDatabase drops and recreates one of the bench's databases and
// applies the product's migrations with the product's own `api migrate`.
func prepareDatabase(ctx context.Context, e *benchEnv, name string) error {
	if err := recreateDatabase(ctx, e.params.MySQL, name); err != nil {
		return err
	}
	dsn, err := dbDSN(e.params.MySQL, name)
	if err != nil {
		return err
	}
	return runOnce(ctx, e.bins.api, []string{"migrate"}, []string{
		"ORDERFLOW_CONFIG=/nonexistent", "ORDERFLOW_MYSQL_DSN=" + dsn, "ORDERFLOW_REDIS_ADDR=" + e.params.RedisAddr,
		fmt.Sprintf("ORDERFLOW_REDIS_DB=%d", e.redisDB), "ORDERFLOW_ADMIN_TOKEN=" + e.adminToken, "ORDERFLOW_PAY_SECRET=" + e.paySecret,
	})
}

// startWithSim starts a stack and an in-process payment simulator that
// notifies its API (ORDERFLOW_PAY_URL points the product at it).
func startWithSim(ctx context.Context, e *benchEnv, sc stackConfig) (*stack, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	e.paysimURL = "http://" + ln.Addr().String()
	sim := &simHandler{}
	srv := svc.Defaults().HTTPServer(sim)
	go func() { _ = srv.Serve(ln) }()
	s, err := startStack(ctx, e.bins, e, sc)
	done := func() { srv.Close(); sim.close() }
	if err != nil {
		if s != nil {
			_ = s.stop()
		}
		done()
		return nil, nil, err
	}
	sim.set(paysim.New(paysim.Config{Secret: e.paySecret, NotifyBaseURL: s.apiURL}))
	return s, done, nil
}

// ensureFixtures creates the buyers and products on first use and tops the
// keys up to cover `need` more orders: spread over the order phases'
// products, or (all) over every product.
func ensureFixtures(ctx context.Context, e *benchEnv, s *stack, need int, all bool) error {
	own := s == nil
	if own {
		var done func()
		var err error
		if s, done, err = startWithSim(ctx, e, stackConfig{label: "fixtures", mysqlDSN: e.dsn, redisAddr: e.params.RedisAddr}); err != nil {
			return err
		}
		defer done()
	}
	c := e.client(s)
	var err error
	if e.fx == nil {
		if e.fx, err = createFixtures(ctx, c, e.params.Users, e.params.Products); err == nil {
			logf("fixtures: %d buyers, products %v (order phases use %d)", len(e.fx.tokens), e.fx.products, e.fx.used)
		}
	}
	if err == nil {
		products := e.fx.products[:e.fx.used]
		if all {
			products = e.fx.products
		}
		err = e.fx.topUp(ctx, c, e.db, products, (need+len(products)-1)/len(products)+10)
	}
	if own {
		if serr := s.stop(); err == nil {
			err = serr
		}
	}
	return err
}

// productCPUTotal names the sum of the product's processes' CPU.
const productCPUTotal = "api + queue + mariadbd + redis"

// phaseE2E is phase 2 and the resource accounting of phase 5.
func phaseE2E(ctx context.Context, e *benchEnv, r *Report, expected float64) error {
	p := e.params
	logf("phase 2: end to end with %d worker(s)", p.Workers)
	s, done, err := startWithSim(ctx, e, stackConfig{label: "e2e", mysqlDSN: e.dsn, redisAddr: p.RedisAddr})
	if err != nil {
		return err
	}
	defer done()
	stopped := false
	defer func() {
		if !stopped {
			_ = s.stop()
		}
	}()
	// Keys for the closed loop at up to 1.2× the floor, the half load, and margin.
	need := int(1.2*expected*(p.Warmup.D()+p.Steady.D()).Seconds()+0.6*expected*p.HalfTime.D().Seconds()) + 2000
	t := time.Now()
	if err := ensureFixtures(ctx, e, s, need, false); err != nil {
		return err
	}
	logf("fixtures ready in %.1fs (%d keys)", time.Since(t).Seconds(), e.fx.keys)
	quiesce(ctx, e.db, "the closed loop")
	c := e.client(s)
	w := watched{"api": {s.api.Pid()}, "bench": {os.Getpid()}}
	if addr, err := mysqlHostPort(p.MySQL); err == nil {
		if pid := pidListening(portOf(addr)); pid > 0 {
			w["mariadbd"] = []int{pid}
		}
	}
	if pid := pidListening(portOf(p.RedisAddr)); pid > 0 {
		w["redis-server"] = []int{pid}
	}
	for _, wk := range s.workers {
		w["queue"] = append(w["queue"], wk.Pid())
	}
	cpu0 := w.snapshot()
	r.E2E = &E2EReport{Workers: p.Workers, Pay: p.Pay}
	if p.Profile != "" {
		wait := captureProfiles(ctx, e, s, p.Profile, time.Now().Add(p.Warmup.D()), p.Steady.D())
		defer wait()
	}
	b0 := scrapeBatches(ctx, e, s)
	box := machineWindow()
	if r.E2E.Closed, err = runClosedLoop(ctx, e, c); err != nil {
		return fmt.Errorf("closed loop: %w", err)
	}
	r.E2E.Closed.Machine = box()
	b1 := scrapeBatches(ctx, e, s)
	r.E2E.Closed.Batches = batchSizes(b0, b1)
	logf("closed loop: %.0f orders/s, paid→finished p50 %.1f ms p99 %.1f ms", r.E2E.Closed.OrdersPerS, r.E2E.Closed.PaidToFinished.P50, r.E2E.Closed.PaidToFinished.P99)
	orders := r.E2E.Closed.Orders
	if r.E2E.Closed.OrdersPerS > 0 && p.HalfTime > 0 {
		rate := r.E2E.Closed.OrdersPerS / 2
		logf("half load: open loop at %.0f orders/s for %s", rate, p.HalfTime.D())
		box := machineWindow()
		if r.E2E.Half, err = runOpenLoop(ctx, e, c, rate, p.HalfTime.D()); err != nil {
			return fmt.Errorf("half load: %w", err)
		}
		r.E2E.Half.Machine = box()
		r.E2E.Half.Batches = batchSizes(b1, scrapeBatches(ctx, e, s))
		orders += r.E2E.Half.Orders
		logf("half load: p50 %.1f ms p99 %.1f ms", r.E2E.Half.PaidToFinished.P50, r.E2E.Half.PaidToFinished.P99)
	}
	cpu1 := w.snapshot()
	for _, name := range []string{"api", "queue", "bench", "mariadbd", "redis-server"} {
		pids := w[name]
		if len(pids) == 0 {
			continue
		}
		res := Resource{Process: name, CPUSeconds: round2(w.used(name, cpu0, cpu1))}
		if orders > 0 {
			res.CPUPer1k = round2(res.CPUSeconds / float64(orders) * 1000)
		}
		switch name {
		case "api", "queue":
			for _, pid := range pids {
				if rss, err := peakRSSMB(pid); err == nil {
					res.PeakRSSMB = max(res.PeakRSSMB, round1(rss))
				}
			}
			if name == "queue" && len(pids) > 1 {
				res.Note = fmt.Sprintf("%d processes, CPU summed, RSS the largest", len(pids))
			}
		case "bench":
			res.Note = "the load generator itself"
		default:
			res.Note = "shared server: includes other clients"
		}
		r.Resources = append(r.Resources, res)
	}
	var total Resource
	for _, res := range r.Resources {
		if res.Process != "bench" {
			total.CPUSeconds += res.CPUSeconds
			total.CPUPer1k += res.CPUPer1k
		}
	}
	r.Resources = append(r.Resources, Resource{Process: productCPUTotal, CPUSeconds: round2(total.CPUSeconds), CPUPer1k: round2(total.CPUPer1k),
		Note: "compare the floor's MariaDB + bench CPU per order"})
	stopped = true
	return s.stop()
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
			defer captureProfiles(ctx, e, s, dir, time.Now().Add(p.OrderTTL.D()+time.Second), 2*time.Second)()
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

// gitState names the code measured: HEAD, plus the tracked files that differ
// from it (a number means nothing without the code it came from).
func gitState() string {
	head, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	out := strings.TrimSpace(string(head))
	if diff, err := exec.Command("git", "diff", "--name-only", "HEAD").Output(); err == nil {
		if files := strings.Fields(string(diff)); len(files) > 0 {
			out += " + uncommitted changes in " + strings.Join(files, ", ")
		}
	}
	return out
}
