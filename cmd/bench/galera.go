package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"orderflow/tests/chaos"

	"github.com/redis/go-redis/v9"
)

// GaleraResult is the opt-in galera phase (make bench-ha): the closed loop
// again, on a private 3-node Galera cluster, the API on node 1 and the
// workers on node 2, so every order is paid on one node and activated
// through another — with and without wsrep_sync_wait=1 on the workers.
type GaleraResult struct {
	SyncWait   *LoadResult `json:"sync_wait_1"`
	NoSyncWait *LoadResult `json:"sync_wait_0,omitempty"`
	StartS     float64     `json:"cluster_start_s"`
}

// galeraPhase is the one phase not in the default list: it needs galera-4
// and mariadb-backup (scripts/ha-packages.sh).
const galeraPhase = "galera"

type benchPrinter struct{}

func (benchPrinter) Printf(format string, args ...any) { logf(format, args...) }

// phaseGalera starts the cluster, migrates the bench database on it and
// runs the closed loop once per worker setting.
func phaseGalera(ctx context.Context, e *benchEnv, r *Report) error {
	p := e.params
	dir, err := os.MkdirTemp("", "orderflow-bench-galera-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := dir
	if d, err := os.MkdirTemp("/dev/shm", "orderflow-bench-galera-"); err == nil {
		data = d // in memory, as the chaos suite's servers are
		defer os.RemoveAll(d)
	}
	logf("phase galera: starting a 3-node cluster (logs in %s)", dir)
	t := time.Now()
	g, err := chaos.StartGalera(ctx, data, dir, 3, benchPrinter{})
	if g != nil {
		defer g.Stop()
	}
	if err != nil {
		return err
	}
	r.Galera = &GaleraResult{StartS: round1(time.Since(t).Seconds())}
	ge := *e
	ge.params.MySQL = fmt.Sprintf("root@tcp(%s)/", g.Addr(0))
	ge.fx = nil
	if ge.dsn, err = dbDSN(ge.params.MySQL, p.Database); err != nil {
		return err
	}
	if err := prepareDatabase(ctx, &ge, p.Database); err != nil {
		return err
	}
	if ge.db, err = openLedger(ctx, ge.params.MySQL, p.Database, 8); err != nil {
		return err
	}
	defer ge.db.Close()
	// A Redis DB of its own: the single node's stock counters for the same
	// product IDs stay where the end-of-run audit compares them.
	res, err := reserveRedisDB(ctx, p.RedisAddr, p.RedisDB)
	if err != nil {
		return err
	}
	defer res.release(context.WithoutCancel(ctx), p.RedisAddr)
	ge.redisDB = res.db
	ge.rdb = redis.NewClient(&redis.Options{Addr: p.RedisAddr, DB: res.db})
	defer ge.rdb.Close()
	nodes := func(order ...int) []string {
		var out []string
		for _, i := range order {
			out = append(out, g.Addr(i))
		}
		return out
	}
	apiDSN := chaos.ListDSN(nodes(0, 1, 2), p.Database, "")
	for _, syncWait := range []bool{true, false} {
		extra, label := "", "galera-nosync"
		if syncWait {
			extra, label = "&wsrep_sync_wait=1", "galera-sync"
		}
		sc := stackConfig{label: label, mysqlDSN: chaos.ListDSN(nodes(1, 2, 0), p.Database, extra), redisAddr: p.RedisAddr,
			apiDSN: apiDSN, apiRedis: p.RedisAddr}
		s, done, err := startWithSim(ctx, &ge, sc)
		if err != nil {
			return err
		}
		res, err := func() (*LoadResult, error) {
			defer done()
			defer func() { _ = s.stop() }()
			need := int(1500*(p.Warmup.D()+p.Steady.D()).Seconds()) + 2000
			if err := ensureFixtures(ctx, &ge, s, need, false); err != nil {
				return nil, err
			}
			return runClosedLoop(ctx, &ge, ge.client(s))
		}()
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		logf("%s closed loop: %.0f orders/s, paid→finished p50 %.1f ms p99 %.1f ms", label, res.OrdersPerS, res.PaidToFinished.P50, res.PaidToFinished.P99)
		if syncWait {
			r.Galera.SyncWait = res
		} else {
			r.Galera.NoSyncWait = res
		}
	}
	return nil
}
