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
//  8. distance (run after phase 2): phases 1 and 2 again with MariaDB and
//     Redis 1 ms (-rtt) away through the bench's own delaying proxies;
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
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"orderflow/internal/jsonhttp"
	"orderflow/internal/paysim"

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
	c := &apiClient{api: jsonhttp.Client{Base: s.apiURL, HTTP: e.hc}, admin: e.adminToken, secret: e.paySecret}
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
	if p.runs("floor") || p.runs("distance") {
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
	if p.runs("floor") || p.runs("distance") {
		if rig, err = newFloorRig(ctx, p, p.MySQL, p.Database+"_floor"); err != nil {
			fail("floor", err)
		} else {
			defer rig.close()
		}
	}
	if p.runs("floor") && rig != nil {
		logf("phase 1: raw floor %v connections", p.FloorConns)
		if r.Floor, err = rig.run(ctx, logf); err != nil {
			fail("floor", err)
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
	if p.runs("distance") {
		if err := phaseDistance(ctx, e, r, rig, expected); err != nil {
			fail("distance", err)
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
